import { createHash, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import http from 'node:http';
import { readBody, sendJson, listenOnLoopback, closeServer } from './http-fake.ts';
import { Agent, request } from 'undici';

/*
 * A local stand-in for fal.ai's queue API, following the contract its client implements:
 * fal-ai/fal-js libs/client/src/queue.ts (POST {queue}/{endpoint id}[?fal_webhook=] -> {request_id,
 * status, status_url, response_url, cancel_url, queue_position}; GET {owner}/{app}/requests/{id}/status
 * -> IN_QUEUE | IN_PROGRESS | COMPLETED; GET {owner}/{app}/requests/{id} -> the output, or an error
 * JSON with `detail`; PUT .../cancel), libs/client/src/response.ts (422 with pydantic-style
 * `detail` for refused input) and the model pages named in src/adapters/engines/fal/fal-models.ts
 * (Veo 3.1, Sora 2, Kling 2.6, Kling O3, Seedance 2.0: the input fields each endpoint takes, checked
 * below as fal's schema would with a 422; output {video: {url}}).
 * Auth: `Authorization: Key <key>`. It records what it received and serves real MP4 bytes.
 * Webhooks as https://docs.fal.ai/model-endpoints/webhooks describes them: POSTed to the
 * `fal_webhook` URL when a job ends, body {request_id, gateway_request_id, status, payload}, signed
 * with Ed25519 over request id, user id, timestamp and the body's SHA-256 (X-Fal-Webhook-* headers),
 * the public key served as a JWKS at /.well-known/jwks.json.
 */
export interface FalSubmit {
  endpoint: string;
  input: Record<string, unknown>;
  query: Record<string, string>;
  requestId: string;
}

export interface FalFakeOptions {
  key: string;
  video: Buffer;
  /** Status polls answered IN_QUEUE / IN_PROGRESS before COMPLETED. */
  pollsUntilDone?: number;
  /** With a fal_webhook, the job ends this long after the submit and the webhook is sent. */
  webhookAfterMs?: number;
}

interface Req {
  endpoint: string;
  done?: boolean;
  polls: number;
  refused: boolean;
  downloads: number;
}

export async function startFalFake(opts: FalFakeOptions) {
  const submits: FalSubmit[] = [];
  const refusedSubmits: Array<{ status: number }> = [];
  const requests = new Map<string, Req>();
  const cancels: string[] = [];
  const seenAuth = new Set<string>();
  /** Queued answers for the next submits (e.g. a 429 with Retry-After) before the normal path. */
  const submitFailures: Array<{ status: number; headers?: Record<string, string>; body?: unknown }> = [];
  /** Result links that answer 410 this many times first (an expired provider link). */
  let expireDownloads = 0;
  /** While set, submits are recorded but never answered (the answer a killed worker never read). */
  let holdSubmits = false;
  /** While set, every job stays IN_PROGRESS. */
  let holdCompletion = false;
  let counter = 0;
  let baseUrl = '';


  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const hookAgent = new Agent({ connect: { rejectUnauthorized: false } });
  const hooksSent: Array<{ url: string; status: number; headers: Record<string, string>; body: string }> = [];
  /** The X-Fal-Webhook-* headers for a body (any key and timestamp, for forged and stale ones). */
  const signed = (requestId: string, body: string, o: { key?: KeyObject; timestamp?: number } = {}): Record<string, string> => {
    const timestamp = String(o.timestamp ?? Math.floor(Date.now() / 1000));
    const userId = 'fake-user';
    const message = [requestId, userId, timestamp, createHash('sha256').update(body).digest('hex')].join('\n');
    return {
      'content-type': 'application/json',
      'x-fal-webhook-request-id': requestId,
      'x-fal-webhook-user-id': userId,
      'x-fal-webhook-timestamp': timestamp,
      'x-fal-webhook-signature': sign(null, Buffer.from(message), o.key ?? privateKey).toString('hex'),
    };
  };
  const deliver = async (hookUrl: string, body: string, headers: Record<string, string>) => {
    try {
      const r = await request(hookUrl, { method: 'POST', headers, body, dispatcher: hookAgent });
      await r.body.dump();
      hooksSent.push({ url: hookUrl, status: r.statusCode, headers, body });
      return r.statusCode;
    } catch {
      hooksSent.push({ url: hookUrl, status: 0, headers, body });
      return 0;
    }
  };

  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', baseUrl);
    const raw = await readBody(req);

    const file = /^\/files\/([\w-]+)\.mp4$/.exec(url.pathname);
    if (file && req.method === 'GET') {
      const r = requests.get(file[1]!);
      if (!r) return sendJson(res, 404, { detail: 'Not found' });
      r.downloads++;
      if (expireDownloads > 0) {
        expireDownloads--;
        return sendJson(res, 410, { detail: 'expired' });
      }
      res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': String(opts.video.length) });
      return res.end(opts.video);
    }

    if (url.pathname === '/.well-known/jwks.json' && req.method === 'GET') {
      return sendJson(res, 200, { keys: [{ ...(publicKey.export({ format: 'jwk' }) as object), kid: 'fake-1', alg: 'EdDSA', use: 'sig' }] });
    }
    seenAuth.add(String(req.headers.authorization ?? ''));
    if (req.headers.authorization !== `Key ${opts.key}`) return sendJson(res, 401, { detail: 'Invalid authentication' });

    const status = /^\/([\w.-]+)\/([\w.-]+)\/requests\/([\w-]+)\/status$/.exec(url.pathname);
    if (status && req.method === 'GET') {
      const r = requests.get(status[3]!);
      if (!r) return sendJson(res, 404, { detail: 'Request not found' });
      r.polls++;
      const done = r.done || (!holdCompletion && r.polls > (opts.pollsUntilDone ?? 2));
      const root = `${baseUrl}/${status[1]}/${status[2]}/requests/${status[3]}`;
      return sendJson(res, 200, {
        status: done ? 'COMPLETED' : r.polls === 1 ? 'IN_QUEUE' : 'IN_PROGRESS',
        request_id: status[3],
        response_url: root,
        status_url: `${root}/status`,
        cancel_url: `${root}/cancel`,
        ...(done ? { logs: [], metrics: { inference_time: 1.5 } } : r.polls === 1 ? { queue_position: 0 } : { logs: [] }),
      });
    }
    const cancel = /^\/([\w.-]+)\/([\w.-]+)\/requests\/([\w-]+)\/cancel$/.exec(url.pathname);
    if (cancel && req.method === 'PUT') {
      cancels.push(cancel[3]!);
      return sendJson(res, 202, { status: 'CANCELLATION_REQUESTED' });
    }
    const result = /^\/([\w.-]+)\/([\w.-]+)\/requests\/([\w-]+)$/.exec(url.pathname);
    if (result && req.method === 'GET') {
      const r = requests.get(result[3]!);
      if (!r) return sendJson(res, 404, { detail: 'Request not found' });
      if (r.refused) {
        return sendJson(res, 422, { detail: [{ loc: ['body', 'prompt'], msg: 'The prompt was flagged by the content policy', type: 'content_policy_violation' }] });
      }
      return sendJson(res, 200, { video: { url: `${baseUrl}/files/${result[3]}.mp4`, content_type: 'video/mp4', file_name: 'output.mp4', file_size: opts.video.length } });
    }
    if (req.method === 'POST') {
      const failure = submitFailures.shift();
      if (failure) {
        refusedSubmits.push({ status: failure.status });
        return sendJson(res, failure.status, failure.body ?? { detail: 'busy' }, failure.headers ?? {});
      }
      let input: Record<string, unknown>;
      try {
        input = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        return sendJson(res, 422, { detail: 'Invalid JSON' });
      }
      const endpoint = url.pathname.slice(1);
      const invalid = schemaProblem(endpoint, input);
      if (invalid) return sendJson(res, 422, { detail: [{ loc: ['body', invalid.field], msg: invalid.msg, type: 'value_error' }] });
      const requestId = `req-${++counter}-${Date.now().toString(36)}`;
      submits.push({ endpoint, input, query: Object.fromEntries(url.searchParams), requestId });
      requests.set(requestId, { endpoint, polls: 0, refused: /forbidden/i.test(String(input.prompt ?? '')), downloads: 0 });
      if (holdSubmits) return; // the connection stays open until the caller goes away
      const hook = url.searchParams.get('fal_webhook');
      // A job held IN_PROGRESS does not end, so it sends no webhook either.
      if (hook && opts.webhookAfterMs !== undefined && !holdCompletion) {
        setTimeout(() => {
          requests.get(requestId)!.done = true;
          const body = JSON.stringify({ request_id: requestId, gateway_request_id: requestId, status: 'OK', payload: { video: { url: `${baseUrl}/files/${requestId}.mp4` } } });
          void deliver(hook, body, signed(requestId, body));
        }, opts.webhookAfterMs);
      }
      const [owner, app] = endpoint.split('/');
      const root = `${baseUrl}/${owner}/${app}/requests/${requestId}`;
      return sendJson(res, 200, { status: 'IN_QUEUE', request_id: requestId, response_url: root, status_url: `${root}/status`, cancel_url: `${root}/cancel`, queue_position: 0 });
    }
    return sendJson(res, 404, { detail: 'Not found' });
  });
  baseUrl = await listenOnLoopback(server);
  return {
    url: baseUrl,
    submits,
    refusedSubmits,
    requests,
    cancels,
    seenAuth,
    failNextSubmit: (f: { status: number; headers?: Record<string, string>; body?: unknown }) => submitFailures.push(f),
    expireNextDownloads: (n: number) => (expireDownloads = n),
    holdSubmits: (on: boolean) => (holdSubmits = on),
    hooksSent,
    signed,
    deliver,
    holdCompletion: (on: boolean) => (holdCompletion = on),
    close: () => {
      void hookAgent.close();
      return closeServer(server);
    },
  };
}
export type FalFake = Awaited<ReturnType<typeof startFalFake>>;

