import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpenAiEngine } from '../../src/adapters/engines/openai/openai-engine.ts';
import { contractsOf } from '../support/contract.ts';
import { pngBytes } from '../support/image-host.ts';
import { startOpenAiFake } from '../support/openai-fake.ts';

/*
 * The OpenAI fake holds every request to its stored contract (test/contracts/openai/): a valid
 * request passes; the same request with one field misnamed is refused as OpenAI refuses it (400,
 * `{error: {message, type, param, code}}` naming the field). And the free operator check, against it.
 */
const KEY = 'sk-contract-openai-5b1e';
let fake: Awaited<ReturnType<typeof startOpenAiFake>>;
let png: Buffer;

beforeAll(async () => {
  png = await pngBytes(16, 16, '#123456');
  fake = await startOpenAiFake({ key: KEY, video: Buffer.from('mp4'), png, pollsUntilDone: 0, shutdowns: { 'gpt-image-1': '2026-10-01', 'gpt-image-2': '2027-06-01' } });
});
afterAll(() => fake?.close());

const send = async (method: string, path: string, body?: Record<string, unknown> | FormData, key = KEY) => {
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (body && !(body instanceof FormData)) headers['content-type'] = 'application/json';
  const res = await fetch(`${fake.url}${path}`, { method, headers, ...(body ? { body: body instanceof FormData ? body : JSON.stringify(body) } : {}) });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.status, body: json as { error?: { message: string; type: string; param: string | null; code: string | null } } & Record<string, unknown> };
};
const form = (fields: Record<string, string>, files: Array<[string, string]> = []) => {
  const f = new FormData();
  for (const [k, v] of Object.entries(fields)) f.append(k, v);
  for (const [name, type] of files) f.append(name, new Blob([new Uint8Array(png)], { type }), `${name.replace('[]', '')}.png`);
  return f;
};
const misnamed = (param: string) => ({ status: 400, body: { error: { message: `Unknown parameter: '${param}'.`, type: 'invalid_request_error', param, code: 'unknown_parameter' } } });

