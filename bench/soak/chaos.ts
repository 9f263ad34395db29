import fs from 'node:fs/promises';
import type { ChaosProxy, ProxyMode } from './chaos-proxy.ts';
import { onDatabase, type Nodes } from './cluster.ts';

/** The soak's faults, injected in this order, round and round. */
export const FAULTS = [
  'worker SIGKILL',
  'provider fails (500)',
  'API node restart (SIGTERM, drained)',
  'webhook receiver fails (500)',
  'PostgreSQL SIGKILL (restarted by its supervisor)',
  'provider slow (4 s)',
  'webhook receiver slow (4 s)',
  'backends terminated (pg_terminate_backend)',
  'provider vanishes',
  'API node SIGKILL and restart',
  'webhook receiver vanishes',
] as const;

export async function runChaos(o: {
  until: number;
  everyMs: number;
  nodes: Nodes;
  falProxy: ChaosProxy;
  hookProxy: ChaosProxy;
  pidFile: string;
  databaseUrl: string;
  faults: Map<string, number>;
  outages: Array<[number, number | undefined]>;
  log: (line: string) => void;
}): Promise<void> {
  let n = 0;
  const broken = async (proxy: ChaosProxy, mode: ProxyMode) => {
    proxy.setMode(mode);
    await sleep(Math.min(6000, o.everyMs - 500));
    proxy.setMode('ok');
  };
  // Faults on a fixed beat from the start (one that outlasts the beat delays only the next), so a
  // short soak still gets through the whole list.
  const start = Date.now();
  while (start + (n + 1) * o.everyMs < o.until) {
    await sleep(Math.max(0, start + (n + 1) * o.everyMs - Date.now()));
    const fault = FAULTS[n % FAULTS.length]!;
    const pickFrom = <T,>(list: T[]) => list[Math.floor(n / FAULTS.length) % list.length]!;
    n++;
    o.faults.set(fault, (o.faults.get(fault) ?? 0) + 1);
    o.log(`chaos: ${fault}`);
    try {
      switch (fault) {
        case 'worker SIGKILL': {
          const w = pickFrom(o.nodes.workers());
          await o.nodes.stop(w, 'SIGKILL');
          await sleep(1500);
          await o.nodes.start(w);
          break;
        }
        case 'API node restart (SIGTERM, drained)':
        case 'API node SIGKILL and restart': {
          const a = pickFrom(o.nodes.api());
          await o.nodes.stop(a, fault.startsWith('API node SIGKILL') ? 'SIGKILL' : 'SIGTERM');
          await o.nodes.start(a);
          break;
        }
        case 'PostgreSQL SIGKILL (restarted by its supervisor)': {
          const pid = Number((await fs.readFile(o.pidFile, 'utf8')).split('\n')[0]);
          const outage: [number, number | undefined] = [Date.now(), undefined];
          o.outages.push(outage);
          process.kill(pid, 'SIGKILL');
          outage[1] = await databaseBack(o.databaseUrl);
          break;
        }
        case 'backends terminated (pg_terminate_backend)': {
          const outage: [number, number | undefined] = [Date.now(), undefined];
          o.outages.push(outage);
          const ended = await onDatabase(o.databaseUrl, (c) =>
            c.query(`select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'`),
          );
          outage[1] = Date.now() + 2000;
          if (!ended) throw new Error('the database could not be reached');
          break;
        }
        case 'provider fails (500)':
          await broken(o.falProxy, 'fail');
          break;
        case 'provider slow (4 s)':
          await broken(o.falProxy, 'slow');
          break;
        case 'provider vanishes':
          await broken(o.falProxy, 'vanish');
          break;
        case 'webhook receiver fails (500)':
          await broken(o.hookProxy, 'fail');
          break;
        case 'webhook receiver slow (4 s)':
          await broken(o.hookProxy, 'slow');
          break;
        case 'webhook receiver vanishes':
          await broken(o.hookProxy, 'vanish');
          break;
      }
    } catch (e) {
      o.log(`chaos: ${fault} went wrong: ${(e as Error).message}`);
    }
  }
}

/** When the database answers again. */
async function databaseBack(url: string): Promise<number> {
  while (!(await onDatabase(url, (c) => c.query('select 1'), 1000))) await sleep(200);
  return Date.now();
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
