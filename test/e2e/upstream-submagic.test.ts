import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphqlClient, progressEvents } from '../support/graphql-client.ts';
import { sendBytes, startImageHost } from '../support/image-host.ts';
import { testVideo } from '../support/media-probe.ts';
import { startSubmagicFake } from '../support/submagic-fake.ts';
import { startTestService, waitForGeneration, type TestService } from '../support/app.ts';

const KEY = 'sk-submagic-test-1c9d';
let submagic: Awaited<ReturnType<typeof startSubmagicFake>>;
let host: Awaited<ReturnType<typeof startImageHost>>;
let video: Buffer;
let svc: TestService;
let t: Awaited<ReturnType<TestService['team']>>;

beforeAll(async () => {
  video = await testVideo({ width: 160, height: 90, seconds: 1 });
  // This key may be read far more often than Submagic's 100 an hour: these tests poll every 40 ms.
  submagic = await startSubmagicFake({ key: KEY, video, projectReadsPerHour: 100_000 });
  host = await startImageHost({ '/talk.mp4': sendBytes(await testVideo({ width: 320, height: 180, seconds: 2 }), 'video/mp4') });
  svc = await startTestService(
    { SUBMAGIC_API_KEY: KEY, SUBMAGIC_API_URL: submagic.url, SUBMAGIC_TEMPLATES: 'karaoke=Karl', SUBMAGIC_POLL_BUDGET: '100000/3600', ENGINE_ROUTES: 'video-edit=submagic,*=local', UPSTREAM_POLL_MS: '40' },
    { worker: true },
  );
  t = await svc.team({ credits: 100_000 });
});
afterAll(async () => {
  await svc?.close();
  await submagic?.close();
  await host?.close();
});

const post = (path: string, body: Record<string, unknown>) => svc.api('POST', `/api/v1${path}`, { key: t.key, body });
const projectOf = async (generationId: string) => {
  const job = await svc.app.db.selectFrom('upstream_jobs').select('provider_job_id').where('generation_id', '=', generationId).executeTakeFirstOrThrow();
  return submagic.projects.get(job.provider_job_id!)!;
};
const used = async () => (await svc.app.db.selectFrom('teams').select('credits_used').where('id', '=', t.teamId).executeTakeFirstOrThrow()).credits_used;

describe('video edit on Submagic', () => {
  it('a video_url goes as videoUrl with the mapped template and the language; rendered by Submagic itself (autoRender), copied to our storage', async () => {
    const res = await post('/videos/edit', { template_id: 'bold-pop', video_url: host.url('/talk.mp4'), language: 'es' });
    expect(res.status).toBe(202);
    const g = await waitForGeneration(svc, t.key, res.body.generation_id);
    expect(g.status, g.error).toBe('completed');
    expect((await svc.fetchUrl(g.result_url)).bytes.equals(video)).toBe(true);
    const p = await projectOf(res.body.generation_id);
    // auto_approve (true by default) is autoRender: Submagic renders once by itself; adforge asks for no second render.
    expect(p).toMatchObject({ title: `adforge ${res.body.generation_id}`, language: 'es', templateName: 'Hormozi 2', videoUrl: host.url('/talk.mp4'), autoRender: true, exports: 0 });
  });

  it("Submagic's states are the generation's live stage on GraphQL (it gives no fraction)", async () => {
    const res = await post('/videos/edit', { template_id: 'bold-pop', video_url: host.url('/talk.mp4'), language: 'en' });
    const client = await graphqlClient(svc);
    const seen = await progressEvents(client, t.key, res.body.generation_id);
    const stages = seen.map((g) => g.stage);
    for (const g of seen) if (g.status === 'processing' && g.stage !== 'sent to submagic' && g.stage !== 'copying the result' && g.stage !== null) expect(g.progress).toBeNull();
    expect(stages).toContain('transcribing');
    expect(stages).toContain('exporting');
    expect(stages.indexOf('transcribing')).toBeLessThan(stages.indexOf('exporting'));
  });

  it('a completed generation is uploaded as a file (our links need not be public), through GraphQL; SUBMAGIC_TEMPLATES overrides a template', async () => {
    const source = await post('/videos/ai-video', { model: 'veo-3.1', prompt: 'source clip', aspect_ratio: '16:9', duration: 4 });
    const src = await waitForGeneration(svc, t.key, source.body.generation_id);
    expect(src.status).toBe('completed');
    const client = await graphqlClient(svc);
    const res = await client.gql(
      `mutation ($input: VideoEditInput!) { createVideoEdit(input: $input) { ... on MutationCreateVideoEditSuccess { data { generation_id } } ... on AppError { code message } } }`,
      { input: { template_id: 'karaoke', generation_id: source.body.generation_id } },
      t.key,
    );
    await client.close();
    const id = res.body.data?.createVideoEdit?.data?.generation_id;
    expect(id, JSON.stringify(res.body)).toBeTruthy();
    expect((await waitForGeneration(svc, t.key, id)).status).toBe('completed');
    const p = await projectOf(id);
    const row = await svc.app.db.selectFrom('generations').select('result_keys').where('id', '=', source.body.generation_id).executeTakeFirstOrThrow();
    expect(p.upload!.equals((await svc.app.storage.get(row.result_keys[0]!))!.bytes)).toBe(true);
    expect(p).toMatchObject({ templateName: 'Karl', language: 'en', videoUrl: undefined, autoRender: true, exports: 0 });
  });

  it('auto_approve false: sent as autoRender false, transcribed but not rendered; it completes once the project is exported in Submagic', async () => {
    const res = await post('/videos/edit', { template_id: 'clean-subtitle', video_url: host.url('/talk.mp4'), auto_approve: false });
    const id = res.body.generation_id as string;
    let p = await (async () => {
      for (let i = 0; i < 200; i++) {
        const job = await svc.app.db.selectFrom('upstream_jobs').select('provider_job_id').where('generation_id', '=', id).executeTakeFirst();
        const found = job?.provider_job_id ? submagic.projects.get(job.provider_job_id) : undefined;
        if (found && found.polls >= 4) return found;
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error('the project was never polled');
    })();
    expect(p).toMatchObject({ autoRender: false, exports: 0 });
    expect((await svc.api('GET', `/api/v1/generations/${id}`, { key: t.key })).body.status).toBe('processing');
    submagic.exportByHand(p.id);
    expect((await waitForGeneration(svc, t.key, id)).status).toBe('completed');
    p = await projectOf(id);
    expect(p.exports).toBe(1);
  });

  it('a failed project fails the generation with its reason and refunds it', async () => {
    const before = await used();
    submagic.failNext('The video has no audible speech');
    const res = await post('/videos/edit', { template_id: 'neon-glow', video_url: host.url('/talk.mp4') });
    const g = await waitForGeneration(svc, t.key, res.body.generation_id);
    expect(g.status).toBe('failed');
    expect(g.error).toBe('Submagic could not caption the video: The video has no audible speech');
    expect(await used()).toBe(before);
  });
});
