import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, stdoutJson } from '../support/cli-run.ts';
import { cloneTemplateDatabase } from '../support/database.ts';
import { startElevenLabsFake } from '../support/elevenlabs-fake.ts';
import { startFalFake } from '../support/fal-fake.ts';
import { startGeminiFake } from '../support/gemini-fake.ts';
import { startSubmagicFake } from '../support/submagic-fake.ts';
import { startSyncFake } from '../support/sync-fake.ts';
import { startHeyGenFake } from '../support/heygen-fake.ts';
import { startMetaAdLibraryFake } from '../support/meta-ad-library-fake.ts';
import { VOICES } from '../../src/domain/catalogue/voices.ts';
import { pngBytes } from '../support/image-host.ts';
import { testVideo } from '../support/media-probe.ts';
import { startOpenAiFake } from '../support/openai-fake.ts';

// `adforge providers check` against the fakes: each answers the free reads as its provider documents them.
const OPENAI_KEY = 'sk-check-openai';
const HEYGEN_KEY = 'hg-check-key';
let openai: Awaited<ReturnType<typeof startOpenAiFake>>;
let heygen: Awaited<ReturnType<typeof startHeyGenFake>>;
let dataDir: string;
let database: Awaited<ReturnType<typeof cloneTemplateDatabase>>;

beforeAll(async () => {
  const video = await testVideo({ width: 64, height: 64, seconds: 1 });
  openai = await startOpenAiFake({ key: OPENAI_KEY, video, png: await pngBytes(32, 32, '#3366cc'), pollsUntilDone: 1 });
  heygen = await startHeyGenFake({ key: HEYGEN_KEY, video });
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'adforge-providers-'));
  database = await cloneTemplateDatabase();
});
afterAll(async () => {
  await openai?.close();
  await heygen?.close();
  await database?.drop();
  if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
});

const env = (extra: Record<string, string> = {}) => ({
  DATA_DIR: dataDir,
  DATABASE_URL: database.url,
  LOG_LEVEL: 'silent',
  ALLOW_PRIVATE_NETWORK_URLS: 'true',
  OPENAI_API_KEY: OPENAI_KEY,
  OPENAI_BASE_URL: openai.url,
  HEYGEN_API_KEY: HEYGEN_KEY,
  HEYGEN_API_URL: heygen.url,
  ...extra,
});
const check = (extra: Record<string, string>, args: string[] = []) => runCli(['providers', 'check', '--json', ...args], env(extra), { timeoutMs: 120_000 });

