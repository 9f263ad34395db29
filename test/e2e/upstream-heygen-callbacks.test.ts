import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendBytes, startImageHost } from '../support/image-host.ts';
import { testVideo } from '../support/media-probe.ts';
import { startHeyGenFake, HEYGEN_DOCUMENTED_LANGUAGES } from '../support/heygen-fake.ts';
import { startTestService, waitForGeneration, type TestService } from '../support/app.ts';

/*
 * HeyGen's callback_url as the main path (its job is otherwise read only every few minutes), kept
 * by the attempt's own token in the URL; and HeyGen's 429 (Retry-After) kept away by its budget.
 */
const KEY = 'hg-callbacks-key-5d1e';
let video: Buffer;
let host: Awaited<ReturnType<typeof startImageHost>>;

beforeAll(async () => {
  video = await testVideo({ width: 160, height: 90, seconds: 1 });
  host = await startImageHost({ '/clip.mp4': sendBytes(video, 'video/mp4') });
});
afterAll(async () => {
  await host?.close();
});

const env = (url: string, more: Record<string, string>) => ({
  HEYGEN_API_KEY: KEY,
  HEYGEN_API_URL: url,
  HEYGEN_LANGUAGES: 'pt-BR=Portuguese (Brazil)',
  ENGINE_ROUTES: 'localize=heygen,*=local',
  ...more,
});
const localize = (svc: TestService, key: string) =>
  svc.api('POST', '/api/v1/videos/localize', { key, body: { video_url: host.url('/clip.mp4'), output_language: 'pt-BR', mode: 'speed', duration: 30, width: 1080, height: 1920 } });

/** A HeyGen fake and a service on it, for the describe that calls it. */
function withHeyGen(fake: Omit<Parameters<typeof startHeyGenFake>[0], 'key' | 'video' | 'languages'>, more: Record<string, string>) {
  const ctx = {} as { heygen: Awaited<ReturnType<typeof startHeyGenFake>>; svc: TestService; t: Awaited<ReturnType<TestService['team']>> };
  beforeAll(async () => {
    ctx.heygen = await startHeyGenFake({ key: KEY, video, languages: HEYGEN_DOCUMENTED_LANGUAGES, ...fake });
    ctx.svc = await startTestService(env(ctx.heygen.url, more), { worker: true });
    ctx.t = await ctx.svc.team({ credits: 100_000 });
  });
  afterAll(async () => {
    await ctx.svc?.close();
    await ctx.heygen?.close();
  });
  return ctx;
}

describe('HeyGen calls back on a URL holding the attempt token', () => {
  // Never done by polls; done, and called back, 300 ms after the create. A job with a callback is
  // read every 5 minutes (the default safety net): only the callback can finish it in seconds.
  const c = withHeyGen({ pollsUntilDone: 1_000_000, callbackAfterMs: 300 }, { UPSTREAM_HOOKED_POLL_MS: '300000', UPSTREAM_POLL_MS: '60000' });

  it('the callback finishes the generation within seconds, by one read of the job', async () => {
    const started = Date.now();
    const res = await localize(c.svc, c.t.key);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const g = await waitForGeneration(c.svc, c.t.key, res.body.generation_id, 30_000);
    expect(g.status, g.error).toBe('completed');
    expect(Date.now() - started).toBeLessThan(20_000);
    const create = c.heygen.translationCreates.find((x) => x.body.title === `adforge ${res.body.generation_id}`)!;
    expect(c.heygen.callbacksSent.filter((x) => x.url === create.body.callback_url).map((x) => x.status)).toEqual([200]);
    const job = c.heygen.jobs.get((await c.svc.app.db.selectFrom('upstream_jobs').select('provider_job_id').where('generation_id', '=', res.body.generation_id).executeTakeFirstOrThrow()).provider_job_id!)!;
    expect(job.polls).toBe(1);
  });

  it('a wrong token is 401; a token of an ended attempt is ignored; a provider that signs its calls has no token path', async () => {
    c.heygen.callbacksSent.length = 0;
    const res = await localize(c.svc, c.t.key);
    const id = res.body.generation_id as string;
    expect((await waitForGeneration(c.svc, c.t.key, id, 30_000)).status).toBe('completed');
    const create = c.heygen.translationCreates.find((x) => x.body.title === `adforge ${id}`)!;
    const url = new URL(create.body.callback_url as string);
    const [attempt, token] = url.pathname.split('/').at(-1)!.split('.');
    const body = JSON.stringify({ event_type: 'video_translate.success', event_data: { video_id: 'x' } });
    const post = (path: string) => c.svc.api('POST', path, { rawBody: body, headers: { 'content-type': 'application/json' } });
    const forged = `${token!.slice(0, -2)}${token!.endsWith('AA') ? 'BB' : 'AA'}`;
    expect((await post(`/hooks/heygen/${attempt}.${forged}`)).status).toBe(401);
    expect((await post(`/hooks/heygen/${attempt}`)).status).toBe(401);
    expect((await post(`/hooks/heygen/00000000-0000-4000-8000-000000000000.${token}`)).status).toBe(401);
    // The same token is HeyGen's alone: under another provider's name it is not a hook.
    expect((await post(`/hooks/fal/${attempt}.${token}`)).status).toBe(404);
    const late = await post(url.pathname);
    expect(late.status).toBe(200);
    expect(late.body).toEqual({ received: true, outcome: 'ignored' });
  });
});

