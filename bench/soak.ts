// npm run soak: the chaos soak (bench/soak/run.ts; the faults in chaos.ts, the checks in invariants.ts). SOAK_SECONDS (600), SOAK_LOOPS (6),
// SOAK_CHAOS_EVERY (10 s between faults), SOAK_RESULTS (bench/RESULTS-soak.md). Exit 1 when an
// invariant failed.
import fs from 'node:fs/promises';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { soakTable } from './soak/report.ts';
import { runSoak } from './soak/run.ts';

const seconds = Number(process.env.SOAK_SECONDS ?? 600);
const results = process.env.SOAK_RESULTS ?? fileURLToPath(new URL('./RESULTS-soak.md', import.meta.url));
const started = new Date();
const report = await runSoak({
  seconds,
  loops: Number(process.env.SOAK_LOOPS ?? 6),
  chaosEverySeconds: Number(process.env.SOAK_CHAOS_EVERY ?? 10),
  log: (line) => process.stderr.write(`${new Date().toISOString()} ${line}\n`),
});
const table = soakTable(report);
process.stdout.write(`${table}\n`);
await fs.writeFile(
  results,
  `# Chaos soak\n\n\`npm run soak\` (SOAK_SECONDS=${seconds}), ${started.toISOString()}, on this machine (${os.cpus().length} vCPU, Node ${process.version}).\n` +
    'Two `adforge serve` and two `adforge worker` processes on one embedded PostgreSQL (supervised by the soak), local storage; fakes for fal, the ad source, media hosts and a webhook receiver behind fault-injecting proxies.\n\n' +
    `${table}\n`,
);
process.exit(report.failed ? 1 : 0);
