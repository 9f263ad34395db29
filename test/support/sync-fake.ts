import { createHmac } from 'node:crypto';
import http from 'node:http';
import { Agent, request } from 'undici';
import { readForm, readRaw, sendJson, servedVideo, listenOnLoopback, closeServer } from './http-fake.ts';

/*
 * A local stand-in for sync.so's API, following synchronicity-labs/sync-typescript-sdk
 * (generations/client/Client.ts: POST /v2/generate, JSON with input URLs or multipart with `video`
 * and `audio` files, `model`, `options`, `webhookUrl`; GET /v2/generate/{id}; common/types:
 * Generation {id, createdAt, status PENDING | PROCESSING | COMPLETED | FAILED, model, outputUrl,
 * error, error_code}; models lipsync-2, lipsync-2-pro, lipsync-1.9.0-beta) and the webhook guide
 * of synchronicity-labs/docs-v2 (POST of the generation to webhookUrl, `Sync-Signature:
 * t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<JSON>")>`). Auth `x-api-key`.
 */
export interface SyncSubmit {
  id: string;
  model: string;
  options: Record<string, unknown> | undefined;
  webhookUrl: string | undefined;
  video: Buffer;
  videoType: string;
  audio: Buffer;
  audioType: string;
}

const MODELS = ['lipsync-2', 'lipsync-2-pro', 'lipsync-1.9.0-beta'];

export async function startSyncFake(opts: { key: string; webhookSecret: string; video: Buffer; pollsUntilDone?: number; webhookAfterMs?: number }) {
  const submits: SyncSubmit[] = [];
  const jobs = new Map<string, { polls: number; done: boolean; failure?: string }>();
  const hooksSent: Array<{ status: number; body: string }> = [];
  const hookAgent = new Agent({ connect: { rejectUnauthorized: false } });
  let failNext: string | undefined;
  let counter = 0;
  let base = '';

  const generation = (id: string, status: string, extra: Record<string, unknown> = {}) => ({
    id,
    createdAt: new Date().toISOString(),
    status,
    model: 'lipsync-2',
    input: [],
    ...(status === 'COMPLETED' ? { outputUrl: `${base}/files/${id}.mp4`, outputDuration: 1 } : {}),
    ...extra,
  });
  /** The Sync-Signature header for a body (any secret and time, for forged and stale ones). */
  const sign = (body: string, o: { secret?: string; t?: number } = {}) => {
    const t = String(o.t ?? Math.floor(Date.now() / 1000));
    return `t=${t},v1=${createHmac('sha256', o.secret ?? opts.webhookSecret).update(`${t}.${body}`).digest('hex')}`;
  };
  const deliver = async (url: string, body: string, signature: string) => {
    try {
      const r = await request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'sync-signature': signature }, body, dispatcher: hookAgent });
      await r.body.dump();
      hooksSent.push({ status: r.statusCode, body });
    } catch {
      hooksSent.push({ status: 0, body });
    }
  };

  const server = http.createServer(async (req, res) => {
    const raw = await readRaw(req);
    const url = new URL(req.url ?? '/', base);
    if (servedVideo(req, res, url, opts.video)) return;
    if (req.headers['x-api-key'] !== opts.key) return sendJson(res, 401, { message: 'Unauthorized', statusCode: 401 });
    if (req.method === 'POST' && url.pathname === '/v2/generate') {
      if (!String(req.headers['content-type']).startsWith('multipart/form-data')) return sendJson(res, 400, { message: 'this fake takes the SDK file upload form', statusCode: 400 });
      const form = await readForm(req, raw);
      const video = form.get('video');
      const audio = form.get('audio');
      const model = String(form.get('model') ?? '');
      if (!MODELS.includes(model)) return sendJson(res, 400, { message: `model must be one of ${MODELS.join(', ')}`, statusCode: 400 });
      if (!video || typeof video === 'string' || !audio || typeof audio === 'string') return sendJson(res, 400, { message: 'one video input and one audio input are required', statusCode: 400 });
      const videoBytes = Buffer.from(await video.arrayBuffer());
      // An MP4 starts with an ftyp box.
      if (videoBytes.subarray(4, 8).toString('latin1') !== 'ftyp') return sendJson(res, 422, { message: 'the video input is not a video', statusCode: 422 });
      const id = `gen-${++counter}`;
      const webhookUrl = typeof form.get('webhookUrl') === 'string' ? String(form.get('webhookUrl')) : undefined;
      const options = form.get('options');
      submits.push({ id, model, options: typeof options === 'string' ? (JSON.parse(options) as Record<string, unknown>) : undefined, webhookUrl, video: videoBytes, videoType: video.type, audio: Buffer.from(await audio.arrayBuffer()), audioType: audio.type });
      jobs.set(id, { polls: 0, done: false, ...(failNext ? { failure: failNext } : {}) });
      failNext = undefined;
      if (webhookUrl && opts.webhookAfterMs !== undefined) {
        setTimeout(() => {
          const job = jobs.get(id)!;
          job.done = true;
          const body = JSON.stringify(job.failure ? generation(id, 'FAILED', { error: job.failure }) : generation(id, 'COMPLETED'));
          void deliver(webhookUrl, body, sign(body));
        }, opts.webhookAfterMs);
      }
      return sendJson(res, 201, generation(id, 'PENDING'));
    }
    const one = /^\/v2\/generate\/([\w-]+)$/.exec(url.pathname);
    if (req.method === 'GET' && one) {
      const job = jobs.get(one[1]!);
      if (!job) return sendJson(res, 404, { message: 'Generation not found', statusCode: 404 });
      job.polls++;
      const done = job.done || job.polls > (opts.pollsUntilDone ?? 1);
      if (!done) return sendJson(res, 200, generation(one[1]!, job.polls === 1 ? 'PENDING' : 'PROCESSING'));
      if (job.failure) return sendJson(res, 200, generation(one[1]!, 'FAILED', { error: job.failure, error_code: 'generation_unhandled_error' }));
      return sendJson(res, 200, generation(one[1]!, 'COMPLETED'));
    }
    return sendJson(res, 404, { message: 'Not found', statusCode: 404 });
  });
  base = await listenOnLoopback(server);
  return {
    url: base,
    submits,
    jobs,
    hooksSent,
    sign,
    failNext: (message: string) => (failNext = message),
    close: () => {
      void hookAgent.close();
      return closeServer(server);
    },
  };
}