describe('the OpenAI fake holds requests to the stored contracts', () => {
  it('images/generations: valid passes; `prompts` for `prompt` is refused naming it', async () => {
    const valid = { model: 'gpt-image-1.5', prompt: 'a mug', n: 2, size: '1536x1024', quality: 'high' };
    const ok = await send('POST', '/images/generations', valid);
    expect(ok.status).toBe(200);
    expect(ok.body.data).toHaveLength(2);
    const { prompt, ...rest } = valid;
    expect(await send('POST', '/images/generations', { ...rest, prompts: prompt })).toMatchObject(misnamed('prompts'));
  });

  it('images/edits (multipart): valid passes; `images[]` for `image[]` is refused naming it', async () => {
    const fields = { model: 'gpt-image-2', prompt: 'on a shelf', n: '1', size: '2048x1152', quality: 'medium' };
    expect((await send('POST', '/images/edits', form(fields, [['image[]', 'image/png'], ['image[]', 'image/png']]))).status).toBe(200);
    expect(await send('POST', '/images/edits', form(fields, [['images[]', 'image/png']]))).toMatchObject(misnamed('images[]'));
  });

  it('videos (multipart): valid passes; `duration` for `seconds` is refused naming it', async () => {
    const ok = await send('POST', '/videos', form({ model: 'sora-2-pro', prompt: 'a kite', seconds: '8', size: '1792x1024' }, [['input_reference', 'image/png']]));
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ object: 'video', status: 'queued' });
    expect(await send('POST', '/videos', form({ model: 'sora-2', prompt: 'a kite', duration: '8', size: '1280x720' }))).toMatchObject(misnamed('duration'));
  });

  it('videos/{id} and its content: valid reads pass; a query the call does not take is refused naming it', async () => {
    const { body } = await send('POST', '/videos', form({ model: 'sora-2', prompt: 'read me', seconds: '4', size: '720x1280' }));
    const id = String(body.id);
    expect((await send('GET', `/videos/${id}`)).body).toMatchObject({ id, status: 'completed' });
    expect((await send('GET', `/videos/${id}/content?variant=video`)).status).toBe(200);
    expect(await send('GET', `/videos/${id}/content?varient=video`)).toMatchObject(misnamed('varient'));
  });

  it('models: the list and one model; an unknown one is 404 model_not_found; a wrong key is 401', async () => {
    expect((await send('GET', '/models')).body).toMatchObject({ object: 'list' });
    expect((await send('GET', '/models/gpt-image-2')).body).toMatchObject({ id: 'gpt-image-2', object: 'model' });
    expect(await send('GET', '/models/gpt-image-9')).toEqual({
      status: 404,
      body: { error: { message: 'The model `gpt-image-9` does not exist or you do not have access to it.', type: 'invalid_request_error', param: null, code: 'model_not_found' } },
    });
    expect(await send('GET', '/models', undefined, 'sk-wrong')).toMatchObject({ status: 401, body: { error: { code: 'invalid_api_key', param: null } } });
  });

  it('a wrong type, a bad enum and a missing field are refused with their own codes', async () => {
    expect(await send('POST', '/images/generations', { model: 'gpt-image-1.5', prompt: 'x', n: '2' })).toMatchObject({ status: 400, body: { error: { param: 'n', code: 'invalid_type' } } });
    expect(await send('POST', '/images/generations', { model: 'gpt-image-1.5', prompt: 'x', quality: 'ultra' })).toMatchObject({ status: 400, body: { error: { param: 'quality', code: 'invalid_value' } } });
    expect(await send('POST', '/images/generations', { model: 'gpt-image-1.5' })).toMatchObject({
      status: 400,
      body: { error: { message: "Missing required parameter: 'prompt'.", param: 'prompt', code: 'missing_required_parameter' } },
    });
    expect(await send('POST', '/images/edits', form({ model: 'gpt-image-1.5', prompt: 'x' }))).toMatchObject({ status: 400, body: { error: { message: "Missing required parameter: 'image'." } } });
  });

  it('each model is held to its own sizes and fields', async () => {
    // The standard three only, below gpt-image-2.
    expect(await send('POST', '/images/generations', { model: 'gpt-image-1.5', prompt: 'x', size: '2048x1152' })).toMatchObject({ status: 400, body: { error: { param: 'size', code: 'invalid_value' } } });
    // gpt-image-2: free sizes within its rules.
    expect((await send('POST', '/images/generations', { model: 'gpt-image-2', prompt: 'x', size: '2048x1152' })).status).toBe(200);
    for (const size of ['2050x1152', '2048x640', '4096x2304']) {
      expect(await send('POST', '/images/generations', { model: 'gpt-image-2', prompt: 'x', size }), size).toMatchObject({ status: 400, body: { error: { param: 'size', code: 'invalid_value' } } });
    }
    // DALL-E's fields are not the GPT image models'.
    expect(await send('POST', '/images/generations', { model: 'gpt-image-1.5', prompt: 'x', response_format: 'url' })).toMatchObject({ status: 400, body: { error: { param: 'response_format', code: 'unsupported_parameter' } } });
    expect(await send('POST', '/images/edits', form({ model: 'gpt-image-1-mini', prompt: 'x', input_fidelity: 'high' }, [['image', 'image/png']]))).toMatchObject({
      status: 400,
      body: { error: { param: 'input_fidelity', code: 'unsupported_parameter' } },
    });
    // An image type the GPT image models do not take.
    expect(await send('POST', '/images/edits', form({ model: 'gpt-image-1.5', prompt: 'x' }, [['image[]', 'image/gif']]))).toMatchObject({ status: 400, body: { error: { param: 'image[][0].type', code: 'invalid_value' } } });
    // sora-2 makes 720p only.
    expect(await send('POST', '/videos', form({ model: 'sora-2', prompt: 'x', seconds: '4', size: '1792x1024' }))).toMatchObject({ status: 400, body: { error: { param: 'size', code: 'invalid_value' } } });
  });
});

describe('the free OpenAI check (providers check)', () => {
  const engine = (key = KEY, imageModels: Record<string, string> = {}) => createOpenAiEngine({ baseUrl: fake.url, apiKey: key, allowPrivate: true, imageModels });

  it('targets: the OpenAI models each route key may send work to', () => {
    const e = engine(KEY, { 'gpt-2': 'gpt-image-1' });
    expect(e.targets!('gpt-2')).toEqual(['gpt-image-1']);
    expect(e.targets!('gpt-2.5')).toEqual(['gpt-image-2']);
    expect(e.targets!('sora-2-pro')).toEqual(['sora-2-pro']);
    expect(e.targets!('ai-video')).toEqual(['sora-2', 'sora-2-pro']);
    expect(e.targets!('image-edit')).toEqual(['gpt-image-1', 'gpt-image-2']);
    expect(e.targets!('*')).toEqual(['gpt-image-1', 'gpt-image-2', 'sora-2', 'sora-2-pro']);
    expect(e.targets!('veo-3.1')).toEqual([]);
  });

  it('ok: the key is accepted and each model is listed (a future shutdown: deprecated, said with its date)', async () => {
    const before = fake.modelReads.length;
    expect(await engine().check!(['gpt-image-1.5', 'gpt-image-2'], AbortSignal.timeout(5000))).toEqual([
      { target: 'key', outcome: 'ok', detail: expect.stringMatching(/^the key is accepted \(\d+ models listed\)$/) },
      { target: 'gpt-image-1.5', outcome: 'ok', detail: 'listed' },
      { target: 'gpt-image-2', outcome: 'deprecated', detail: 'listed; OpenAI shuts it down on 2027-06-01' },
    ]);
    expect(fake.modelReads.slice(before).sort()).toEqual(['*', 'gpt-image-1.5', 'gpt-image-2']);
  });

  it('a wrong key: key_refused in OpenAI words', async () => {
    const [key, ...rest] = await engine('sk-wrong-key').check!(['gpt-image-2'], AbortSignal.timeout(5000));
    expect(key).toEqual({ target: 'key', outcome: 'key_refused', detail: expect.stringMatching(/^Incorrect API key provided: /) });
    expect(rest).toEqual([{ target: 'gpt-image-2', outcome: 'key_refused', detail: 'not checked: the key was refused' }]);
  });

  it('an unknown model: model_gone with OpenAI words; a shutdown date passed: retired', async () => {
    const results = await engine().check!(['gpt-image-9', 'gpt-image-1'], AbortSignal.timeout(5000));
    expect(results.slice(1)).toEqual([
      { target: 'gpt-image-9', outcome: 'model_gone', detail: 'The model `gpt-image-9` does not exist or you do not have access to it.' },
      { target: 'gpt-image-1', outcome: 'retired', detail: 'OpenAI lists gpt-image-1 with shutdown_date 2026-10-01' },
    ]);
  });

  it('OpenAI unreachable: said so, nothing thrown', async () => {
    const e = createOpenAiEngine({ baseUrl: 'http://127.0.0.1:9/v1', apiKey: KEY, allowPrivate: true });
    expect(await e.check!(['sora-2'], AbortSignal.timeout(5000))).toEqual([
      { target: 'key', outcome: 'unreachable', detail: expect.stringMatching(/^OpenAI could not be reached/) },
      { target: 'sora-2', outcome: 'unreachable', detail: 'not checked: OpenAI could not be reached' },
    ]);
  });
});

