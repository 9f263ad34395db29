import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSyncEngine } from '../../src/adapters/engines/sync/sync-engine.ts';
import { UpstreamError, type UpstreamRequest } from '../../src/adapters/engines/engine-contract.ts';
import { memoryFile } from '../support/upstream-file.ts';
import { wavSeconds } from '../support/wav.ts';
import { checkAnswer, loadContract } from '../support/contract.ts';
import { startSyncFake } from '../support/sync-fake.ts';

// The sync fake holds every request to test/contracts/sync/: a request that names one field wrong
// is refused the way sync refuses it (400, {message, statusCode, field}), naming that field.
const KEY = 'sync-contract-key';
let sync: Awaited<ReturnType<typeof startSyncFake>>;
// An MP4 starts with an ftyp box; the fake looks no further.
const MP4 = Buffer.concat([Buffer.from([0, 0, 0, 24]), Buffer.from('ftypisom'), Buffer.alloc(16)]);

beforeAll(async () => {
  sync = await startSyncFake({ key: KEY, webhookSecret: 'whsec_contract', video: MP4 });
});
afterAll(async () => sync?.close());

function form(fields: Record<string, string>, files: Record<string, { bytes: Buffer; type: string; name: string }> = { video: { bytes: MP4, type: 'video/mp4', name: 'face.mp4' }, audio: { bytes: Buffer.from('ID3 speech'), type: 'audio/mpeg', name: 'speech.mp3' } }) {
  const f = new FormData();
  for (const [k, v] of Object.entries(fields)) f.append(k, v);
  for (const [k, v] of Object.entries(files)) f.append(k, new Blob([new Uint8Array(v.bytes)], { type: v.type }), v.name);
  return f;
}
const generate = (body: FormData, headers: Record<string, string> = {}) => fetch(`${sync.url}/v2/generate`, { method: 'POST', headers: { 'x-api-key': KEY, ...headers }, body });
const valid = { model: 'lipsync-2', options: JSON.stringify({ sync_mode: 'cut_off' }), webhookUrl: 'https://example.com/hooks/sync' };

describe('sync fake: POST /v2/generate (multipart) against its contract', () => {
  it('a valid request is accepted: a PENDING generation', async () => {
    const res = await generate(form(valid), { 'idempotency-key': '0b7c3c1e-5a57-4c39-9a0e-6a4f1b2c3d4e' });
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({ id: expect.any(String), status: 'PENDING', model: 'lipsync-2' });
  });

  it.each([
    ['a misnamed part', { modle: 'lipsync-2', options: valid.options }, 'modle'],
    ['a misnamed option inside the options JSON', { ...valid, options: JSON.stringify({ sync_mod: 'cut_off' }) }, 'options.sync_mod'],
    ['an option sync does not document (output_format)', { ...valid, options: JSON.stringify({ sync_mode: 'cut_off', output_format: 'mp4' }) }, 'options.output_format'],
    ['a part sync does not document on the form (outputFileName)', { ...valid, outputFileName: 'adforge-1' }, 'outputFileName'],
    ['a model sync does not have', { ...valid, model: 'lipsync-3' }, 'model'],
  ])('%s is refused with 400 and sync\'s error shape, naming the field', async (_what, fields, field) => {
    const made = sync.submits.length;
    const res = await generate(form(fields));
    expect(res.status).toBe(400);
    const body = (await res.json()) as { message: string[]; field: string };
    expect(() => checkAnswer(loadContract('sync', 'generate-multipart'), 400, body)).not.toThrow();
    expect(body.field).toBe(field);
    expect(body.message.join(' ')).toContain(field);
    expect(sync.submits.length).toBe(made);
  });

  it('a malformed Idempotency-Key is refused naming the header', async () => {
    const res = await generate(form(valid), { 'idempotency-key': 'not a key!' });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { field: string }).field).toBe('idempotency-key');
  });

  it('the same Idempotency-Key twice: the first generation again, not a second', async () => {
    const made = sync.submits.length;
    const first = (await (await generate(form(valid), { 'idempotency-key': 'attempt-42' })).json()) as { id: string };
    const again = (await (await generate(form(valid), { 'idempotency-key': 'attempt-42' })).json()) as { id: string };
    expect(again.id).toBe(first.id);
    expect(sync.submits.length).toBe(made + 1);
  });

  it('GET /v2/generate/{id} of an unknown id: 404 in sync\'s error shape; a wrong key: 401', async () => {
    const res = await fetch(`${sync.url}/v2/generate/gen-unknown`, { headers: { 'x-api-key': KEY } });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ message: 'Generation not found', statusCode: 404 });
    const wrong = await fetch(`${sync.url}/v2/generate/gen-unknown`, { headers: { 'x-api-key': 'nope' } });
    expect(wrong.status).toBe(401);
  });
});

