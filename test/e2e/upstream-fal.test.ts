import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorker } from '../../src/worker.ts';
import { runCli, stdoutJson } from '../support/cli-run.ts';
import { startFalFake, type FalFake } from '../support/fal-fake.ts';
import { graphqlClient } from '../support/graphql-client.ts';
import { testVideo } from '../support/media-probe.ts';
import { startTestService, waitForGeneration, type TestService } from '../support/app.ts';

const FAL_KEY = 'fal-test-key-7f3c9e2b:1d4a8c6e0b5f';
let fal: FalFake;
let video: Buffer;
let svc: TestService;
let t: Awaited<ReturnType<TestService['team']>>;

beforeAll(async () => {
  video = await testVideo({ width: 320, height: 180, seconds: 1 });
  fal = await startFalFake({ key: FAL_KEY, video, pollsUntilDone: 2 });
  svc = await startTestService(
    { FAL_KEY, FAL_QUEUE_URL: fal.url, ENGINE_ROUTES: 'veo-3.1=fal,veo-3.1-fast=fal,ai-video=fal,*=local', UPSTREAM_POLL_MS: '40' },
    { worker: true },
  );
  t = await svc.team({ credits: 100_000 });
});
afterAll(async () => {
  await svc?.close();
  await fal?.close();
});

const used = async () => (await svc.app.db.selectFrom('teams').select('credits_used').where('id', '=', t.teamId).executeTakeFirstOrThrow()).credits_used;
const create = (body: Record<string, unknown>) => svc.api('POST', '/api/v1/videos/ai-video', { key: t.key, body });
const submitsFor = (prompt: string) => fal.submits.filter((s) => s.input.prompt === prompt);

