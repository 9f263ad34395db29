import fs from 'node:fs/promises';

const CLK_TCK = 100; // Linux USER_HZ

export interface ProcessSample {
  /** When it was read (ms, Date.now()). */
  at: number;
  /** The process's own CPU, user + system (ms): not its children's. */
  cpuMs: number;
  /** CPU of the children it has waited for (ffprobe, ffmpeg), ms. */
  childCpuMs: number;
  rssMb: number;
  /** The peak resident set since the process started (VmHWM). */
  hwmMb: number;
}

/** One reading of /proc/<pid>/stat and status, or undefined when the process is gone. */
export async function readProcess(pid: number): Promise<ProcessSample | undefined> {
  try {
    const [stat, status] = await Promise.all([fs.readFile(`/proc/${pid}/stat`, 'utf8'), fs.readFile(`/proc/${pid}/status`, 'utf8')]);
    // Fields after the command name (which may hold spaces) start at the state, field 3.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN);
    // A process that has exited but not been reaped (a zombie) has no memory lines left.
    if (Number.isNaN(kb('VmRSS'))) return undefined;
    return {
      at: Date.now(),
      cpuMs: ((Number(f[11]) + Number(f[12])) * 1000) / CLK_TCK,
      childCpuMs: ((Number(f[13]) + Number(f[14])) * 1000) / CLK_TCK,
      rssMb: kb('VmRSS') / 1024,
      hwmMb: kb('VmHWM') / 1024,
    };
  } catch {
    return undefined;
  }
}

/** Busy CPU of the whole machine (ms, every core summed) and steal, for "was the machine disturbed". */
export async function readMachine(): Promise<{ at: number; busyMs: number; stealMs: number }> {
  const f = (await fs.readFile('/proc/stat', 'utf8')).split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const busy = (f[0] ?? 0) + (f[1] ?? 0) + (f[2] ?? 0) + (f[5] ?? 0) + (f[6] ?? 0);
  return { at: Date.now(), busyMs: (busy * 1000) / CLK_TCK, stealMs: ((f[7] ?? 0) * 1000) / CLK_TCK };
}

/** Reads the processes every `everyMs` until stopped; `onSample` may act on a reading (e.g. a memory guard). */
export function meterProcesses(pids: Record<string, number>, everyMs: number, onSample?: (name: string, s: ProcessSample) => void) {
  const series: Record<string, ProcessSample[]> = Object.fromEntries(Object.keys(pids).map((k) => [k, []]));
  const machine: Array<{ at: number; busyMs: number; stealMs: number }> = [];
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      for (const [name, pid] of Object.entries(pids)) {
        const s = await readProcess(pid);
        if (s) {
          series[name]!.push(s);
          onSample?.(name, s);
        }
      }
      machine.push(await readMachine());
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    series,
    machine,
    async stop() {
      stopped = true;
      await loop;
    },
  };
}

/** CPU (cores) and memory of a process over [from, to], from its series: the readings nearest inside. */
export function usageBetween(series: readonly ProcessSample[], from: number, to: number) {
  const inside = series.filter((s) => s.at >= from && s.at <= to);
  if (inside.length < 2) return undefined;
  const a = inside[0]!;
  const b = inside.at(-1)!;
  const seconds = (b.at - a.at) / 1000;
  return {
    seconds,
    cores: (b.cpuMs - a.cpuMs) / 1000 / seconds,
    childCores: (b.childCpuMs - a.childCpuMs) / 1000 / seconds,
    rssMeanMb: inside.reduce((n, s) => n + s.rssMb, 0) / inside.length,
    rssMaxMb: Math.max(...inside.map((s) => s.rssMb)),
    hwmMb: b.hwmMb,
  };
}

/** The machine's busy cores over [from, to] beside what the named processes used: the rest is others. */
export function machineBetween(machine: ReadonlyArray<{ at: number; busyMs: number; stealMs: number }>, from: number, to: number) {
  const inside = machine.filter((s) => s.at >= from && s.at <= to);
  if (inside.length < 2) return undefined;
  const a = inside[0]!;
  const b = inside.at(-1)!;
  const seconds = (b.at - a.at) / 1000;
  return { busyCores: (b.busyMs - a.busyMs) / 1000 / seconds, stealCores: (b.stealMs - a.stealMs) / 1000 / seconds };
}
