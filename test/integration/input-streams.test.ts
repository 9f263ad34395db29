import http from 'node:http';
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createDb, createPool, type Db } from '../../src/db/pool.ts';
import type { GenerationRow } from '../../src/db/types.ts';
import { UpstreamError } from '../../src/adapters/engines/engine-contract.ts';
import type { SpeechEngine } from '../../src/adapters/engines/speech/engine.ts';
import { createLocalStorage } from '../../src/adapters/storage/local.ts';
import { createScriptSpeech } from '../../src/services/generations/script-speech.ts';
import { createInputResolver } from '../../src/services/generations/inputs.ts';
import { cloneTemplateDatabase } from '../support/database.ts';

// A video given by URL reaches an engine as a stream from the socket: open() answers before the body has arrived.
const MB = 1024 * 1024;
let db: Db;
let drop: () => Promise<void>;
let server: http.Server;
let base: string;
let release: () => void = () => {};
const firstPart = Buffer.alloc(64 * 1024, 1);
const rest = Buffer.alloc(512 * 1024, 2);

beforeAll(async () => {
  let url: string;
  ({ url, drop } = await cloneTemplateDatabase());
  db = createDb(createPool(url, 2));
  server = http.createServer((req, res) => {
    if (req.url === '/big.mp4') return void res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': String(2 * MB) }).end();
    res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': String(firstPart.length + rest.length) });
    res.write(firstPart);
    // The rest only once the test says so: a download read whole would wait for it forever.
    release = () => res.end(rest);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(async () => {
  server?.close();
  await db?.destroy();
  await drop?.();
});

function resolver() {
  const config = loadConfig({ DATABASE_URL: 'postgres://unused/adforge', DATA_DIR: os.tmpdir(), ALLOW_PRIVATE_NETWORK_URLS: 'true', MAX_INPUT_VIDEO_MB: '1', PUBLIC_BASE_URL: 'https://127.0.0.1' });
  const storage = createLocalStorage({ root: os.tmpdir(), publicBaseUrl: 'https://127.0.0.1', signingSecret: 'inputs-test' });
  return createInputResolver({ db, config, storage, script: createScriptSpeech({ db, storage, speech: {} as SpeechEngine }) });
}
const edit = (videoUrl: string) =>
  ({ id: '00000000-0000-4000-8000-000000000001', team_id: '00000000-0000-4000-8000-000000000002', operation: 'video-edit', kind: 'video', params: { video_url: videoUrl } }) as unknown as GenerationRow;

describe("a URL input's open()", () => {
  it('answers the stream as the bytes arrive, with the type and the announced size', async () => {
    const inputs = await resolver()(edit(`${base}/video.mp4`));
    const opened = await inputs.video!.open(AbortSignal.timeout(10_000));
    expect({ mime: opened.mime, size: opened.size }).toEqual({ mime: 'video/mp4', size: firstPart.length + rest.length });
    const chunks: Buffer[] = [];
    let released = false;
    for await (const chunk of opened.stream) {
      chunks.push(chunk as Buffer);
      if (!released) {
        released = true;
        release();
      }
    }
    expect(Buffer.concat(chunks).equals(Buffer.concat([firstPart, rest]))).toBe(true);
  });

  it('refuses a video past MAX_INPUT_VIDEO_MB as the provider would be refused: before reading it', async () => {
    const inputs = await resolver()(edit(`${base}/big.mp4`));
    const e = await inputs.video!.open(AbortSignal.timeout(10_000)).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(UpstreamError);
    expect((e as UpstreamError).message).toBe('an input file could not be fetched: the file is larger than 1 MB');
  });
});