describe('ai-video on fal (Veo 3.1)', () => {
  it('submits once in fal terms, polls, copies the video into our storage and completes (REST and GraphQL)', async () => {
    const before = await used();
    const res = await create({ model: 'veo-3.1', prompt: 'a lighthouse at dawn', aspect_ratio: '16:9', duration: 8, resolution: '1080p', generate_audio: true });
    expect(res.status).toBe(202);
    const g = await waitForGeneration(svc, t.key, res.body.generation_id);
    expect(g.status).toBe('completed');
    const [sent] = submitsFor('a lighthouse at dawn');
    expect(submitsFor('a lighthouse at dawn')).toHaveLength(1);
    expect(sent!.endpoint).toBe('fal-ai/veo3.1');
    expect(sent!.input).toEqual({ prompt: 'a lighthouse at dawn', aspect_ratio: '16:9', duration: '8s', resolution: '1080p', generate_audio: true });
    expect(fal.requests.get(sent!.requestId)!.polls).toBe(3);
    // The result is ours: a signed link of our storage serving the provider's bytes.
    expect(g.result_url.startsWith(svc.baseUrl)).toBe(true);
    const file = await svc.fetchUrl(g.result_url);
    expect(file.status).toBe(200);
    expect(file.bytes.equals(video)).toBe(true);
    const { credits } = await svc.app.db.selectFrom('generations').select('credits').where('id', '=', res.body.generation_id).executeTakeFirstOrThrow();
    expect(credits).toBeGreaterThan(0);
    expect(await used()).toBe(before + credits);

    const client = await graphqlClient(svc);
    const gq = await client.gql(
      `query ($id: ID!) { generation(id: $id) { status result_url upstream_attempts { provider provider_job_id state events { state } } } }`,
      { id: res.body.generation_id },
      t.key,
    );
    expect(gq.body.data.generation.status).toBe('completed');
    expect(gq.body.data.generation.result_url.startsWith(svc.baseUrl)).toBe(true);
    const [att] = gq.body.data.generation.upstream_attempts;
    expect(att).toMatchObject({ provider: 'fal', provider_job_id: sent!.requestId, state: 'succeeded' });
    expect(att.events.map((e: { state: string }) => e.state)).toEqual(['submitting', 'submitted', 'polled', 'polled', 'succeeded']);
    const other = await svc.team({ credits: 10 });
    const hidden = await client.gql(`query ($id: ID!) { generation(id: $id) { upstream_attempts { provider } } }`, { id: res.body.generation_id }, other.key);
    expect(hidden.body.data.generation).toBeNull();
    await client.close();

    // Operators: the CLI on the same database.
    const shown = stdoutJson(await runCli(['generation', 'show', res.body.generation_id, '--json'], { DATABASE_URL: svc.databaseUrl, DATA_DIR: svc.dataDir }));
    expect(shown).toMatchObject({ id: res.body.generation_id, status: 'completed', engine: 'fal', upstream: [{ provider: 'fal', provider_job_id: sent!.requestId, state: 'succeeded', polls: 2 }] });

    const attempts = await svc.app.db.selectFrom('upstream_jobs').selectAll().where('generation_id', '=', res.body.generation_id).execute();
    expect(attempts).toEqual([expect.objectContaining({ provider: 'fal', state: 'succeeded', provider_job_id: sent!.requestId })]);
  });

  it('uses the image-to-video and first-last-frame endpoints of the fast model for frames', async () => {
    const one = await create({ model: 'veo-3.1-fast', prompt: 'frame one', aspect_ratio: '9:16', duration: 4, first_frame_image_url: 'https://example.com/a.png' });
    const two = await create({
      model: 'veo-3.1-fast',
      prompt: 'frames two',
      aspect_ratio: '9:16',
      duration: 6,
      first_frame_image_url: 'https://example.com/a.png',
      last_frame_image_url: 'https://example.com/b.png',
    });
    expect((await waitForGeneration(svc, t.key, one.body.generation_id)).status).toBe('completed');
    expect((await waitForGeneration(svc, t.key, two.body.generation_id)).status).toBe('completed');
    expect(submitsFor('frame one')[0]).toMatchObject({ endpoint: 'fal-ai/veo3.1/fast/image-to-video', input: { image_url: 'https://example.com/a.png', duration: '4s', aspect_ratio: '9:16' } });
    expect(submitsFor('frames two')[0]).toMatchObject({
      endpoint: 'fal-ai/veo3.1/fast/first-last-frame-to-video',
      input: { first_frame_url: 'https://example.com/a.png', last_frame_url: 'https://example.com/b.png', duration: '6s' },
    });
  });

  it('Sora 2 on fal is retired (its client dropped the endpoints on 2026-08-02): ai-video=fal refuses it at create, with the date, sending and charging nothing', async () => {
    const before = await used();
    const sent = fal.submits.length;
    for (const model of ['sora-2', 'sora-2-pro']) {
      const res = await create({ model, prompt: `sora ${model}`, aspect_ratio: '9:16', duration: 4 });
      expect(res.status).toBe(400);
      expect(res.body.error.message).toBe(`model: ${model} is no longer made by fal, which retired it on 2026-08-02`);
    }
    expect(fal.submits.length).toBe(sent);
    expect(await used()).toBe(before);
    // The start said so, once per model the route leaves out.
    const said = svc.logLines.filter((l) => l.includes('fal retired fal-ai/sora-2/'));
    expect(said.map((l) => JSON.parse(l).model)).toEqual(['sora-2', 'sora-2-pro']);
    expect(said[0]).toMatch(/sora-2 is left out of the route ai-video, and refused at create unless another provider of the route makes it/);
  });

  it('Kling 2.6 on fal: duration as fal\'s string enum, sound as asked, image-to-video for a reference image; a 4:3 ratio is a 400', async () => {
    const res = await create({ model: 'kling-2.6', prompt: 'kling square', aspect_ratio: '1:1', duration: 10, generate_audio: true });
    expect((await waitForGeneration(svc, t.key, res.body.generation_id)).status).toBe('completed');
    expect(submitsFor('kling square')[0]).toEqual(expect.objectContaining({ endpoint: 'fal-ai/kling-video/v2.6/pro/text-to-video', input: { prompt: 'kling square', aspect_ratio: '1:1', duration: '10', generate_audio: true } }));
    const ref = await create({ model: 'kling-2.6', prompt: 'kling from a picture', aspect_ratio: '9:16', duration: 5, reference_image_url: 'https://example.com/k.png' });
    expect((await waitForGeneration(svc, t.key, ref.body.generation_id)).status).toBe('completed');
    expect(submitsFor('kling from a picture')[0]).toMatchObject({ endpoint: 'fal-ai/kling-video/v2.6/pro/image-to-video', input: { start_image_url: 'https://example.com/k.png', duration: '5' } });
    expect(submitsFor('kling from a picture')[0]!.input).not.toHaveProperty('image_url');
    const wide = await create({ model: 'kling-2.6', prompt: 'kling 4:3', aspect_ratio: '4:3', duration: 5 });
    expect(wide.status).toBe(400);
    expect(wide.body.error.message).toBe('aspect_ratio: kling-2.6 on fal makes 16:9, 9:16, 1:1 videos, not 4:3');
  });

  it('refuses at create what fal cannot make (a 1:1 Veo video): 400 naming the field, nothing charged, nothing sent', async () => {
    const before = await used();
    const count = fal.submits.length;
    const res = await create({ model: 'veo-3.1', prompt: 'square', aspect_ratio: '1:1', duration: 8 });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: { code: 'validation_error', message: 'aspect_ratio: veo-3.1 on fal makes 16:9 or 9:16 videos, not 1:1' } });
    expect(await used()).toBe(before);
    expect(fal.submits.length).toBe(count);
  });

  it('a 429 with Retry-After on submit waits and tries again; the generation completes with one job upstream', async () => {
    fal.failNextSubmit({ status: 429, headers: { 'retry-after': '1' }, body: { detail: 'Too many requests' } });
    const res = await create({ model: 'veo-3.1', prompt: 'after a wait', aspect_ratio: '16:9', duration: 4 });
    const g = await waitForGeneration(svc, t.key, res.body.generation_id);
    expect(g.status).toBe('completed');
    expect(fal.refusedSubmits.some((r) => r.status === 429)).toBe(true);
    expect(submitsFor('after a wait')).toHaveLength(1);
  });

  it('a 503 on submit (fal queued nothing) is tried again; a 500 (the job may exist) is not sent again: failed and refunded', async () => {
    fal.failNextSubmit({ status: 503, body: { detail: 'Service unavailable' } });
    const again = await create({ model: 'veo-3.1', prompt: 'after a 503', aspect_ratio: '16:9', duration: 4 });
    expect((await waitForGeneration(svc, t.key, again.body.generation_id)).status).toBe('completed');
    expect(submitsFor('after a 503')).toHaveLength(1);

    const before = await used();
    const refusedBefore = fal.refusedSubmits.length;
    fal.failNextSubmit({ status: 500, body: { detail: 'Internal error' } });
    const unknown = await create({ model: 'veo-3.1', prompt: 'after a 500', aspect_ratio: '16:9', duration: 4 });
    const g = await waitForGeneration(svc, t.key, unknown.body.generation_id);
    expect(g.status).toBe('failed');
    expect(g.error).toBe('fal did not confirm the job; it was not sent again so that it is never paid twice');
    expect(fal.refusedSubmits.length).toBe(refusedBefore + 1);
    expect(submitsFor('after a 500')).toHaveLength(0);
    expect(await used()).toBe(before);
  });

  it("a 503 from fal's own server (x-fal-request-id: the job may be queued; fal's Python client does not resend it) is not sent again: one job, failed and refunded", async () => {
    const before = await used();
    fal.failNextSubmitQueued({ status: 503, error_type: 'runner_scheduling_failure', detail: 'No runner could be allocated' });
    const res = await create({ model: 'veo-3.1', prompt: 'after a server 503', aspect_ratio: '16:9', duration: 4 });
    const g = await waitForGeneration(svc, t.key, res.body.generation_id);
    expect(g.status).toBe('failed');
    expect(g.error).toBe('fal did not confirm the job; it was not sent again so that it is never paid twice');
    expect(submitsFor('after a server 503')).toHaveLength(1);
    expect(await used()).toBe(before);
  });

  it('a 408 or 409 to a submit (fal may have queued it; its client resends only 429, 502, 503, 504) is not sent again: failed and refunded', async () => {
    for (const status of [408, 409]) {
      const before = await used();
      const refusedBefore = fal.refusedSubmits.length;
      fal.failNextSubmit({ status, body: { detail: status === 408 ? 'Request timeout' : 'Conflict' } });
      const res = await create({ model: 'veo-3.1', prompt: `after a ${status}`, aspect_ratio: '16:9', duration: 4 });
      const g = await waitForGeneration(svc, t.key, res.body.generation_id);
      expect(g.status).toBe('failed');
      expect(g.error).toBe('fal did not confirm the job; it was not sent again so that it is never paid twice');
      expect(fal.refusedSubmits.length).toBe(refusedBefore + 1);
      expect(submitsFor(`after a ${status}`)).toHaveLength(0);
      expect(await used()).toBe(before);
    }
  });

  it("a content-policy refusal fails the generation with fal's message and refunds it", async () => {
    const before = await used();
    const res = await create({ model: 'veo-3.1', prompt: 'something forbidden', aspect_ratio: '16:9', duration: 4 });
    const g = await waitForGeneration(svc, t.key, res.body.generation_id);
    expect(g.status).toBe('failed');
    expect(g.error).toBe('fal refused the request: The prompt was flagged by the content policy');
    expect(await used()).toBe(before);
  });

  it("a job that failed on fal's side (COMPLETED with error, its result a 5xx) fails with fal's words and is refunded, not polled until the deadline", async () => {
    const before = await used();
    fal.failNextJob({ error: 'The runner stopped unexpectedly', error_type: 'runner_disconnected' });
    const res = await create({ model: 'veo-3.1', prompt: 'fails at fal', aspect_ratio: '16:9', duration: 4 });
    const g = await waitForGeneration(svc, t.key, res.body.generation_id, 20_000);
    expect(g.status).toBe('failed');
    expect(g.error).toBe('fal could not make it: The runner stopped unexpectedly (runner_disconnected)');
    expect(await used()).toBe(before);
  });

  it('a result link that expired before the download is asked of fal again', async () => {
    fal.expireNextDownloads(1);
    const res = await create({ model: 'veo-3.1', prompt: 'expiring link', aspect_ratio: '16:9', duration: 4 });
    const g = await waitForGeneration(svc, t.key, res.body.generation_id);
    expect(g.status).toBe('completed');
    const [sent] = submitsFor('expiring link');
    expect(fal.requests.get(sent!.requestId)!.downloads).toBe(2);
  });

  it('a cancelled generation is cancelled at fal (PUT .../cancel), refunded, and a result that comes anyway is discarded', async () => {
    fal.holdCompletion(true);
    try {
      const before = await used();
      const res = await create({ model: 'veo-3.1', prompt: 'cancel me at fal', aspect_ratio: '16:9', duration: 4 });
      const id = res.body.generation_id;
      for (let i = 0; i < 100 && submitsFor('cancel me at fal').length === 0; i++) await new Promise((r) => setTimeout(r, 50));
      const [sent] = submitsFor('cancel me at fal');
      // Submitted and being polled.
      for (let i = 0; i < 100 && (fal.requests.get(sent!.requestId)?.polls ?? 0) === 0; i++) await new Promise((r) => setTimeout(r, 50));
      const cancelled = await svc.api('POST', `/api/v1/generations/${id}/cancel`, { key: t.key });
      expect(cancelled.body).toMatchObject({ status: 'failed', error: 'cancelled' });
      expect(await used()).toBe(before);
      for (let i = 0; i < 100 && !fal.cancels.includes(sent!.requestId); i++) await new Promise((r) => setTimeout(r, 50));
      expect(fal.cancels).toContain(sent!.requestId);
      const attempt = await svc.app.db.selectFrom('upstream_jobs').select('state').where('generation_id', '=', id).executeTakeFirstOrThrow();
      expect(attempt.state).toBe('cancelled');
      fal.holdCompletion(false);
      await new Promise((r) => setTimeout(r, 300));
      expect((await svc.api('GET', `/api/v1/generations/${id}`, { key: t.key })).body).toMatchObject({ status: 'failed', error: 'cancelled', result_url: null });
      expect(await used()).toBe(before);
    } finally {
      fal.holdCompletion(false);
    }
  });

  it('never shows the fal key: not in a log line, a stored attempt or an error', async () => {
    const attempts = await svc.app.db.selectFrom('upstream_jobs').selectAll().execute();
    const events = await svc.app.db.selectFrom('upstream_job_events').selectAll().execute();
    const generations = await svc.app.db.selectFrom('generations').select(['error', 'params']).execute();
    for (const text of [svc.logLines.join('\n'), JSON.stringify(attempts), JSON.stringify(events), JSON.stringify(generations)]) {
      expect(text).not.toContain(FAL_KEY);
      expect(text).not.toContain('1d4a8c6e0b5f');
    }
    expect([...fal.seenAuth]).toEqual([`Key ${FAL_KEY}`]);
  });

  it("sent fal nothing its stored contracts refuse (test/contracts/fal)", () => {
    expect(fal.invalid).toEqual([]);
  });
});

