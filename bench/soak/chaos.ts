import fs from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ChaosProxy, ProxyMode } from './chaos-proxy.ts';
import { onDatabase, type Nodes } from './cluster.ts';

/** [start, end] of a time the database was made unavailable (end undefined while it lasts). */
export type Outage = [start: number, end: number | undefined];

type Fault =
  | { kind: 'worker killed' }
  | { kind: 'API node restarted'; signal: NodeJS.Signals }
  | { kind: 'postmaster killed' }
  | { kind: 'backends terminated' }
  | { kind: 'proxy'; proxy: 'provider' | 'receiver'; mode: ProxyMode };

/** The soak's faults, injected in this order, round and round. */
const FAULT_LIST = [
  ['worker SIGKILL', { kind: 'worker killed' }],
  ['provider fails (500)', { kind: 'proxy', proxy: 'provider', mode: 'fail' }],
  ['API node restart (SIGTERM, drained)', { kind: 'API node restarted', signal: 'SIGTERM' }],
  ['webhook receiver fails (500)', { kind: 'proxy', proxy: 'receiver', mode: 'fail' }],
  ['PostgreSQL SIGKILL (restarted by its supervisor)', { kind: 'postmaster killed' }],
  ['provider slow (4 s)', { kind: 'proxy', proxy: 'provider', mode: 'slow' }],
  ['webhook receiver slow (4 s)', { kind: 'proxy', proxy: 'receiver', mode: 'slow' }],
  ['backends terminated (pg_terminate_backend)', { kind: 'backends terminated' }],
  ['provider vanishes', { kind: 'proxy', proxy: 'provider', mode: 'vanish' }],
  ['API node SIGKILL and restart', { kind: 'API node restarted', signal: 'SIGKILL' }],
  ['webhook receiver vanishes', { kind: 'proxy', proxy: 'receiver', mode: 'vanish' }],
] as const satisfies ReadonlyArray<readonly [string, Fault]>;
export const FAULTS = FAULT_LIST.map(([name]) => name);

export async function runChaos(o: {
  until: number;
  everyMs: number;
  nodes: Nodes;
  falProxy: ChaosProxy;
  hookProxy: ChaosProxy;
  pidFile: string;
  databaseUrl: string;
  faults: Map<string, number>;
  outages: Outage[];
  log: (line: string) => void;
}): Promise<void> {
  let n = 0;
  // Faults on a fixed beat from the start (one that outlasts the beat delays only the next), so a
  // short soak still gets through the whole list.
  const start = Date.now();
  while (start + (n + 1) * o.everyMs < o.until) {
    await sleep(Math.max(0, start + (n + 1) * o.everyMs - Date.now()));
    const [name, fault] = FAULT_LIST[n % FAULT_LIST.length]!;
    // Each round takes the next worker or API node.
    const pickFrom = <T,>(list: T[]) => list[Math.floor(n / FAULT_LIST.length) % list.length]!;
    n++;
    o.faults.set(name, (o.faults.get(name) ?? 0) + 1);
    o.log(`chaos: ${name}`);
    try {
      switch (fault.kind) {
        case 'worker killed': {
          const w = pickFrom(o.nodes.workers());
          await o.nodes.stop(w, 'SIGKILL');
          await sleep(1500);
          await o.nodes.start(w);
          break;
        }
        case 'API node restarted': {
          const a = pickFrom(o.nodes.api());
          await o.nodes.stop(a, fault.signal);
          await o.nodes.start(a);
          break;
        }
        case 'postmaster killed': {
          const pid = Number((await fs.readFile(o.pidFile, 'utf8')).split('\n')[0]);
          const outage: Outage = [Date.now(), undefined];
          o.outages.push(outage);
          process.kill(pid, 'SIGKILL');
          outage[1] = await databaseBack(o.databaseUrl);
          break;
        }
        case 'backends terminated': {
          const outage: Outage = [Date.now(), undefined];
          o.outages.push(outage);
          const ended = await onDatabase(o.databaseUrl, (c) =>
            c.query(`select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'`),
          );
          outage[1] = Date.now() + 2000;
          if (!ended) throw new Error('the database could not be reached');
          break;
        }
        case 'proxy': {
          const proxy = fault.proxy === 'provider' ? o.falProxy : o.hookProxy;
          proxy.setMode(fault.mode);
          await sleep(Math.min(6000, o.everyMs - 500));
          proxy.setMode('ok');
          break;
        }
      }
    } catch (e) {
      o.log(`chaos: ${name} went wrong: ${(e as Error).message}`);
    }
  }
}

/** When the database answers again. */
async function databaseBack(url: string): Promise<number> {
  while (!(await onDatabase(url, (c) => c.query('select 1'), 1000))) await sleep(200);
  return Date.now();
}
