// CPU time read from /proc (Linux): a PostgreSQL cluster's processes, any process by pid, and the
// whole machine, so that a bench can tell its own CPU from what others on a shared box used.
import fs from 'node:fs/promises';

const CLK_TCK = 100; // Linux USER_HZ

type CpuByPid = Map<number, [total: number, sys: number]>;

/** One process's parent pid and CPU (ms: total, system), or undefined once it is gone. */
async function statOf(pid: number): Promise<{ ppid: number; total: number; sys: number } | undefined> {
  try {
    const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(f[1]), total: ((Number(f[11]) + Number(f[12])) * 1000) / CLK_TCK, sys: (Number(f[12]) * 1000) / CLK_TCK };
  } catch {
    return undefined;
  }
}

/** CPU (ms) of each process of OUR cluster: the postmaster and its children (other clusters may run on the box). */
export async function postgresCpuMs(postmasterPid: number): Promise<CpuByPid> {
  const out: CpuByPid = new Map();
  let pids: number[];
  try {
    pids = (await fs.readdir('/proc')).filter((d) => /^\d+$/.test(d)).map(Number);
  } catch {
    return out;
  }
  await Promise.all(
    pids.map(async (pid) => {
      const s = await statOf(pid);
      if (s && (pid === postmasterPid || s.ppid === postmasterPid)) out.set(pid, [s.total, s.sys]);
    }),
  );
  return out;
}

/** CPU (ms) of the given processes (e.g. a bench's child); gone ones are left out. */
export async function processCpuMs(pids: number[]): Promise<CpuByPid> {
  const out: CpuByPid = new Map();
  for (const pid of pids) {
    const s = await statOf(pid);
    if (s) out.set(pid, [s.total, s.sys]);
  }
  return out;
}

/** Busy CPU time of the whole machine (user+nice+system+irq+softirq), and steal (a VM's CPU taken by its host), ms. */
export async function machineBusyMs(): Promise<{ busy: number; steal: number }> {
  try {
    const f = (await fs.readFile('/proc/stat', 'utf8')).split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    const busy = (f[0] ?? 0) + (f[1] ?? 0) + (f[2] ?? 0) + (f[5] ?? 0) + (f[6] ?? 0);
    return { busy: (busy * 1000) / CLK_TCK, steal: ((f[7] ?? 0) * 1000) / CLK_TCK };
  } catch {
    return { busy: NaN, steal: NaN };
  }
}

export function cpuDelta(before: CpuByPid, after: CpuByPid, which: 0 | 1 = 0): number {
  let total = 0;
  for (const [pid, ms] of after) total += ms[which] - (before.get(pid)?.[which] ?? 0);
  return total;
}