describe('adforge providers check', () => {
  it('every route ready: the key and each routed model asked of its provider, exit 0', async () => {
    const r = await check({ ENGINE_ROUTES: 'gpt-2=openai,gpt-2.5=openai,talking-avatar=heygen,localize=heygen,*=local' });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const report = stdoutJson(r);
    expect(report.ok).toBe(true);
    expect(report.routes.map((x: any) => [x.route, x.provider, x.outcome])).toEqual([
      ['gpt-2', 'openai', 'ok'],
      ['gpt-2.5', 'openai', 'ok'],
      ['talking-avatar', 'heygen', 'ok'],
      ['localize', 'heygen', 'ok'],
    ]);
    expect(report.routes[0].targets).toEqual([expect.objectContaining({ target: 'gpt-image-2', outcome: 'ok' })]);
    // Each routed model's lifecycle, from the provider's table.
    expect(report.routes[0].lifecycle).toEqual([expect.objectContaining({ name: 'gpt-2', id: 'gpt-image-2', status: 'live', stops: false })]);
    expect(report.routes[2].lifecycle).toEqual([expect.objectContaining({ name: 'heygen-avatar4', id: 'CreateVideoFromImage', status: 'live' })]);
    expect(report.routes[3].targets.length).toBeGreaterThan(1);
  });

  it('a refused key and a model the provider no longer has are reported in its own words, exit 1', async () => {
    const r = await check({ ENGINE_ROUTES: 'gpt-2=openai,gpt-2.5=openai,*=local', OPENAI_IMAGE_MODELS: 'gpt-2.5=gpt-image-0', HEYGEN_API_KEY: 'wrong' });
    expect(r.code).toBe(1);
    const report = stdoutJson(r);
    expect(report.ok).toBe(false);
    const gone = report.routes.find((x: any) => x.route === 'gpt-2.5');
    expect(gone).toMatchObject({ provider: 'openai', outcome: 'model_gone' });
    expect(gone.detail).toMatch(/gpt-image-0/);
    const refused = await check({ ENGINE_ROUTES: 'localize=heygen,*=local', HEYGEN_API_KEY: 'wrong' });
    expect(stdoutJson(refused).routes[0]).toMatchObject({ route: 'localize', provider: 'heygen', outcome: 'key_refused' });
  });

  it('a route to a model its provider retired is reported with the date and no route that is itself retired, and stops a start', async () => {
    const r = await check({ ENGINE_ROUTES: 'sora-2=openai,*=local' });
    expect(r.code).toBe(1);
    const [route] = stdoutJson(r).routes;
    expect(route).toMatchObject({ route: 'sora-2', provider: 'openai', outcome: 'retired' });
    expect(route.detail).toMatch(/^openai retired sora-2 on 2026-09-24 \(.*\); no provider adforge knows still makes sora-2: take it out of ENGINE_ROUTES$/);
    expect(route.lifecycle).toEqual([expect.objectContaining({ name: 'sora-2', id: 'sora-2', status: 'retired', date: '2026-09-24', stops: true })]);
    const start = await runCli(['serve'], env({ ENGINE_ROUTES: 'sora-2=openai,*=local' }), { timeoutMs: 60_000 });
    expect(start.code).toBe(1);
    expect(start.stderr).toMatch(/ENGINE_ROUTES sends sora-2 to openai, which retired sora-2 on 2026-09-24 .*no provider adforge knows still makes sora-2/);
    expect(start.stderr).not.toMatch(/sora-2=fal/);
  });

  it("each routed model's lifecycle: Veo on Gemini retired (fal named instead), a deprecated image model ready with its date, Sora left out of ai-video=fal", async () => {
    const gemini = await startGeminiFake({ key: 'gm-check', video: await testVideo({ width: 64, height: 64, seconds: 1 }), png: await pngBytes(8, 8, '#123456') });
    const fal = await startFalFake({ key: 'fal-check', video: await testVideo({ width: 64, height: 64, seconds: 1 }) });
    try {
      const r = await check({ GEMINI_API_KEY: 'gm-check', GEMINI_API_URL: gemini.url, FAL_KEY: 'fal-check', FAL_QUEUE_URL: fal.url, FAL_API_URL: `${fal.url}/v1`, ENGINE_ROUTES: 'veo-3.1=gemini,fast=gemini,ai-video=fal,*=local' });
      expect(r.code, r.stdout + r.stderr).toBe(1);
      const report = stdoutJson(r);
      const at = (route: string) => report.routes.find((x: any) => x.route === route);
      expect(at('veo-3.1')).toMatchObject({ provider: 'gemini', outcome: 'retired' });
      expect(at('veo-3.1').detail).toMatch(/^gemini retired veo-3\.1-generate-preview on 2026-10-22 \(.*\); route it to fal instead \(veo-3\.1=fal\)$/);
      expect(at('fast')).toMatchObject({ provider: 'gemini', outcome: 'deprecated' });
      expect(at('fast').detail).toMatch(/^gemini deprecated gemini-3\.1-flash-image on 2026-10-06, with no shutdown date yet; its successor is gemini-nano-banana-2\.1/);
      expect(at('fast').lifecycle).toEqual([expect.objectContaining({ name: 'fast', id: 'gemini-3.1-flash-image', status: 'deprecated', date: '2026-10-06', successor: 'gemini-nano-banana-2.1', stops: false })]);
      const sora = at('ai-video').lifecycle.filter((l: any) => l.status === 'retired');
      expect(sora.map((l: any) => [l.name, l.date, l.stops])).toEqual([
        ['sora-2', '2026-08-02', false],
        ['sora-2-pro', '2026-08-02', false],
      ]);
      expect(at('ai-video').lifecycle.filter((l: any) => l.status === 'live').map((l: any) => l.name)).toContain('veo-3.1');
      // Read by an operator: the retired route, the deprecated model, and the models a route leaves out.
      const text = await runCli(['providers', 'check'], env({ GEMINI_API_KEY: 'gm-check', GEMINI_API_URL: gemini.url, FAL_KEY: 'fal-check', FAL_QUEUE_URL: fal.url, FAL_API_URL: `${fal.url}/v1`, ENGINE_ROUTES: 'veo-3.1=gemini,fast=gemini,ai-video=fal,*=local' }), { timeoutMs: 120_000 });
      expect(text.stdout).toMatch(/gemini +veo-3\.1 +retired +gemini retired veo-3\.1-generate-preview on 2026-10-22/);
      expect(text.stdout).toMatch(/gemini-3\.1-flash-image: deprecated: gemini deprecated gemini-3\.1-flash-image on 2026-10-06/);
      expect(text.stdout).toMatch(/sora-2 \(fal-ai\/sora-2\/text-to-video\): retired on 2026-08-02, refused at create unless another provider of the route makes it; no provider adforge knows still makes sora-2/);
    } finally {
      await gemini.close();
      await fal.close();
    }
  });

  it('--spend: the cheapest generation per ready route, made through the pipeline and its result checked', async () => {
    const before = openai.imageCreates.length;
    const r = await check({ ENGINE_ROUTES: 'gpt-2=openai,*=local' }, ['--spend', '--yes']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const { spend } = stdoutJson(r);
    expect(spend.plans).toEqual([expect.objectContaining({ route: 'gpt-2', providers: ['openai'], operation: 'text-to-image', credits: expect.any(Number) })]);
    expect(spend.outcomes).toEqual([expect.objectContaining({ route: 'gpt-2', provider: 'openai', status: 'completed', detail: expect.stringMatching(/^image\/png, \d+ KB$/) })]);
    expect(openai.imageCreates.slice(before)).toEqual([expect.objectContaining({ model: 'gpt-image-2', n: 1, quality: 'low' })]);
  });

  it('--spend: a video route is made and its result measured; a route that needs a public input is skipped, saying which', async () => {
    const fal = await startFalFake({ key: 'fal-spend', video: await testVideo({ width: 64, height: 64, seconds: 1 }), pollsUntilDone: 1 });
    try {
      const r = await check({ FAL_KEY: 'fal-spend', FAL_QUEUE_URL: fal.url, FAL_API_URL: `${fal.url}/v1`, UPSTREAM_POLL_MS: '50', ENGINE_ROUTES: 'kling-2.6=fal,localize=heygen,*=local' }, ['--spend', '--yes']);
      expect(r.code, r.stdout + r.stderr).toBe(0);
      const { spend } = stdoutJson(r);
      expect(spend.plans).toEqual([
        expect.objectContaining({ route: 'kling-2.6', operation: 'ai-video', body: expect.objectContaining({ model: 'kling-2.6', duration: 5 }) }),
        expect.objectContaining({ route: 'localize', skipped: 'needs --video-url (a public video the provider can fetch)' }),
      ]);
      expect(spend.outcomes).toEqual([expect.objectContaining({ route: 'kling-2.6', provider: 'fal', status: 'completed', detail: expect.stringMatching(/^video\/mp4, \d+ KB, 1\.0 s$/) })]);
      expect(fal.submits.map((x) => x.endpoint)).toEqual(['fal-ai/kling-video/v2.6/pro/text-to-video']);
    } finally {
      await fal.close();
    }
  });

  it('--spend without --yes away from a terminal sends nothing', async () => {
    const before = openai.imageCreates.length;
    const r = await check({ ENGINE_ROUTES: 'gpt-2=openai,*=local' }, ['--spend']);
    expect(r.code).not.toBe(0);
    expect(r.stdout + r.stderr).toMatch(/add --yes to confirm/);
    expect(openai.imageCreates.length).toBe(before);
  });

  it('the speech provider and the ad library source are checked too, when configured', async () => {
    const eleven = await startElevenLabsFake({ voices: ['EXAVITQu4vr4xnSDxMaL'] });
    const ads = await startMetaAdLibraryFake({ token: 'ads-token' });
    try {
      const speech = { SPEECH_ENGINE: 'elevenlabs', ELEVENLABS_API_URL: eleven.baseUrl, ELEVENLABS_API_KEY: eleven.control.apiKey, AD_LIBRARY_SOURCE_URL: ads.baseUrl, AD_LIBRARY_SOURCE_TOKEN: 'ads-token' };
      const ready = stdoutJson(await check({ ...speech, ELEVENLABS_VOICE_IDS: `${VOICES[0]!.id}=EXAVITQu4vr4xnSDxMaL`, ENGINE_ROUTES: '*=local' }));
      expect(ready.others.map((o: any) => [o.provider, o.outcome])).toEqual([['elevenlabs', 'ok'], ['scrapecreators', 'ok']]);
      expect(ready.ok).toBe(true);
      // A voice id the provider does not know: that voice is gone, and the report says so.
      const gone = await check({ ...speech, ELEVENLABS_VOICE_IDS: `${VOICES[0]!.id}=NoSuchVoice000`, ENGINE_ROUTES: '*=local', AD_LIBRARY_SOURCE_TOKEN: 'wrong' });
      expect(gone.code).toBe(1);
      expect(stdoutJson(gone).others.map((o: any) => [o.provider, o.outcome])).toEqual([['elevenlabs', 'model_gone'], ['scrapecreators', 'key_refused']]);
    } finally {
      await eleven.close();
      await ads.close();
    }
  });

  it('every provider a route can name is checked by its own free reads: a route per provider, all ready (a deprecated model among them)', async () => {
    const video = await testVideo({ width: 64, height: 64, seconds: 1 });
    const png = await pngBytes(16, 16, '#118833');
    const fal = await startFalFake({ key: 'fal-check', video });
    const gemini = await startGeminiFake({ key: 'gm-check', video, png });
    const sync = await startSyncFake({ key: 'sync-check', webhookSecret: 'whsec_x', video });
    const submagic = await startSubmagicFake({ key: 'sm-check', video });
    try {
      const r = await check({
        FAL_KEY: 'fal-check',
        FAL_QUEUE_URL: fal.url,
        FAL_API_URL: `${fal.url}/v1`,
        GEMINI_API_KEY: 'gm-check',
        GEMINI_API_URL: gemini.url,
        SYNC_API_KEY: 'sync-check',
        SYNC_API_URL: sync.url,
        SUBMAGIC_API_KEY: 'sm-check',
        SUBMAGIC_API_URL: submagic.url,
        ENGINE_ROUTES: 'kling-2.6=fal,veo-3.1=fal,fast=gemini,pro=gemini,lipsync-2.0=sync,heygen-avatar4=heygen,video-edit=submagic,gpt-2=openai,*=local',
      });
      expect(r.code, r.stdout + r.stderr).toBe(0);
      const report = stdoutJson(r);
      expect(report.routes.map((x: any) => `${x.route} ${x.provider} ${x.outcome}`)).toEqual([
        'kling-2.6 fal ok',
        'veo-3.1 fal ok',
        'fast gemini deprecated',
        'pro gemini ok',
        'lipsync-2.0 sync ok',
        'heygen-avatar4 heygen ok',
        'video-edit submagic ok',
        'gpt-2 openai ok',
      ]);
      // Each route's targets are the provider's own names for what the route sends there.
      const targets = (route: string, provider: string) => report.routes.find((x: any) => x.route === route && x.provider === provider).targets.map((t: any) => t.target);
      expect(targets('kling-2.6', 'fal')).toEqual(['fal-ai/kling-video/v2.6/pro/text-to-video', 'fal-ai/kling-video/v2.6/pro/image-to-video']);
      expect(targets('pro', 'gemini')).toEqual(['gemini-3-pro-image']);
      expect(targets('fast', 'gemini')).toEqual(['gemini-3.1-flash-image']);
      expect(targets('lipsync-2.0', 'sync')).toEqual(['lipsync-2']);
      expect(targets('video-edit', 'submagic')).toContain('Hormozi 2');
    } finally {
      await Promise.all([fal.close(), gemini.close(), sync.close(), submagic.close()]);
    }
  });
});
