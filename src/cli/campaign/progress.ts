import cliProgress from 'cli-progress';
import type { CampaignCounts } from './server-calls.ts';

export interface ProgressDisplay {
  update: (counts: CampaignCounts) => void;
  stop: () => void;
}

/** Rows done (completed or failed) out of all, and the other counts, as one plain line. */
export function progressLine(c: CampaignCounts): string {
  return (
    `progress: ${c.completed + c.failed}/${c.total} done | submitted ${c.submitted} | processing ${c.processing} | ` +
    `completed ${c.completed} | failed ${c.failed} | credits spent ${c.credits_spent}`
  );
}

/**
 * A live bar on a terminal; elsewhere (a pipe, a CI log) one plain line at most every
 * `intervalMs` (2 s), the first at once and the last when it stops, so logs stay short.
 */
export function createProgress(opts: {
  tty: boolean;
  stream: NodeJS.WriteStream | { write: (s: string) => unknown };
  intervalMs?: number;
  now?: () => number;
}): ProgressDisplay {
  const intervalMs = opts.intervalMs ?? 2000;
  const now = opts.now ?? Date.now;
  if (opts.tty) {
    const bar = new cliProgress.SingleBar(
      {
        stream: opts.stream as NodeJS.WriteStream,
        format:
          '{bar} {percentage}% | {value}/{total} done | submitted {submitted} | processing {processing} | completed {completed} | failed {failed} | {credits} credits spent',
        hideCursor: true,
        clearOnComplete: false,
        stopOnComplete: false,
      },
      cliProgress.Presets.shades_classic,
    );
    let started = false;
    return {
      update(c) {
        const payload = { submitted: c.submitted, processing: c.processing, completed: c.completed, failed: c.failed, credits: c.credits_spent };
        if (!started) {
          bar.start(c.total, c.completed + c.failed, payload);
          started = true;
        } else {
          bar.setTotal(c.total);
          bar.update(c.completed + c.failed, payload);
        }
      },
      stop() {
        if (started) bar.stop();
      },
    };
  }
  let last: CampaignCounts | undefined;
  let printed: string | undefined;
  let printedAt = -Infinity;
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    timer = undefined;
    if (!last) return;
    const line = progressLine(last);
    if (line === printed) return;
    opts.stream.write(`${line}\n`);
    printed = line;
    printedAt = now();
  };
  return {
    update(c) {
      last = c;
      const wait = printedAt + intervalMs - now();
      if (wait <= 0) flush();
      // A change inside the interval shows when it ends, even if nothing else changes by then.
      else timer ??= setTimeout(flush, wait);
    },
    stop() {
      clearTimeout(timer);
      flush();
    },
  };
}
