import path from 'node:path';
import { UpstreamError } from '../engine-contract.ts';
import type { HistoryEntry } from './comfyui-messages.ts';
import type { ComfyServer, Whereabouts } from './comfyui-server.ts';

/*
 * What a generation leaves on a ComfyUI server, removed when it ends (Engine.release): the prompt's
 * history entry (its graph, our prompt text, its outputs' names) with POST /history {delete}, and
 * the files. ComfyUI has no route that deletes a file: server.py @ 5e14d797 has none for input/,
 * output/ or temp/, and its asset catalogue's delete leaves the file on disk
 * (app/assets/docs/README.md @ 050e9b34, "Delete through the API"). What it has is POST
 * /upload/image with `overwrite` into any of the three folders (server.py @ 002c3fb image_upload,
 * get_dir_by_type), so each file is overwritten with an empty one under its own name: the picture
 * is gone, an empty file named after the job stays (docs/gpu.md says so). A prompt still queued
 * or running is ended first, or its history and files would come back after being removed.
 */

export interface OutputFile {
  filename: string;
  subfolder: string;
  type: 'input' | 'output' | 'temp';
}

/** Every file the prompt's nodes saved (any node, any list of its ui output), in output/ or temp/. */
export function savedFiles(entry: HistoryEntry | undefined): OutputFile[] {
  const out: OutputFile[] = [];
  for (const node of Object.values(entry?.outputs ?? {})) {
    for (const list of Object.values(node ?? {})) {
      if (!Array.isArray(list)) continue;
      for (const f of list as Array<{ filename?: unknown; subfolder?: unknown; type?: unknown }>) {
        if (typeof f?.filename !== 'string' || (f.type !== 'output' && f.type !== 'temp')) continue;
        out.push({ filename: f.filename, subfolder: typeof f.subfolder === 'string' ? f.subfolder : '', type: f.type });
      }
    }
  }
  return out;
}

/** An uploaded input's name as LoadImage takes it (`adforge/<file>`), as a file of input/. */
export const inputFile = (name: string): OutputFile => ({ filename: path.posix.basename(name), subfolder: path.posix.dirname(name).replace(/^\.$/, ''), type: 'input' });

const live = (w: Whereabouts) => w.state === 'pending' || w.state === 'running' || w.state === 'somewhere';
const pause = (ms: number, signal: AbortSignal) => new Promise<void>((resolve) => {
  const t = setTimeout(resolve, ms);
  signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
});

/**
 * Ends the prompt if it is still live, waits (at most `settleMs`) for ComfyUI to write its history,
 * then empties its input and output files and deletes the history entry. Every step is tried;
 * the first failure is thrown at the end (a server that cannot be reached: try again later).
 */
export async function releasePrompt(
  s: ComfyServer,
  blank: (file: OutputFile, signal: AbortSignal) => Promise<void>,
  job: { promptId: string; inputs: readonly string[] },
  signal: AbortSignal,
  settleMs = 10_000,
): Promise<void> {
  let where = await s.locate(job.promptId, signal);
  if (live(where)) {
    await s.end(job.promptId, signal);
    for (const until = Date.now() + settleMs; live(where) && Date.now() < until && !signal.aborted; ) {
      await pause(200, signal);
      where = await s.locate(job.promptId, signal);
    }
  }
  const entry = where.state === 'ended' ? where.entry : undefined;
  const failures: unknown[] = live(where) ? [new UpstreamError('transient', 'the prompt is still queued or running on ComfyUI: its history and outputs are left for now')] : [];
  for (const file of [...job.inputs.map(inputFile), ...savedFiles(entry)]) await blank(file, signal).catch((e: unknown) => failures.push(e));
  if (entry) await s.forget(job.promptId, signal).catch((e: unknown) => failures.push(e));
  if (failures.length) throw failures[0] instanceof UpstreamError ? failures[0] : new UpstreamError('transient', 'what the generation left on ComfyUI could not all be removed', { cause: failures[0] });
}
