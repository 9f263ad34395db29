import { describe, expect, it } from 'vitest';
import { FAULTS } from '../../bench/soak/chaos.ts';
import { INVARIANTS } from '../../bench/soak/invariants.ts';
import { soakTable } from '../../bench/soak/report.ts';
import { runSoak } from '../../bench/soak/run.ts';

// The 90-second version of `npm run soak` (bench/soak): two API processes and two workers on one
// PostgreSQL under a mixed load while every fault of the list is injected at least once.
const SECONDS = Number(process.env.SOAK_TEST_SECONDS ?? 90);

describe('the chaos soak, short', () => {
  it(
    `holds every invariant for ${SECONDS} s while workers, API nodes, PostgreSQL, the provider and the webhook receiver fail`,
    async () => {
      const lines: string[] = [];
      const report = await runSoak({ seconds: SECONDS, loops: 4, chaosEverySeconds: 7, log: (l) => lines.push(`${new Date().toISOString()} ${l}`) });
      const table = soakTable(report);
      // What happened is the first thing to read when this fails.
      const context = `${table}\n\n${lines.slice(-60).join('\n')}`;
      console.log(`${table}\n\n${lines.join('\n')}`);

      for (const fault of FAULTS) expect(report.faults.get(fault) ?? 0, `${fault} injected\n${context}`).toBeGreaterThan(0);
      for (const name of INVARIANTS) {
        const t = report.checks.get(name)!;
        expect(t.failures, `${name}\n${context}`).toEqual([]);
        expect(t.passed, `${name} checked\n${context}`).toBeGreaterThan(3);
      }
      expect(report.campaign.finished, context).toBe(true);
      expect(report.failed, context).toBe(false);
      // A load that did real work: creates accepted of every operation, voiceovers, replays checked.
      const kinds = new Set([...report.load.accepted.values()].map((a) => a.kind));
      expect(kinds.size, context).toBeGreaterThanOrEqual(6);
      expect(report.load.voiceovers, context).toBeGreaterThan(0);
      expect(report.load.replays.same, context).toBeGreaterThan(0);
    },
    // The drain may wait out the soak's generation deadline (240 s) when a backlog stalls.
    (SECONDS + 700) * 1000,
  );
});