describe('the OpenAI contracts carry their provenance', () => {
  it('each names the OpenAPI document at its commit, the pointer it was cut from, and compiles', () => {
    const contracts = contractsOf('openai');
    expect(Object.keys(contracts).sort()).toEqual(['images-edits', 'images-generations', 'models-list', 'models-retrieve', 'videos-content', 'videos-create', 'videos-retrieve']);
    for (const [name, c] of Object.entries(contracts)) {
      expect(c.source.url, name).toBe(`https://github.com/openai/openai-openapi/blob/${c.source.commit}/openapi.json`);
      expect(c.source.refresh, name).toEqual({ github: 'openai/openai-openapi', path: 'openapi.json', pointer: expect.stringMatching(/^\/(components|paths)\//) });
      // Every schema of the call cites where in the document it was read.
      for (const schema of [c.request.body, ...Object.values(c.responses)].filter(Boolean)) expect(JSON.stringify(schema), name).toContain('"x-source":"https://github.com/openai/');
    }
  });
});

describe('OpenAI fake: time, limits and faults', () => {
  let timed: Awaited<ReturnType<typeof startOpenAiFake>>;
  let clock = 0;
  beforeAll(async () => {
    timed = await startOpenAiFake({ key: KEY, video: Buffer.from('mp4'), png, imageMs: 600, limits: { ipm: 3 }, now: () => clock });
  });
  afterAll(() => timed?.close());
  const generate = (prompt: string, n = 1, signal?: AbortSignal) =>
    fetch(`${timed.url}/images/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-image-1.5', prompt, n, size: '1024x1024', quality: 'low' }),
      ...(signal ? { signal } : {}),
    });

  it('a client that gives up does not stop OpenAI: the images are made and billed all the same', async () => {
    await expect(generate('left behind', 2, AbortSignal.timeout(100))).rejects.toThrow();
    await new Promise((r) => setTimeout(r, 800));
    expect(timed.billedImages.filter((b) => b.prompt === 'left behind')).toHaveLength(2);
  });

  it('past the images per minute: 429 rate_limit_exceeded in OpenAI words with x-ratelimit headers; a minute later it answers', async () => {
    clock = 5_000_000;
    expect((await generate('two', 2)).status).toBe(200);
    const over = await generate('two more', 2);
    expect(over.status).toBe(429);
    expect(over.headers.get('retry-after')).toBeNull();
    expect(over.headers.get('x-ratelimit-reset-requests')).toBe('60s');
    const body = (await over.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('rate_limit_exceeded');
    expect(body.error.message).toMatch(/^Rate limit reached for gpt-image-1\.5 in organization org-fake on images per min \(IPM\): Limit 3, Used 2, Requested 2\. Please try again in 60s\./);
    clock += 60_001;
    expect((await generate('two more', 2)).status).toBe(200);
  });

  it('faults: a 500 in OpenAI words (code server_error), a reset after the images were made (billed)', async () => {
    clock += 120_000;
    timed.failNext('images-generations', { status: 500 });
    const failed = await generate('server error');
    expect(failed.status).toBe(500);
    expect(((await failed.json()) as { error: { code: string } }).error.code).toBe('server_error');
    timed.failNext('images-generations', { reset: true });
    await expect(generate('cut')).rejects.toThrow();
    expect(timed.billedImages.map((b) => b.prompt)).toContain('cut');
    expect(timed.billedImages.map((b) => b.prompt)).not.toContain('server error');
  });
});
