import http from 'node:http';
import { HEYGEN_DEFAULT_LANGUAGES } from '../../src/adapters/engines/heygen/heygen-map.ts';
import { readForm, readRaw, sendJson, servedVideo, listenOnLoopback, closeServer } from './http-fake.ts';

/*
 * A local stand-in for HeyGen's API, following the schemas heygen-com/heygen-cli generates from
 * HeyGen's OpenAPI (gen/asset.go, gen/video.go CreateVideoFromImage and Get Video,
 * gen/video-translate.go) and heygen-com/skills-legacy skills/faceswap/SKILL.md: `x-api-key`;
 * answers {data}; errors {error: {code, message}}; v3 mutations honour `Idempotency-Key` (a repeat
 * replays the first answer; one arriving while the first is in flight gets 409
 * request_in_progress). It records what it received and serves real MP4 bytes as results.
 */
interface Job {
  kind: 'video' | 'translation' | 'workflow';
  polls: number;
  failure?: string;
}

const ASPECTS = ['16:9', '9:16', '4:5', '5:4', '1:1', 'auto'];
const RESOLUTIONS = ['4k', '1080p', '720p'];
const KNOWN_LANGUAGES = new Set([...Object.values(HEYGEN_DEFAULT_LANGUAGES), 'Klingon (Qo’noS)']);