describe('GET /v2/generations: many generations in one read', () => {
  it('the fake lists the generations named by ids, newest first, and refuses a limit past 100 or a cursor without a limit', async () => {
    const a = (await (await generate(form(valid))).json()) as { id: string };
    const b = (await (await generate(form(valid))).json()) as { id: string };
    const list = (q: string) => fetch(`${sync.url}/v2/generations?${q}`, { headers: { 'x-api-key': KEY } });
    const res = await list(`ids=${a.id},${b.id},gen-unknown&limit=100`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as Array<{ id: string }>).map((g) => g.id)).toEqual([b.id, a.id]);
    expect((await list('limit=101')).status).toBe(400);
    expect((await list(`cursor=${a.id}`)).status).toBe(400);
    expect((await list('status=DONE')).status).toBe(400);
  });

  it("the engine's batched read answers each generation asked for as its own read would, in one request", async () => {
    const engine = createSyncEngine({ apiUrl: sync.url, apiKey: KEY, allowPrivate: true });
    const a = (await (await generate(form(valid))).json()) as { id: string };
    sync.failNext('the face was not found');
    const b = (await (await generate(form(valid))).json()) as { id: string };
    const reads = sync.readLog.length;
    const first = await engine.batchRead!.pollMany([{ id: a.id }, { id: b.id }], AbortSignal.timeout(10_000), async () => true);
    expect(first.get(a.id)).toMatchObject({ state: 'pending', detail: 'PENDING' });
    const second = await engine.batchRead!.pollMany([{ id: a.id }, { id: b.id }], AbortSignal.timeout(10_000), async () => true);
    expect(second.get(a.id)).toMatchObject({ state: 'succeeded' });
    expect(second.get(b.id)).toEqual({ state: 'failed', message: 'sync could not make the video: the face was not found' });
    expect(sync.readLog.length - reads).toBe(2);
    expect(sync.listReads.at(-1)).toEqual({ ids: [a.id, b.id], limit: 100 });
  });
});

describe("the engine's submit and sync's IDEMPOTENCY_* answers: wait, same key", () => {
  let request: UpstreamRequest;
  beforeAll(async () => {
    const face = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#a08060' } }).png().toBuffer();
    request = {
      generationId: 'gen-idem',
      operation: 'talking-avatar',
      params: { lipsync_model: 'lipsync-2.0' },
      inputs: { prompt: '', references: [], brandImages: [], productImages: [], face: memoryFile(face, 'image/png'), speech: memoryFile(wavSeconds(0.3), 'audio/wav') },
    };
  });
  const engine = () => createSyncEngine({ apiUrl: sync.url, apiKey: KEY, allowPrivate: true });
  const failure = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e);

  it('a resend while the first request under its key is still running is in_progress (keep the key, ask later), and makes nothing; later the first answer is replayed', async () => {
    const attempt = { id: crypto.randomUUID() };
    const made = sync.submits.length;
    sync.delaySubmits(800);
    try {
      const first = engine().submit(request, attempt, AbortSignal.timeout(10_000));
      while (!sync.posts.some((p) => p.idempotencyKey === attempt.id)) await new Promise((r) => setTimeout(r, 10));
      const again = await failure(engine().submit(request, attempt, AbortSignal.timeout(10_000)));
      expect(again).toBeInstanceOf(UpstreamError);
      expect((again as UpstreamError).failure).toBe('in_progress');
      const answered = await first;
      const replayed = await engine().submit(request, attempt, AbortSignal.timeout(10_000));
      expect(replayed.providerJobId).toBe(answered.providerJobId);
      expect(sync.submits.length - made).toBe(1);
      expect(sync.posts.filter((p) => p.idempotencyKey === attempt.id).map((p) => p.answered)).toEqual([201, 503, 201]);
    } finally {
      sync.delaySubmits(0);
    }
  });

  it('IDEMPOTENCY_OUTCOME_UNKNOWN naming its generationId: that generation is the job, polled, never a fresh key', async () => {
    sync.answerNextUnknown({ withGenerationId: true });
    const made = sync.submits.length;
    const sub = await engine().submit(request, { id: crypto.randomUUID() }, AbortSignal.timeout(10_000));
    expect(sync.submits.length - made).toBe(1);
    expect(sub.providerJobId).toBe(sync.submits.at(-1)!.id);
    expect(sub.handle).toEqual({ id: sub.providerJobId });
  });

  it('IDEMPOTENCY_OUTCOME_UNKNOWN without one: in_progress, the same key asked again later', async () => {
    sync.answerNextUnknown({ withGenerationId: false });
    const e = await failure(engine().submit(request, { id: crypto.randomUUID() }, AbortSignal.timeout(10_000)));
    expect((e as UpstreamError).failure).toBe('in_progress');
  });
});

describe('sync check (free reads only: GET /v2/models)', () => {
  const engine = (apiKey: string) => createSyncEngine({ apiUrl: sync.url, apiKey, allowPrivate: true });

  it('a route key names sync models: lipsync-2.0 and talking-avatar send work to lipsync-2', () => {
    expect(engine(KEY).targets!('lipsync-2.0')).toEqual(['lipsync-2']);
    expect(engine(KEY).targets!('talking-avatar')).toEqual(['lipsync-2']);
    expect(engine(KEY).targets!('veo-3.1')).toEqual([]);
  });

  it('the key accepted, a listed model ok, a model sync no longer lists gone', async () => {
    const results = await engine(KEY).check!(['lipsync-2', 'lipsync-1.7.1'], AbortSignal.timeout(10_000));
    expect(results.map((r) => [r.target, r.outcome])).toEqual([
      ['key', 'ok'],
      ['lipsync-2', 'ok'],
      ['lipsync-1.7.1', 'model_gone'],
    ]);
    expect(results[2]!.detail).toContain('lipsync-1.7.1');
  });

  it("a wrong key is key_refused with sync's words", async () => {
    const results = await engine('sync-wrong-key').check!(['lipsync-2'], AbortSignal.timeout(10_000));
    expect(results[0]).toEqual({ target: 'key', outcome: 'key_refused', detail: 'Unauthorized' });
    expect(results[1]!.outcome).toBe('key_refused');
  });
});
