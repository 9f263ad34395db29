import fs from 'node:fs/promises';
import path from 'node:path';
import { runCli, stdoutJson } from '../../test/support/cli-run.ts';
import { createNodes } from '../soak/cluster.ts';

/**
 * One `adforge serve` on `port` and ONE `adforge worker`, each a process of its own (so each one's
 * CPU and memory can be read apart), sharing `env`, and a team with `credits` and its key made
 * through the admin CLI. `stop` stops both processes.
 */
export async function startApiAndWorker(env: Record<string, string>, port: number, team: { name: string; credits: number }) {
  const nodes = createNodes(env);
  nodes.add('api', 'serve', port);
  nodes.add('worker', 'worker');
  try {
    await nodes.start(nodes.api()[0]!);
    await nodes.start(nodes.workers()[0]!);
    const ca = await fs.readFile(path.join(env.DATA_DIR!, 'tls', 'self-signed-cert.pem'), 'utf8');
    const admin = { DATABASE_URL: env.DATABASE_URL, DATA_DIR: env.DATA_DIR, LOG_LEVEL: 'silent' };
    const made = stdoutJson(await runCli(['team', 'create', '--name', team.name, '--tier', 'pro', '--credits', String(team.credits), '--json'], admin, { timeoutMs: 60_000 }));
    const key = stdoutJson(await runCli(['key', 'create', '--team', made.id, '--json'], admin, { timeoutMs: 60_000 }));
    return {
      api: nodes.api()[0]!.proc!,
      worker: nodes.workers()[0]!.proc!,
      baseUrl: `https://127.0.0.1:${port}`,
      ca,
      key: key.key as string,
      stop: () => nodes.stopAll(),
    };
  } catch (e) {
    await nodes.stopAll();
    throw e;
  }
}