export async function startHeyGenFake(opts: { key: string; video: Buffer; pollsUntilDone?: number }) {
  const assets = new Map<string, { bytes: Buffer; type: string; filename: string }>();
  const videoCreates: Array<{ body: Record<string, any>; key: string | undefined }> = [];
  const translationCreates: Array<{ body: Record<string, any>; key: string | undefined }> = [];
  const workflowCreates: Array<{ body: Record<string, any> }> = [];
  const jobs = new Map<string, Job>();
  const replays = new Map<string, { status: number; body: unknown }>();
  /** How many times each `path key` was answered from its first answer. */
  const replayed = new Map<string, number>();
  const submitFailures: Array<{ status: number; body?: unknown }> = [];
  let dropNextVideoAnswer = false;
  let refuseNextVideo: string | undefined;
  let counter = 0;
  let base = '';

  const err = (res: http.ServerResponse, status: number, code: string, message: string) => sendJson(res, status, { error: { code, message } });

  const server = http.createServer(async (req, res) => {
    const raw = await readRaw(req);
    const url = new URL(req.url ?? '/', base);
    if (servedVideo(req, res, url, opts.video)) return;
    if (req.headers['x-api-key'] !== opts.key) return err(res, 401, 'unauthorized', 'Invalid API key');
    const key = typeof req.headers['idempotency-key'] === 'string' ? req.headers['idempotency-key'] : undefined;
    if (key !== undefined && !/^[A-Za-z0-9_:.-]{1,255}$/.test(key)) return err(res, 400, 'invalid_parameter', 'Idempotency-Key is malformed');
    const replayKey = key ? `${url.pathname} ${key}` : undefined;
    if (req.method === 'POST' && replayKey && replays.has(replayKey)) {
      const r = replays.get(replayKey)!;
      replayed.set(replayKey, (replayed.get(replayKey) ?? 0) + 1);
      return sendJson(res, r.status, r.body);
    }
    const answer = (status: number, body: unknown) => {
      if (replayKey) replays.set(replayKey, { status, body });
      return sendJson(res, status, body);
    };

    if (req.method === 'POST' && url.pathname === '/v3/assets') {
      const form = await readForm(req, raw);
      const f = form.get('file');
      if (!f || typeof f === 'string') return err(res, 400, 'invalid_parameter', 'file is required');
      const id = `ast_${++counter}`;
      assets.set(id, { bytes: Buffer.from(await f.arrayBuffer()), type: f.type, filename: f.name });
      return answer(200, { data: { asset_id: id, url: `${base}/assets/${id}`, mime_type: f.type, size_bytes: f.size } });
    }

    if (req.method === 'POST' && ['/v3/videos', '/v3/video-translations', '/v1/workflows/executions'].includes(url.pathname)) {
      const failure = submitFailures.shift();
      if (failure) return sendJson(res, failure.status, failure.body ?? { error: { code: 'unavailable', message: 'Service unavailable' } });
    }

    if (req.method === 'POST' && url.pathname === '/v3/videos') {
      const body = JSON.parse(raw.toString('utf8')) as Record<string, any>;
      if (body.type !== 'image') return err(res, 400, 'invalid_parameter', "type must be 'avatar' or 'image'");
      const image = body.image;
      if (!image || (image.type === 'asset_id' ? !assets.has(image.asset_id) : image.type !== 'url' && image.type !== 'base64')) return err(res, 400, 'invalid_parameter', 'image is invalid');
      const audio = body.audio_asset_id ? assets.has(body.audio_asset_id) : typeof body.audio_url === 'string' || (typeof body.script === 'string' && typeof body.voice_id === 'string');
      if (!audio) return err(res, 400, 'invalid_parameter', 'audio_asset_id, audio_url or script with voice_id is required');
      if (body.aspect_ratio !== undefined && !ASPECTS.includes(body.aspect_ratio)) return err(res, 400, 'invalid_parameter', 'aspect_ratio is invalid');
      if (body.resolution !== undefined && !RESOLUTIONS.includes(body.resolution)) return err(res, 400, 'invalid_parameter', 'resolution is invalid');
      videoCreates.push({ body, key });
      const id = `vid_${++counter}`;
      jobs.set(id, { kind: 'video', polls: 0, ...(refuseNextVideo ? { failure: refuseNextVideo } : {}) });
      refuseNextVideo = undefined;
      const reply = { data: { video_id: id, status: 'waiting', output_format: 'mp4' } };
      if (replayKey) replays.set(replayKey, { status: 200, body: reply });
      if (dropNextVideoAnswer) {
        // The job exists; the answer never arrives (a connection cut after the request was read).
        dropNextVideoAnswer = false;
        return req.socket.destroy();
      }
      return sendJson(res, 200, reply);
    }

    if (req.method === 'POST' && url.pathname === '/v3/video-translations') {
      const body = JSON.parse(raw.toString('utf8')) as Record<string, any>;
      if (body.video?.type !== 'url' || typeof body.video.url !== 'string') return err(res, 400, 'invalid_parameter', 'video is required');
      if (!Array.isArray(body.output_languages) || !body.output_languages.every((l: unknown) => KNOWN_LANGUAGES.has(String(l)))) return err(res, 400, 'invalid_parameter', 'output_languages holds an unsupported language');
      if (body.mode !== undefined && !['speed', 'precision'].includes(body.mode)) return err(res, 400, 'invalid_parameter', 'mode is invalid');
      translationCreates.push({ body, key });
      const id = `vt_${++counter}`;
      jobs.set(id, { kind: 'translation', polls: 0 });
      return answer(200, { data: { video_translation_ids: [id] } });
    }

    if (req.method === 'POST' && url.pathname === '/v1/workflows/executions') {
      const body = JSON.parse(raw.toString('utf8')) as Record<string, any>;
      if (body.workflow_type !== 'FaceswapNode' || typeof body.input?.source_image_url !== 'string' || typeof body.input?.target_video_url !== 'string') {
        return err(res, 400, 'invalid_parameter', 'workflow_type FaceswapNode with input.source_image_url and input.target_video_url is required');
      }
      workflowCreates.push({ body });
      const id = `node-gw-${++counter}`;
      jobs.set(id, { kind: 'workflow', polls: 0 });
      return sendJson(res, 200, { data: { execution_id: id, status: 'submitted' } });
    }

    const poll = /^\/(v3\/videos|v3\/video-translations|v1\/workflows\/executions)\/([\w-]+)$/.exec(url.pathname);
    if (req.method === 'GET' && poll) {
      const job = jobs.get(poll[2]!);
      if (!job) return err(res, 404, 'not_found', 'Not found');
      job.polls++;
      const done = job.polls > (opts.pollsUntilDone ?? 1);
      const id = poll[2]!;
      const videoUrl = `${base}/files/${id}.mp4`;
      if (job.kind === 'workflow') {
        return sendJson(res, 200, { data: { execution_id: id, status: done ? 'completed' : 'processing', ...(done ? { output: { video_url: videoUrl } } : {}) } });
      }
      const waiting = job.kind === 'translation' ? 'running' : 'processing';
      if (!done) return sendJson(res, 200, { data: { id, status: job.polls === 1 ? 'pending' : waiting } });
      if (job.failure) return sendJson(res, 200, { data: { id, status: 'failed', failure_code: 'face_not_detected', failure_message: job.failure } });
      return sendJson(res, 200, { data: { id, status: 'completed', video_url: videoUrl, duration: 1 } });
    }
    return err(res, 404, 'not_found', 'Not found');
  });
  base = await listenOnLoopback(server);
  return {
    url: base,
    assets,
    videoCreates,
    translationCreates,
    workflowCreates,
    jobs,
    replayed,
    failNextSubmit: (f: { status: number; body?: unknown }) => submitFailures.push(f),
    dropNextVideoAnswer: () => (dropNextVideoAnswer = true),
    refuseNextVideo: (message: string) => (refuseNextVideo = message),
    close: () => closeServer(server),
  };
}