describe("HeyGen's budget keeps its reads under its limit", () => {
  const c = withHeyGen({ pollsUntilDone: 3, readLimit: { requests: 3, perMs: 1000, retryAfterSeconds: 1 } }, { UPSTREAM_POLL_MS: '40', HEYGEN_POLL_BUDGET: '2/1' });

  it('four translations read every 40 ms complete with no 429: HEYGEN_POLL_BUDGET=2/1 under the fake 3 a second', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await localize(c.svc, c.t.key)).body.generation_id);
    for (const id of ids) expect((await waitForGeneration(c.svc, c.t.key, id, 60_000)).status).toBe('completed');
    expect(c.heygen.readLog.length).toBeGreaterThanOrEqual(ids.length * 3);
    expect(c.heygen.readLog.filter((r) => r.status === 429)).toEqual([]);
  });
});

describe("a callback's look goes ahead of the routine looks in the budget's line", () => {
  // Twelve translations never done by polls, read every 100 ms like any job (no safety-net pace):
  // at HEYGEN_POLL_BUDGET=2/1 their looks form a line seconds long.
  const c = withHeyGen({ pollsUntilDone: 1_000_000 }, { UPSTREAM_POLL_MS: '100', UPSTREAM_HOOKED_POLL_MS: '0', HEYGEN_POLL_BUDGET: '2/1' });

  it('the called-back job completes within about a second, not at the end of the line', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push((await localize(c.svc, c.t.key)).body.generation_id);
    const lineMs = async () =>
      ((await c.svc.app.db.selectFrom('upstream_poll_budgets').select('next_at').where('provider', '=', 'heygen').executeTakeFirst())?.next_at.getTime() ?? 0) - Date.now();
    const deadline = Date.now() + 30_000;
    while ((await lineMs()) < 4000 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(await lineMs()).toBeGreaterThanOrEqual(4000);

    const id = ids[5]!;
    const create = c.heygen.translationCreates.find((x) => x.body.title === `adforge ${id}`)!;
    const job = (await c.svc.app.db.selectFrom('upstream_jobs').select('provider_job_id').where('generation_id', '=', id).executeTakeFirstOrThrow()).provider_job_id!;
    c.heygen.jobs.get(job)!.ended = true;
    const started = Date.now();
    const body = JSON.stringify({ event_type: 'video_translate.success', event_data: { video_id: job, callback_id: create.body.callback_id } });
    const hook = await c.svc.api('POST', new URL(create.body.callback_url as string).pathname, { rawBody: body, headers: { 'content-type': 'application/json' } });
    expect(hook.status).toBe(200);
    expect((await waitForGeneration(c.svc, c.t.key, id, 30_000)).status).toBe('completed');
    expect(Date.now() - started).toBeLessThan(2500);
    expect(c.heygen.readLog.filter((r) => r.status === 429)).toEqual([]);
  });
});

describe('a callback that arrives before the submit is recorded', () => {
  // HeyGen delivers the callback before its answer to the create reaches us: the attempt is still
  // being submitted when the callback comes. It is kept and taken by the submit once the job is
  // recorded, rather than leaving the job to the 5-minute safety net.
  const c = withHeyGen({ pollsUntilDone: 1_000_000, callbackAfterMs: 0, callBackBeforeAnswer: true }, { UPSTREAM_HOOKED_POLL_MS: '300000', UPSTREAM_POLL_MS: '60000' });

  it('is answered as early, and the generation still finishes within seconds', async () => {
    const started = Date.now();
    const res = await localize(c.svc, c.t.key);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const g = await waitForGeneration(c.svc, c.t.key, res.body.generation_id, 30_000);
    expect(g.status, g.error).toBe('completed');
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(c.heygen.callbacksSent.map((x) => x.status)).toEqual([200]);
    // Taken by the submit: nothing is left behind.
    expect(await c.svc.app.db.selectFrom('upstream_early_hooks').selectAll().execute()).toEqual([]);
  });
});
