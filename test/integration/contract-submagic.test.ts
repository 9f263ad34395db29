import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSubmagicEngine } from '../../src/adapters/engines/submagic/submagic-engine.ts';
import { UpstreamError, type UpstreamRequest, type UpstreamStatus } from '../../src/adapters/engines/engine-contract.ts';
import { memoryFile } from '../support/upstream-file.ts';
import { checkAnswer, loadContract } from '../support/contract.ts';
import { startSubmagicFake } from '../support/submagic-fake.ts';

// The Submagic fake holds every request to test/contracts/submagic/: a request that names one
// field wrong is refused the way Submagic refuses it (400 VALIDATION_ERROR, details naming the field).
const KEY = 'sk-submagic-contract';
let submagic: Awaited<ReturnType<typeof startSubmagicFake>>;
const MP4 = Buffer.concat([Buffer.from([0, 0, 0, 24]), Buffer.from('ftypisom'), Buffer.alloc(16)]);

beforeAll(async () => {
  submagic = await startSubmagicFake({ key: KEY, video: MP4, projectReadsPerHour: 3 });
});
afterAll(async () => submagic?.close());

const json = (method: string, path: string, body?: unknown, key = KEY) =>
  fetch(`${submagic.url}${path}`, { method, headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
const valid = { title: 'adforge 6f1c1c3a-1b2b-4c3d-8e9f-0a1b2c3d4e5f', language: 'en', videoUrl: 'https://example.com/talk.mp4', templateName: 'Hormozi 2' };
type Refusal = { error: string; message: string; details: Array<{ field: string; message: string }> };

describe('Submagic fake: requests against their contracts', () => {
  it('a valid POST /v1/projects is accepted: a processing project', async () => {
    const res = await json('POST', '/v1/projects', valid);
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({ id: expect.any(String), status: 'processing', templateName: 'Hormozi 2' });
  });

  it.each([
    ['a misnamed field (video_url for videoUrl)', { ...valid, videoUrl: undefined, video_url: valid.videoUrl }, 'video_url'],
    ['a field Submagic does not document (template)', { ...valid, template: 'Sara' }, 'template'],
    ['a title over 100 characters', { ...valid, title: 'x'.repeat(101) }, 'title'],
    ['a silence pace Submagic does not have', { ...valid, removeSilencePace: 'slow' }, 'removeSilencePace'],
  ])('%s is refused with 400 VALIDATION_ERROR naming the field', async (_what, body, field) => {
    const before = submagic.projects.size;
    const res = await json('POST', '/v1/projects', body);
    expect(res.status).toBe(400);
    const refusal = (await res.json()) as Refusal;
    expect(() => checkAnswer(loadContract('submagic', 'create-project'), 400, refusal)).not.toThrow();
    expect(refusal).toMatchObject({ error: 'VALIDATION_ERROR', message: 'Request validation failed' });
    expect(refusal.details[0]!.field).toBe(field);
    expect(submagic.projects.size).toBe(before);
  });

  it('POST /v1/projects/upload: the form accepted with `file`, refused naming `files`', async () => {
    const form = (fileField: string) => {
      const f = new FormData();
      for (const [k, v] of Object.entries({ title: valid.title, language: 'en', templateName: 'Sara' })) f.append(k, v);
      f.append(fileField, new Blob([new Uint8Array(MP4)], { type: 'video/mp4' }), 'video.mp4');
      return f;
    };
    const ok = await fetch(`${submagic.url}/v1/projects/upload`, { method: 'POST', headers: { 'x-api-key': KEY }, body: form('file') });
    expect(ok.status).toBe(201);
    const bad = await fetch(`${submagic.url}/v1/projects/upload`, { method: 'POST', headers: { 'x-api-key': KEY }, body: form('files') });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as Refusal).details[0]!.field).toBe('files');
  });

  it('POST /v1/projects/{id}/export: an empty body is valid; a misnamed option is refused', async () => {
    const { id } = (await (await json('POST', '/v1/projects', valid)).json()) as { id: string };
    const bad = await json('POST', `/v1/projects/${id}/export`, { frameRate: 30 });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as Refusal).details[0]!.field).toBe('frameRate');
    // Not transcribed yet: Submagic's own refusal, in its shape.
    const early = await json('POST', `/v1/projects/${id}/export`, {});
    expect(early.status).toBe(400);
    expect(await early.json()).toEqual({ error: 'BAD_REQUEST', message: 'Project is not transcribed yet' });
  });

  it('a wrong key is 401 UNAUTHORIZED; reading projects past the hourly limit is 429 RATE_LIMIT_EXCEEDED', async () => {
    expect((await json('GET', '/v1/templates', undefined, 'sk-wrong')).status).toBe(401);
    const { id } = (await (await json('POST', '/v1/projects', valid)).json()) as { id: string };
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await json('GET', `/v1/projects/${id}`)).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
  });

  it("the engine waits as long as Submagic's 429 says in its body (retryAfter, seconds: it sends no Retry-After header)", async () => {
    const engine = createSubmagicEngine({ apiUrl: submagic.url, apiKey: KEY, allowPrivate: true });
    const { id } = (await (await json('POST', '/v1/projects', valid)).json()) as { id: string };
    for (let i = 0; i < 3; i++) await json('GET', `/v1/projects/${id}`);
    const e = await engine.poll({ id, autoApprove: true }, AbortSignal.timeout(5000)).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(UpstreamError);
    expect(e).toMatchObject({ failure: 'rate_limited', retryAfterMs: 30_000 });
  });
});

