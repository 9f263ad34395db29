// Run as a child process by test/integration/local-engine-memory.test.ts: local video edits of
// the small input file given as argv[2], then of the large one in argv[3], rendered under argv[4]
// and stored as the core stores them (local storage under argv[5]). Prints the process's peak memory before and after (kB, from
// /proc/self/status) and what came out, as one JSON line.
import fs from 'node:fs';
import { createLocalEngine } from '../../src/adapters/engines/local/local-engine.ts';
import { createLocalStorage } from '../../src/adapters/storage/local.ts';
import { storeResults } from '../../src/services/generations/results.ts';
import type { UpstreamFile } from '../../src/adapters/engines/engine-contract.ts';

const [small, input, tmpRoot, storageRoot] = process.argv.slice(2) as [string, string, string, string];
const status = (field: string): number => Number(/(\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8').split('\n').find((l) => l.startsWith(`${field}:`)) ?? '')?.[1] ?? NaN);

const storage = createLocalStorage({ root: storageRoot, publicBaseUrl: 'https://adforge.test', signingSecret: 'memory-test' });
const engine = createLocalEngine({ tmpRoot });

/** One video edit of `input`, rendered and stored as the core does it. */
async function edit(input: string, n: number) {
  const size = fs.statSync(input).size;
  const video: UpstreamFile = {
    url: 'https://example.com/input.mov',
    read: async () => ({ bytes: await fs.promises.readFile(input), mime: 'video/quicktime' }),
    open: async () => ({ stream: fs.createReadStream(input), mime: 'video/quicktime', size }),
  };
  const g = { id: `3f1c6a8e-0000-4000-8000-00000000e00${n}`, team_id: '3f1c6a8e-0000-4000-8000-00000000e000' };
  const submission = await engine.submit(
    { generationId: g.id, operation: 'video-edit', params: { language: 'en' }, inputs: { prompt: 'An input video', references: [], brandImages: [], productImages: [], video } },
    { id: g.id },
    new AbortController().signal,
  );
  const done = submission.done;
  const out = done?.state === 'succeeded' ? done.outputs[0] : undefined;
  if (!out || !('file' in out)) throw new Error('the local engine answered no file');
  const stored = await storeResults(storage, g, [{ ...out.type, path: out.file, open: () => fs.createReadStream(out.file) }], { maxBytes: 1024 ** 3, tooLarge: () => new Error('too large') });
  fs.rmSync(String(submission.tempDir), { recursive: true });
  return { inputBytes: size, stored };
}

// A small edit first: what loading the tools costs once (sharp, fonts, the stripped modules) is not the file's.
await edit(small, 1);
const hwmBeforeKb = status('VmHWM');
const large = await edit(input, 2);
console.log(JSON.stringify({ ...large, hwmBeforeKb, hwmAfterKb: status('VmHWM') }));
