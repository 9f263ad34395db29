import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pngBytes } from '../support/image-host.ts';
import { startGeminiFake } from '../support/gemini-fake.ts';
import { startOpenAiFake } from '../support/openai-fake.ts';
import { startTestService, waitForGeneration, type TestService } from '../support/app.ts';

/*
 * An image call (Gemini's generateContent, OpenAI's images.generate and images.edit) answers with
 * the images themselves and bills them: once the request went out, a lost answer is an unknown
 * outcome. It is never sent again blindly, nor given to the next provider of the route (here the
 * local renderer, each route's last resort). A refusal that provably made nothing may be tried again.
 */
const GEMINI_KEY = 'AIza-image-calls-31c';
const OPENAI_KEY = 'sk-image-calls-8d2';
let gemini: Awaited<ReturnType<typeof startGeminiFake>>;
let openai: Awaited<ReturnType<typeof startOpenAiFake>>;
let svc: TestService;
let t: Awaited<ReturnType<TestService['team']>>;

beforeAll(async () => {
  const png = await pngBytes(16, 16, '#3366aa');
  gemini = await startGeminiFake({ key: GEMINI_KEY, video: Buffer.from('mp4'), png });
  openai = await startOpenAiFake({ key: OPENAI_KEY, video: Buffer.from('mp4'), png });
  svc = await startTestService(
    {
      GEMINI_API_KEY: GEMINI_KEY,
      GEMINI_API_URL: gemini.url,
      OPENAI_API_KEY: OPENAI_KEY,
      OPENAI_BASE_URL: openai.url,
      ENGINE_ROUTES: 'fast=gemini|local,pro=gemini,gpt-2=openai|local,*=local',
      UPSTREAM_POLL_MS: '40',
      // Short enough that waiting for them is the test, not the suite.
      GEMINI_IMAGE_TIMEOUT_SECONDS: '2',
      OPENAI_IMAGE_TIMEOUT_SECONDS: '1',
    },
    { worker: true },
  );
  t = await svc.team({ credits: 100_000 });
});
afterAll(async () => {
  await svc?.close();
  await gemini?.close();
  await openai?.close();
});

const used = async () => (await svc.app.db.selectFrom('teams').select('credits_used').where('id', '=', t.teamId).executeTakeFirstOrThrow()).credits_used;
const make = async (body: Record<string, unknown>) => {
  const res = await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: { aspect_ratio: '1:1', ...body } });
  expect(res.status).toBe(202);
  return waitForGeneration(svc, t.key, res.body.generation_id, 30_000);
};
const geminiCalls = (prompt: string) => gemini.imageCalls.filter((c) => c.body.contents[0].parts[0].text === prompt).length;
const openaiCalls = (prompt: string) => openai.imageCreates.filter((c) => c.prompt === prompt).length;

describe('Gemini image calls', () => {
  it('the connection cut after Gemini made the image: not sent again, not given to the next provider; failed and refunded', async () => {
    const before = await used();
    gemini.failNext('generate-content', { reset: true });
    const g = await make({ model: 'fast', prompt: 'cut after making' });
    expect(g.status).toBe('failed');
    expect(g.error).toBe('gemini did not confirm the job; it was not sent again so that it is never paid twice');
    expect(geminiCalls('cut after making')).toBe(1);
    expect(await used()).toBe(before);
  });

  it('the same on a route with no other provider: not sent again later', async () => {
    gemini.failNext('generate-content', { reset: true });
    const g = await make({ model: 'pro', prompt: 'cut, no fail-over' });
    expect(g.status).toBe('failed');
    expect(geminiCalls('cut, no fail-over')).toBe(1);
  });

  it('no answer until the client gives up, past the deadline it told Google: not sent again', async () => {
    gemini.failNext('generate-content', { hang: true });
    const g = await make({ model: 'pro', prompt: 'never answered' });
    expect(g.status).toBe('failed');
    expect(g.error).toBe('gemini did not confirm the job; it was not sent again so that it is never paid twice');
    expect(geminiCalls('never answered')).toBe(1);
    expect(gemini.imageDeadlines.at(-1)).toBe('1');
  });

  it("past its deadline Google answers 504 DEADLINE_EXCEEDED, a failed request it does not charge: made again, paid once", async () => {
    gemini.failNext('generate-content', { delayMs: 3_000 });
    const g = await make({ model: 'pro', prompt: 'slow once' });
    expect(g.status, g.error).toBe('completed');
    expect(geminiCalls('slow once')).toBe(2);
    expect(gemini.billedImages.filter((b) => b.prompt === 'slow once')).toHaveLength(1);
  });

  it('a 503 (the model overloaded: nothing made) may go to the next provider of the route', async () => {
    gemini.failNext('generate-content', { status: 503 });
    const g = await make({ model: 'fast', prompt: 'overloaded' });
    expect(g.status).toBe('completed');
    expect(geminiCalls('overloaded')).toBe(1);
    expect(gemini.billedImages.filter((b) => b.prompt === 'overloaded')).toHaveLength(0);
  });
});

describe('OpenAI image calls', () => {
  it('the connection cut after OpenAI made the images: not sent again, not given to the next provider; failed and refunded', async () => {
    const before = await used();
    openai.failNext('images-generations', { reset: true });
    const g = await make({ model: 'gpt-2', prompt: 'openai cut after making', quantity: 2 });
    expect(g.status).toBe('failed');
    expect(g.error).toBe('openai did not confirm the job; it was not sent again so that it is never paid twice');
    expect(openaiCalls('openai cut after making')).toBe(1);
    expect(openai.billedImages.filter((b) => b.prompt === 'openai cut after making')).toHaveLength(2);
    expect(await used()).toBe(before);
  });

  it('no answer within the timeout: not sent again, though OpenAI made and billed the images', async () => {
    openai.failNext('images-generations', { hang: true });
    const g = await make({ model: 'gpt-2', prompt: 'openai never answered' });
    expect(g.status).toBe('failed');
    expect(openaiCalls('openai never answered')).toBe(1);
    expect(openai.billedImages.filter((b) => b.prompt === 'openai never answered')).toHaveLength(1);
  });

  it('a 500 to an Images call (OpenAI does not say whether it made them): not sent again', async () => {
    openai.failNext('images-generations', { status: 500 });
    const g = await make({ model: 'gpt-2', prompt: 'openai 500' });
    expect(g.status).toBe('failed');
    expect(openaiCalls('openai 500')).toBe(1);
  });
});