describe('auto_approve reaches Submagic as autoRender, and the project renders once either way', () => {
  const edit = (autoApprove: boolean): UpstreamRequest => ({
    generationId: crypto.randomUUID(),
    operation: 'video-edit',
    params: { template_id: 'bold-pop', language: 'en', auto_approve: autoApprove, video_url: 'https://example.com/talk.mp4' },
    inputs: { prompt: '', references: [], brandImages: [], productImages: [], video: memoryFile(MP4, 'video/mp4', 'https://example.com/talk.mp4') },
  });
  let roomy: Awaited<ReturnType<typeof startSubmagicFake>>;
  beforeAll(async () => {
    // Its own fake: this one's project reads are limited to 3 an hour for the 429 test.
    roomy = await startSubmagicFake({ key: KEY, video: MP4 });
  });
  afterAll(() => roomy?.close());

  it('auto_approve false: created with autoRender false; transcribed, it waits for approval and adforge asks for no render', async () => {
    const e = createSubmagicEngine({ apiUrl: roomy.url, apiKey: KEY, allowPrivate: true });
    const sub = await e.submit(edit(false), { id: crypto.randomUUID() }, AbortSignal.timeout(5_000));
    const p = roomy.projects.get(sub.providerJobId)!;
    expect(p.autoRender).toBe(false);
    const seen: UpstreamStatus[] = [];
    for (let i = 0; i < 6; i++) seen.push(await e.poll(sub.handle, AbortSignal.timeout(5_000)));
    expect(seen.at(-1)).toMatchObject({ state: 'pending', detail: 'awaiting approval in Submagic' });
    expect(p.exports).toBe(0);
    roomy.exportByHand(p.id);
    const after: UpstreamStatus[] = [];
    for (let i = 0; i < 3 && after.at(-1)?.state !== 'succeeded'; i++) after.push(await e.poll(sub.handle, AbortSignal.timeout(5_000)));
    expect(after.at(-1)).toEqual({ state: 'succeeded', outputs: [{ url: `${roomy.url}/files/${p.id}.mp4` }] });
    expect(p.exports).toBe(1);
  });

  it('auto_approve true: created with autoRender true; Submagic renders it by itself and adforge never asks for a second render', async () => {
    const e = createSubmagicEngine({ apiUrl: roomy.url, apiKey: KEY, allowPrivate: true });
    const sub = await e.submit(edit(true), { id: crypto.randomUUID() }, AbortSignal.timeout(5_000));
    const p = roomy.projects.get(sub.providerJobId)!;
    expect(p.autoRender).toBe(true);
    const seen: UpstreamStatus[] = [];
    for (let i = 0; i < 6 && seen.at(-1)?.state !== 'succeeded'; i++) seen.push(await e.poll(sub.handle, AbortSignal.timeout(5_000)));
    expect(seen.map((x) => (x.state === 'pending' ? x.detail : x.state))).toEqual(['transcribing', 'exporting', 'succeeded']);
    expect(p.exports).toBe(0);
  });
});

describe('Submagic check (free reads only: GET /v1/templates)', () => {
  const engine = (apiKey: string, templates?: Record<string, string>) => createSubmagicEngine({ apiUrl: submagic.url, apiKey, allowPrivate: true, ...(templates ? { templates } : {}) });

  it('video edit sends work to the template names SUBMAGIC_TEMPLATES maps to', () => {
    expect(engine(KEY, { karaoke: 'Karl' }).targets!('video-edit')).toContain('Karl');
    expect(engine(KEY).targets!('veo-3.1')).toEqual([]);
  });

  it('the key accepted, a listed template ok, a template no longer listed gone', async () => {
    const results = await engine(KEY).check!(['Hormozi 2', 'Hormozi 9'], AbortSignal.timeout(10_000));
    expect(results.map((r) => [r.target, r.outcome])).toEqual([
      ['key', 'ok'],
      ['Hormozi 2', 'ok'],
      ['Hormozi 9', 'model_gone'],
    ]);
    expect(results[2]!.detail).toContain('Hormozi 9');
  });

  it("a wrong key is key_refused with Submagic's words", async () => {
    const results = await engine('sk-wrong').check!(['Sara'], AbortSignal.timeout(10_000));
    expect(results[0]).toEqual({ target: 'key', outcome: 'key_refused', detail: 'Invalid or missing API key (UNAUTHORIZED)' });
    expect(results[1]!.outcome).toBe('key_refused');
  });
});
