import http from 'node:http';
import type { AddressInfo } from 'node:net';

/*
 * A local stand-in for fal.ai's queue API, following the contract its client implements:
 * fal-ai/fal-js libs/client/src/queue.ts (POST {queue}/{endpoint id}[?fal_webhook=] -> {request_id,
 * status, status_url, response_url, cancel_url, queue_position}; GET {owner}/{app}/requests/{id}/status
 * -> IN_QUEUE | IN_PROGRESS | COMPLETED; GET {owner}/{app}/requests/{id} -> the output, or an error
 * JSON with `detail`; PUT .../cancel), libs/client/src/response.ts (422 with pydantic-style
 * `detail` for refused input) and the Veo 3.1 model pages (output {video: {url}}).
 * Auth: `Authorization: Key <key>`. It records what it received and serves real MP4 bytes.
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
}

interface Req {
  endpoint: string;
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

  const json = (res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };

  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', baseUrl);
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');

    const file = /^\/files\/([\w-]+)\.mp4$/.exec(url.pathname);
    if (file && req.method === 'GET') {
      const r = requests.get(file[1]!);
      if (!r) return json(res, 404, { detail: 'Not found' });
      r.downloads++;
      if (expireDownloads > 0) {
        expireDownloads--;
        return json(res, 410, { detail: 'expired' });
      }
      res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': String(opts.video.length) });
      return res.end(opts.video);
    }

    seenAuth.add(String(req.headers.authorization ?? ''));
    if (req.headers.authorization !== `Key ${opts.key}`) return json(res, 401, { detail: 'Invalid authentication' });

    const status = /^\/([\w.-]+)\/([\w.-]+)\/requests\/([\w-]+)\/status$/.exec(url.pathname);
    if (status && req.method === 'GET') {
      const r = requests.get(status[3]!);
      if (!r) return json(res, 404, { detail: 'Request not found' });
      r.polls++;
      const done = !holdCompletion && r.polls > (opts.pollsUntilDone ?? 2);
      const root = `${baseUrl}/${status[1]}/${status[2]}/requests/${status[3]}`;
      return json(res, 200, {
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
      return json(res, 202, { status: 'CANCELLATION_REQUESTED' });
    }
    const result = /^\/([\w.-]+)\/([\w.-]+)\/requests\/([\w-]+)$/.exec(url.pathname);
    if (result && req.method === 'GET') {
      const r = requests.get(result[3]!);
      if (!r) return json(res, 404, { detail: 'Request not found' });
      if (r.refused) {
        return json(res, 422, { detail: [{ loc: ['body', 'prompt'], msg: 'The prompt was flagged by the content policy', type: 'content_policy_violation' }] });
      }
      return json(res, 200, { video: { url: `${baseUrl}/files/${result[3]}.mp4`, content_type: 'video/mp4', file_name: 'output.mp4', file_size: opts.video.length } });
    }
    if (req.method === 'POST') {
      const failure = submitFailures.shift();
      if (failure) {
        refusedSubmits.push({ status: failure.status });
        return json(res, failure.status, failure.body ?? { detail: 'busy' }, failure.headers ?? {});
      }
      let input: Record<string, unknown>;
      try {
        input = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        return json(res, 422, { detail: 'Invalid JSON' });
      }
      const endpoint = url.pathname.slice(1);
      const requestId = `req-${++counter}-${Date.now().toString(36)}`;
      submits.push({ endpoint, input, query: Object.fromEntries(url.searchParams), requestId });
      requests.set(requestId, { endpoint, polls: 0, refused: /forbidden/i.test(String(input.prompt ?? '')), downloads: 0 });
      if (holdSubmits) return; // the connection stays open until the caller goes away
      const [owner, app] = endpoint.split('/');
      const root = `${baseUrl}/${owner}/${app}/requests/${requestId}`;
      return json(res, 200, { status: 'IN_QUEUE', request_id: requestId, response_url: root, status_url: `${root}/status`, cancel_url: `${root}/cancel`, queue_position: 0 });
    }
    return json(res, 404, { detail: 'Not found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
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
    holdCompletion: (on: boolean) => (holdCompletion = on),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
export type FalFake = Awaited<ReturnType<typeof startFalFake>>;
