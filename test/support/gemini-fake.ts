import http from 'node:http';
import { readBody, sendJson, listenOnLoopback, closeServer } from './http-fake.ts';

/*
 * A local stand-in for the Gemini API (v1beta), following googleapis/js-genai
 * src/converters/_models_converters.ts: POST models/{model}:predictLongRunning {instances[0] {prompt,
 * image, lastFrame, referenceImages}, parameters {aspectRatio, durationSeconds, resolution,
 * sampleCount}} -> an operation {name}; GET /{name} -> {done, response.generateVideoResponse
 * {generatedSamples[{video{uri}}] | raiMediaFilteredReasons}}; the video read from its uri with
 * the key; POST models/{model}:generateContent {contents[0].parts [{text} | {inlineData {mimeType,
 * data}}]} -> candidates[0].content.parts[].inlineData, or
 * promptFeedback.blockReason. Auth `x-goog-api-key`. A prompt with "forbidden" is filtered.
 */
export async function startGeminiFake(opts: { key: string; video: Buffer; png: Buffer; pollsUntilDone?: number }) {
  const videoSubmits: Array<{ model: string; body: Record<string, any> }> = [];
  const imageCalls: Array<{ model: string; body: Record<string, any> }> = [];
  const ops = new Map<string, { polls: number; forbidden: boolean }>();
  let counter = 0;
  let base = '';
  const server = http.createServer(async (req, res) => {
    const raw = await readBody(req);
    const url = new URL(req.url ?? '/', base);
    if (url.pathname.startsWith('/frames/')) {
      res.writeHead(200, { 'content-type': 'image/png' });
      return res.end(opts.png);
    }
    if (req.headers['x-goog-api-key'] !== opts.key) return sendJson(res, 403, { error: { code: 403, message: 'Permission denied', status: 'PERMISSION_DENIED' } });
    const predict = /^\/v1beta\/models\/([\w.-]+):predictLongRunning$/.exec(url.pathname);
    if (req.method === 'POST' && predict) {
      const body = JSON.parse(raw) as Record<string, any>;
      videoSubmits.push({ model: predict[1]!, body });
      const name = `models/${predict[1]}/operations/op${++counter}`;
      ops.set(name, { polls: 0, forbidden: /forbidden/i.test(String(body.instances?.[0]?.prompt)) });
      return sendJson(res, 200, { name });
    }
    const generate = /^\/v1beta\/models\/([\w.-]+):generateContent$/.exec(url.pathname);
    if (req.method === 'POST' && generate) {
      const body = JSON.parse(raw) as Record<string, any>;
      // Each part is text or inline data with its MIME type and base64 bytes; anything else is refused.
      const parts: any[] = body.contents?.[0]?.parts ?? [];
      const bad = parts.find((p) => typeof p?.text !== 'string' && !(typeof p?.inlineData?.mimeType === 'string' && typeof p?.inlineData?.data === 'string' && /^[A-Za-z0-9+/]+=*$/.test(p.inlineData.data)));
      if (!parts.length || bad) return sendJson(res, 400, { error: { code: 400, message: 'Invalid value at contents[0].parts', status: 'INVALID_ARGUMENT' } });
      imageCalls.push({ model: generate[1]!, body });
      if (/forbidden/i.test(String(body.contents?.[0]?.parts?.[0]?.text))) return sendJson(res, 200, { promptFeedback: { blockReason: 'SAFETY' } });
      return sendJson(res, 200, { candidates: [{ content: { role: 'model', parts: [{ inlineData: { mimeType: 'image/png', data: opts.png.toString('base64') } }] }, finishReason: 'STOP' }] });
    }
    const download = /^\/v1beta\/files\/(op\d+):download$/.exec(url.pathname);
    if (req.method === 'GET' && download) {
      // As Google does: the file's URI answers with a redirect to where the bytes are, on another host.
      res.writeHead(302, { location: `${storageBase}/signed/${download[1]}.mp4?sig=fake` });
      return res.end();
    }
    const op = /^\/v1beta\/(models\/[\w.-]+\/operations\/(op\d+))$/.exec(url.pathname);
    if (req.method === 'GET' && op) {
      const o = ops.get(op[1]!);
      if (!o) return sendJson(res, 404, { error: { code: 404, message: 'Operation not found', status: 'NOT_FOUND' } });
      o.polls++;
      if (o.polls <= (opts.pollsUntilDone ?? 2)) return sendJson(res, 200, { name: op[1], metadata: {} });
      const response = o.forbidden
        ? { raiMediaFilteredCount: 1, raiMediaFilteredReasons: ['The prompt could not be submitted: it may violate our policies.'] }
        : { generatedSamples: [{ video: { uri: `${base}/v1beta/files/${op[2]}:download?alt=media` } }] };
      return sendJson(res, 200, { name: op[1], done: true, response: { '@type': 'type.googleapis.com/google.ai.generativelanguage.v1beta.PredictLongRunningResponse', generateVideoResponse: response } });
    }
    return sendJson(res, 404, { error: { code: 404, message: 'Not found', status: 'NOT_FOUND' } });
  });
  base = await listenOnLoopback(server);
  // The file store the download redirects to: another origin, read without the key.
  const storageReads: Array<{ path: string; headers: http.IncomingHttpHeaders }> = [];
  const storage = http.createServer((req, res) => {
    storageReads.push({ path: req.url ?? '', headers: req.headers });
    res.writeHead(200, { 'content-type': 'video/mp4' });
    res.end(opts.video);
  });
  const storageBase = await listenOnLoopback(storage);
  return {
    storageReads,
    url: `${base}/v1beta`,
    base,
    videoSubmits,
    imageCalls,
    close: async () => {
      await Promise.all([closeServer(server), closeServer(storage)]);
    },
  };
}