describe('crash safety: fal is never paid twice', () => {
  let quiet: TestService;
  let q: Awaited<ReturnType<TestService['team']>>;
  beforeAll(async () => {
    // No worker: the steps of a crashed one are played by hand.
    quiet = await startTestService({ FAL_KEY, FAL_QUEUE_URL: fal.url, ENGINE_ROUTES: 'veo-3.1=fal,*=local', UPSTREAM_POLL_MS: '40' });
    q = await quiet.team({ credits: 10_000 });
  });
  afterAll(async () => quiet?.close());
  const usedQ = async () => (await quiet.app.db.selectFrom('teams').select('credits_used').where('id', '=', q.teamId).executeTakeFirstOrThrow()).credits_used;

  it('a worker that died after the submit: the retried job polls instead of submitting, and another worker finishes it', async () => {
    const res = await quiet.api('POST', '/api/v1/videos/ai-video', { key: q.key, body: { model: 'veo-3.1', prompt: 'crash after submit', aspect_ratio: '16:9', duration: 4 } });
    const id = res.body.generation_id;
    await quiet.app.runners.generations.run(id, { number: 1, max: 5 });
    expect(submitsFor('crash after submit')).toHaveLength(1);
    // The dead worker's job comes back: it must not submit again.
    await quiet.app.runners.generations.run(id, { number: 2, max: 5 });
    expect(submitsFor('crash after submit')).toHaveLength(1);
    const worker = await startWorker(quiet.app);
    try {
      const g = await waitForGeneration(quiet, q.key, id);
      expect(g.status).toBe('completed');
    } finally {
      await worker.stop();
    }
    expect(submitsFor('crash after submit')).toHaveLength(1);
  });

  it("a worker that died between writing 'submitting' and fal's answer: not sent again, failed with a clear error and refunded", async () => {
    const before = await usedQ();
    const res = await quiet.api('POST', '/api/v1/videos/ai-video', { key: q.key, body: { model: 'veo-3.1', prompt: 'crash while submitting', aspect_ratio: '16:9', duration: 4 } });
    const id = res.body.generation_id;
    await quiet.app.db.insertInto('upstream_jobs').values({ generation_id: id, provider: 'fal' }).execute();
    await quiet.app.runners.generations.run(id, { number: 2, max: 5 });
    const g = await waitForGeneration(quiet, q.key, id);
    expect(g.status).toBe('failed');
    expect(g.error).toBe('the submission to fal was interrupted and cannot be confirmed; it was not sent again so that it is never paid twice');
    expect(submitsFor('crash while submitting')).toHaveLength(0);
    expect(await usedQ()).toBe(before);
    const attempt = await quiet.app.db.selectFrom('upstream_jobs').select('state').where('generation_id', '=', id).executeTakeFirstOrThrow();
    expect(attempt.state).toBe('failed');
  });
});