/** The input rules of fal's model pages for the endpoints adforge uses, as fal's 422 would name them. */
function schemaProblem(endpoint: string, input: Record<string, unknown>): { field: string; msg: string } | undefined {
  const str = (k: string) => typeof input[k] === 'string' && (input[k] as string).length > 0;
  const kling = endpoint.includes('kling-video/o3/');
  if (!str('prompt') && !kling) return { field: 'prompt', msg: 'Field required' };
  if (endpoint.endsWith('first-last-frame-to-video')) {
    if (!str('first_frame_url') || !str('last_frame_url')) return { field: 'first_frame_url', msg: 'Field required' };
  } else if (endpoint.includes('image-to-video')) {
    // Kling 2.6 Pro names its picture start_image_url; the other image-to-video endpoints image_url.
    const picture = endpoint.startsWith('fal-ai/kling-video/v2.6/') ? 'start_image_url' : 'image_url';
    if (!str(picture)) return { field: picture, msg: 'Field required' };
  }
  if ('image_urls' in input && (!Array.isArray(input.image_urls) || !input.image_urls.every((u) => typeof u === 'string'))) return { field: 'image_urls', msg: 'Input should be a valid list of strings' };
  const d = input.duration;
  if (endpoint.startsWith('fal-ai/veo3.1') && !/^[468]s$/.test(String(d))) return { field: 'duration', msg: "Input should be '4s', '6s' or '8s'" };
  if (endpoint.startsWith('fal-ai/sora-2') && typeof d !== 'number') return { field: 'duration', msg: 'Input should be a valid integer' };
  if ((endpoint.startsWith('fal-ai/kling-video') || endpoint.startsWith('bytedance/')) && !(typeof d === 'string' && /^\d+$/.test(d))) return { field: 'duration', msg: 'Input should be one of the duration strings' };
  if (endpoint.startsWith('bytedance/') && !['480p', '720p', '1080p'].includes(String(input.resolution))) return { field: 'resolution', msg: "Input should be '480p', '720p' or '1080p'" };
  if (endpoint.startsWith('bytedance/seedance-2.0/fast') && input.resolution === '1080p') return { field: 'resolution', msg: "Input should be '480p' or '720p'" };
  return undefined;
}
