import http from 'node:http';
import { readForm, readRaw, sendJson, listenOnLoopback, closeServer } from './http-fake.ts';

/*
 * A local stand-in for the OpenAI API, following openai/openai-node src/resources/videos.ts
 * (POST /v1/videos, multipart, `input_reference` a file -> Video {id, object: "video", status queued | in_progress | completed |
 * failed, progress, error {code, message}}; GET /v1/videos/{id}; GET /v1/videos/{id}/content ->
 * the MP4) and src/resources/images.ts (POST /v1/images/generations -> {created, data: [{b64_json}]};
 * POST /v1/images/edits, multipart with the images as `image` or `image[]` files, the same answer).
 * Auth `Authorization: Bearer <key>`; errors `{error: {message, type, code}}`. It records what it
 * received. A prompt containing "forbidden" is refused the way each API refuses.
 */
export async function startOpenAiFake(opts: { key: string; video: Buffer; png: Buffer; pollsUntilDone?: number }) {
  const videoCreates: Array<Record<string, unknown>> = [];
  const imageCreates: Array<Record<string, unknown>> = [];
  /** The input_reference file of each video create, by prompt. */
  const videoReferences = new Map<string, { type: string; bytes: Buffer }>();
  /** Edits as received: the text fields, and each image file (field name, file name, type, bytes). */
  const imageEdits: Array<{ fields: Record<string, string>; images: Array<{ field: string; filename: string; type: string; bytes: Buffer }> }> = [];
  const videos = new Map<string, { polls: number; forbidden: boolean; model: unknown; seconds: unknown; size: unknown }>();
  let counter = 0;
  const server = http.createServer(async (req, res) => {
    const bytes = await readRaw(req);
    const raw = bytes.toString('utf8');
    if (req.headers.authorization !== `Bearer ${opts.key}`) {
      return sendJson(res, 401, { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } });
    }
    const url = new URL(req.url ?? '/', 'http://fake');
    if (req.method === 'POST' && url.pathname === '/v1/videos') {
      // The SDK sends the create as multipart (input_reference is a file upload).
      if (!String(req.headers['content-type']).startsWith('multipart/form-data')) {
        return sendJson(res, 400, { error: { message: 'Invalid Content-Type header, expected multipart/form-data', type: 'invalid_request_error', code: null } });
      }
      const form = await readForm(req, bytes);
      const body: Record<string, unknown> = {};
      for (const [name, value] of form.entries()) {
        if (typeof value === 'string') body[name] = value;
        else if (name === 'input_reference') videoReferences.set(String(form.get('prompt')), { type: value.type, bytes: Buffer.from(await value.arrayBuffer()) });
      }
      if (!body.prompt) return sendJson(res, 400, { error: { message: "Missing required parameter: 'prompt'.", type: 'invalid_request_error', code: 'missing_required_parameter' } });
      videoCreates.push(body);
      const id = `video_${++counter}`;
      videos.set(id, { polls: 0, forbidden: /forbidden/i.test(String(body.prompt)), model: body.model, seconds: body.seconds, size: body.size });
      return sendJson(res, 200, { id, object: 'video', status: 'queued', progress: 0, model: body.model, seconds: body.seconds, size: body.size, created_at: Math.floor(Date.now() / 1000), completed_at: null, expires_at: null, error: null, prompt: body.prompt, remixed_from_video_id: null });
    }
    const content = /^\/v1\/videos\/([\w-]+)\/content$/.exec(url.pathname);
    if (req.method === 'GET' && content) {
      const v = videos.get(content[1]!);
      if (!v || v.polls <= (opts.pollsUntilDone ?? 2)) return sendJson(res, 404, { error: { message: 'Video is not ready', type: 'invalid_request_error', code: null } });
      res.writeHead(200, { 'content-type': 'video/mp4' });
      return res.end(opts.video);
    }
    const one = /^\/v1\/videos\/([\w-]+)$/.exec(url.pathname);
    if (req.method === 'GET' && one) {
      const v = videos.get(one[1]!);
      if (!v) return sendJson(res, 404, { error: { message: 'No such video', type: 'invalid_request_error', code: null } });
      v.polls++;
      const done = v.polls > (opts.pollsUntilDone ?? 2);
      const status = !done ? (v.polls === 1 ? 'queued' : 'in_progress') : v.forbidden ? 'failed' : 'completed';
      return sendJson(res, 200, {
        id: one[1],
        object: 'video',
        status,
        progress: done ? 100 : 50,
        model: v.model,
        seconds: v.seconds,
        size: v.size,
        error: status === 'failed' ? { code: 'moderation_blocked', message: 'Your request was blocked by our moderation system.' } : null,
      });
    }
    if (req.method === 'POST' && url.pathname === '/v1/images/generations') {
      const body = JSON.parse(raw) as Record<string, unknown>;
      imageCreates.push(body);
      if (/forbidden/i.test(String(body.prompt))) {
        return sendJson(res, 400, { error: { message: 'Your request was rejected by the safety system.', type: 'image_generation_user_error', code: 'moderation_blocked' } });
      }
      const n = Number(body.n ?? 1);
      return sendJson(res, 200, { created: Math.floor(Date.now() / 1000), data: Array.from({ length: n }, () => ({ b64_json: opts.png.toString('base64') })), usage: { total_tokens: 100 } });
    }
    if (req.method === 'POST' && url.pathname === '/v1/images/edits') {
      if (!String(req.headers['content-type']).startsWith('multipart/form-data')) {
        return sendJson(res, 400, { error: { message: 'Invalid Content-Type header, expected multipart/form-data', type: 'invalid_request_error', code: null } });
      }
      const form = await readForm(req, bytes);
      const fields: Record<string, string> = {};
      const images: (typeof imageEdits)[number]['images'] = [];
      for (const [name, value] of form.entries()) {
        if (typeof value === 'string') fields[name] = value;
        else if (name === 'image' || name === 'image[]') images.push({ field: name, filename: value.name, type: value.type, bytes: Buffer.from(await value.arrayBuffer()) });
      }
      if (!images.length) return sendJson(res, 400, { error: { message: "Missing required parameter: 'image'.", type: 'invalid_request_error', code: 'missing_required_parameter' } });
      if (!fields.prompt) return sendJson(res, 400, { error: { message: "Missing required parameter: 'prompt'.", type: 'invalid_request_error', code: 'missing_required_parameter' } });
      imageEdits.push({ fields, images });
      if (/forbidden/i.test(fields.prompt)) {
        return sendJson(res, 400, { error: { message: 'Your request was rejected by the safety system.', type: 'image_generation_user_error', code: 'moderation_blocked' } });
      }
      const n = Number(fields.n ?? 1);
      return sendJson(res, 200, { created: Math.floor(Date.now() / 1000), data: Array.from({ length: n }, () => ({ b64_json: opts.png.toString('base64') })), usage: { total_tokens: 100 } });
    }
    return sendJson(res, 404, { error: { message: 'Not found', type: 'invalid_request_error', code: null } });
  });
  const url = `${await listenOnLoopback(server)}/v1`;
  return {
    url,
    videoCreates,
    videoReferences,
    imageCreates,
    imageEdits,
    videos,
    close: () => closeServer(server),
  };
}
