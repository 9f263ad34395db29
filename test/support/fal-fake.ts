import { createHash, generateKeyPairSync, randomUUID, sign, type KeyObject } from 'node:crypto';
import http from 'node:http';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Agent, request } from 'undici';
import { checkAnswer, contractsOf, requestProblems, type Contract, type ContractProblem } from './contract.ts';
import { closeServer, listenOnLoopback, readBody, sendJson } from './http-fake.ts';

/*
 * A local stand-in for fal.ai, held to the contracts stored in test/contracts/fal/ (their README
 * names each source): the queue as fal's client drives it (fal-ai/fal-js libs/client/src/queue.ts:
 * submit POST /{endpoint id}[?fal_webhook=], status GET /{owner}/{app}/requests/{id}/status,
 * result GET /{owner}/{app}/requests/{id}, cancel PUT .../cancel), one contract per endpoint for
 * its input, one per output shape for its result, fal's webhook keys (JWKS) and the Platform API's
 * model search (GET /v1/models?endpoint_id=) that the free operator check reads.
 *
 * Every request is checked against its call's contract; a broken one is refused as fal refuses it:
 * - a body that breaks the endpoint's schema: 422 {detail: [{loc: ['body', field...], msg, type, url}]}
 *   (https://docs.fal.ai/errors, "Error Response Structure"; fal-js response.ts ValidationError);
 * - a query parameter the call does not take: 422 with loc ['query', name];
 * - a missing or malformed key: 401 {detail}.
 * Every answer it gives is run through checkAnswer, so it never speaks outside fal's documents.
 * Statuses answer 202 while a request is queued or running and 200 once it is COMPLETED
 * (https://fal.ai/docs/inference-api/queue/status). Result links (/files/<id>.mp4) are fal's CDN,
 * not an API call: real MP4 bytes. Webhooks as https://docs.fal.ai/model-endpoints/webhooks
 * describes them: POSTed to the `fal_webhook` URL when a job ends, body {request_id,
 * gateway_request_id, status, payload}, signed with Ed25519 over request id, user id, timestamp and
 * the body's SHA-256 (X-Fal-Webhook-* headers), the key served as a JWKS at /.well-known/jwks.json.
 *
 * Under load, as fal documents it:
 * - Every job the queue accepts is billable work (`submits`): it runs whether or not its submitter
 *   heard the answer (https://docs.fal.ai/documentation/model-apis/inference/queue, "Requests in
 *   the queue are never dropped"). `delaySubmitAnswers` holds the answer to later submits: the job
 *   is queued at once, the answer comes late or never reaches a caller that gave up.
 * - The account's concurrency limit (`concurrency`) never refuses a submit: jobs past it wait
 *   IN_QUEUE, `queue_position` counting those ahead, until a running one ends
 *   (https://docs.fal.ai/documentation/model-apis/concurrency-limits: "Requests are never
 *   rejected due to concurrency limits").
 * - Answers from fal's own server carry `x-fal-request-id` (fal-ai/fal-js libs/client/src/
 *   response.ts REQUEST_ID_HEADER); a request error is {detail, error_type} with the same type in
 *   X-Fal-Error-Type (https://docs.fal.ai/documentation/model-apis/request-errors).
 *   `failNextSubmit` is a refusal by the front server before the queue saw anything (no request
 *   id: fal's clients resend it, fal-js retry.ts, fal_client _is_ingress_error);
 *   `failNextSubmitQueued` an error answered by fal's own server after it had queued the job,
 *   which its Python client does not resend (fal-ai/fal projects/fal_client client.py
 *   _should_retry_response).
 */
export interface FalSubmit {
  endpoint: string;
  input: Record<string, unknown>;
  query: Record<string, string>;
  requestId: string;
}

export interface FalFakeOptions {
  key: string;
  /** The result every job makes: bytes, or a large file made as it is sent (never held by the fake either). */
  video: Buffer | { size: number; open: () => Readable };
  /** Status polls answered IN_QUEUE / IN_PROGRESS before COMPLETED. */
  pollsUntilDone?: number;
  /** The account's concurrency limit: jobs past it wait IN_QUEUE (their polls do not count) until an earlier one ends. */
  concurrency?: number;
  /** Of those, the first ones answered IN_QUEUE (default 1), queue_position counting down to 0 (the next to run). */
  queuedPolls?: number;
  /** IN_PROGRESS polls asked with logs=1 carry one more log line each ("step k of n", as a sampler logs). */
  stepLogs?: boolean;
  /** With a fal_webhook, the job ends this long after the submit and the webhook is sent. */
  webhookAfterMs?: number;
  /**
   * Jobs end by the clock instead of by polls: each this long after its submit (asked once per
   * job, so a bench can spread the ends), the webhook, if any, sent then (the in-flight bench).
   */
  finishAfterMs?: () => number;
}

interface Req {
  endpoint: string;
  done?: boolean;
  polls: number;
  refused: boolean;
  /** When it was queued: the order in which jobs take the account's concurrency slots. */
  seq: number;
  /** fal's words for a job that failed on its side (COMPLETED with error). */
  failed?: { error: string; error_type: string };
  downloads: number;
  /** When the job ends (ms, this fake's clock), with finishAfterMs. */
  finishAt?: number;
}

const contracts = contractsOf('fal');
const contract = (name: string): Contract => {
  const c = contracts[name];
  if (!c) throw new Error(`no stored fal contract ${name}`);
  return c;
};
/** The submit contract of an endpoint: its id with `/` as `--` (test/contracts/fal/README.md). */
export const submitContractName = (endpoint: string): string => endpoint.replaceAll('/', '--');
/** Which result contract an endpoint's output answers to: each lists its endpoints' OpenAPI documents. */
export const resultContractOf = (endpoint: string): string | undefined =>
  Object.entries(contracts).find(([name, c]) => name.startsWith('result-') && (c.also ?? []).some((a) => new URL(a.url).searchParams.get('endpoint_id') === endpoint))?.[0];

/** fal's 422 item for one broken field (pydantic-style, as https://docs.fal.ai/errors shows). */
function validationItem(p: ContractProblem): { loc: Array<string | number>; msg: string; type: string; url: string } {
  const type = { missing: 'missing', unknown: 'extra_forbidden', enum: 'literal_error', type: 'type_error', invalid: 'value_error' }[p.kind];
  return { loc: [p.where === 'header' ? 'header' : p.where, ...p.path], msg: p.message, type, url: `https://docs.fal.ai/errors/#${type}` };
}

export async function startFalFake(opts: FalFakeOptions) {
  const submits: FalSubmit[] = [];
  const refusedSubmits: Array<{ status: number }> = [];
  /** Requests the contracts refused, with what was wrong (none is expected of adforge). */
  const invalid: Array<{ call: string; problems: ContractProblem[] }> = [];
  const requests = new Map<string, Req>();
  const cancels: string[] = [];
  const seenAuth = new Set<string>();
  /** The model searches the free check made, as their endpoint_id lists. */
  const modelSearches: string[][] = [];
  /** Endpoints the model search no longer lists (fal retired them). */
  const unlisted = new Set<string>();
  /** Queued answers for the next submits (e.g. a 429 with Retry-After) before the normal path. */
  const submitFailures: Array<{ status: number; headers?: Record<string, string>; body?: unknown }> = [];
  /** Errors fal's own server answers to the next submits once it has queued their jobs. */
  const queuedFailures: Array<{ status: number; error_type: string; detail: string }> = [];
  /** How long the answer to each later submit is held (its job queued at once). */
  let submitAnswerDelayMs = 0;
  let seq = 0;
  /** Jobs that fail on fal's side: COMPLETED with `error`, the result a 5xx request error. */
  const jobFailures: Array<{ error: string; error_type: string }> = [];
  /** Result links that answer 410 this many times first (an expired provider link). */
  let expireDownloads = 0;
  /** While set, submits are recorded but never answered (the answer a killed worker never read). */
  let holdSubmits = false;
  /** While set, every job stays IN_PROGRESS. */
  let holdCompletion = false;
  let baseUrl = '';
  // Read at each answer: a test may change what the next result is.
  const videoSize = () => (Buffer.isBuffer(opts.video) ? opts.video.length : opts.video.size);
  /** Each status read (when it arrived, what it answered): the polls a provider's limit would count. */
  const readLog: Array<{ at: number; status: number }> = [];

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

  /** An answer the contract documents, or the test fails. */
  const answer = (res: http.ServerResponse, c: Contract, status: number, body: unknown, headers: Record<string, string> = {}) => {
    checkAnswer(c, status, body);
    sendJson(res, status, body, headers);
  };
  /** The request against its call's contract: the problems, recorded, or none. */
  const problemsOf = (c: Contract, r: { headers: http.IncomingHttpHeaders; query: Record<string, unknown>; body?: unknown }) => {
    const problems = requestProblems(c, { headers: r.headers as Record<string, unknown>, query: r.query, ...('body' in r ? { body: r.body } : {}) });
    if (problems.length) invalid.push({ call: c.call, problems });
    return problems;
  };
  /** fal's answer to a request that breaks the contract: a bad key 401, anything else 422 naming the fields. */
  const refuse = (res: http.ServerResponse, c: Contract, problems: ContractProblem[]) => {
    if (problems.some((p) => p.where === 'header' && p.path[0] === 'authorization')) return answer(res, c, 401, { detail: 'Invalid authentication' });
    return answer(res, c, 422, { detail: problems.map(validationItem) });
  };
  // Repeated parameters (endpoint_id=a&endpoint_id=b) are a list, as the Platform API reads them.
  const queryOf = (url: URL): Record<string, string | string[]> => {
    const q: Record<string, string | string[]> = {};
    for (const k of new Set(url.searchParams.keys())) {
      const all = url.searchParams.getAll(k);
      q[k] = all.length > 1 ? all : all[0]!;
    }
    return q;
  };
  const outputOf = (endpoint: string, requestId: string): Record<string, unknown> => {
    const video = { url: `${baseUrl}/files/${requestId}.mp4`, content_type: 'video/mp4', file_name: 'output.mp4', file_size: videoSize() };
    const shape = resultContractOf(endpoint);
    if (shape === 'result-seedance') return { video, seed: 42 };
    if (shape === 'result-sora') return { video, video_id: `video_${requestId}` };
    return { video };
  };

  /**
   * How many jobs wait ahead of this one for a concurrency slot, or undefined when it holds one:
   * the earliest jobs not yet ended hold the account's slots.
   */
  const waitingAhead = (r: Req): number | undefined => {
    if (opts.concurrency === undefined || r.done) return undefined;
    const ahead = [...requests.values()].filter((o) => !o.done && o.seq < r.seq).length;
    return ahead < opts.concurrency ? undefined : ahead - opts.concurrency;
  };

  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', baseUrl);
    const raw = await readBody(req);
    const query = queryOf(url);

    const file = /^\/files\/([\w-]+)\.mp4$/.exec(url.pathname);
    if (file && req.method === 'GET') {
      const r = requests.get(file[1]!);
      if (!r) return sendJson(res, 404, { detail: 'Not found' });
      r.downloads++;
      if (expireDownloads > 0) {
        expireDownloads--;
        return sendJson(res, 410, { detail: 'expired' });
      }
      res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': String(videoSize()) });
      if (Buffer.isBuffer(opts.video)) return res.end(opts.video);
      // A reader that hangs up (a refused or failed copy) ends the generator with it.
      return pipeline(opts.video.open(), res).catch(() => {});
    }

    if (url.pathname === '/.well-known/jwks.json' && req.method === 'GET') {
      const c = contract('webhook-keys');
      const problems = problemsOf(c, { headers: req.headers, query });
      if (problems.length) return refuse(res, c, problems);
      return answer(res, c, 200, { keys: [{ ...(publicKey.export({ format: 'jwk' }) as object), kid: 'fake-1', alg: 'EdDSA', use: 'sig' }] });
    }

    // The Platform API's model search: no key needed, every endpoint with a stored contract known.
    if (url.pathname === '/v1/models' && req.method === 'GET') {
      const c = contract('models-find');
      const problems = problemsOf(c, { headers: req.headers, query });
      if (problems.length) return answer(res, c, 400, { detail: problems.map((p) => p.message).join('; ') });
      const ids = ([] as string[]).concat(query.endpoint_id ?? []);
      modelSearches.push(ids);
      const known = ids.filter((id) => contracts[submitContractName(id)] && !unlisted.has(id));
      const models = known.map((id) => ({ endpoint_id: id, metadata: { display_name: id, category: 'text-to-video', status: id.startsWith('fal-ai/sora-2') ? 'deprecated' : 'active', model_url: `https://fal.run/${id}` } }));
      return answer(res, c, 200, { models, next_cursor: null, has_more: false });
    }

    seenAuth.add(String(req.headers.authorization ?? ''));
    const keyOk = req.headers.authorization === `Key ${opts.key}`;

    const status = /^\/([\w.-]+)\/([\w.-]+)\/requests\/([\w-]+)\/status$/.exec(url.pathname);
    if (status && req.method === 'GET') {
      const c = contract('queue-status');
      if (!keyOk) return answer(res, c, 401, { detail: 'Invalid authentication' });
      const problems = problemsOf(c, { headers: req.headers, query });
      if (problems.length) return refuse(res, c, problems);
      const r = requests.get(status[3]!);
      if (!r) return answer(res, c, 404, { detail: 'Request not found' });
      const root = `${baseUrl}/${status[1]}/${status[2]}/requests/${status[3]}`;
      const urls = { request_id: status[3], response_url: root, status_url: `${root}/status`, cancel_url: `${root}/cancel` };
      const waiting = waitingAhead(r);
      if (waiting !== undefined) {
        readLog.push({ at: Date.now(), status: 202 });
        return answer(res, c, 202, { status: 'IN_QUEUE', ...urls, queue_position: waiting, logs: query.logs === '1' ? [] : null });
      }
      r.polls++;
      const ended = r.finishAt !== undefined ? Date.now() >= r.finishAt : r.polls > (opts.pollsUntilDone ?? 2);
      const done = r.done || (!holdCompletion && ended);
      readLog.push({ at: Date.now(), status: done ? 200 : 202 });
      if (done) r.done = true;
      const queuedPolls = opts.queuedPolls ?? 1;
      const ran = Math.max(0, r.polls - queuedPolls);
      const steps = Math.max(1, (opts.pollsUntilDone ?? 2) - queuedPolls);
      const lines = opts.stepLogs ? Array.from({ length: Math.min(ran, steps) }, (_, i) => ({ message: `step ${i + 1} of ${steps}`, level: 'INFO', source: 'USER', timestamp: new Date().toISOString() })) : [];
      const logs = query.logs === '1' ? lines : null;
      if (done) return answer(res, c, 200, { status: 'COMPLETED', ...urls, logs, metrics: { inference_time: 1.5 }, ...(r.failed ?? {}) });
      return answer(res, c, 202, r.polls <= queuedPolls ? { status: 'IN_QUEUE', ...urls, queue_position: queuedPolls - r.polls, logs } : { status: 'IN_PROGRESS', ...urls, logs });
    }
    const cancel = /^\/([\w.-]+)\/([\w.-]+)\/requests\/([\w-]+)\/cancel$/.exec(url.pathname);
    if (cancel && req.method === 'PUT') {
      const c = contract('queue-cancel');
      if (!keyOk) return answer(res, c, 401, { detail: 'Invalid authentication' });
      const problems = problemsOf(c, { headers: req.headers, query });
      if (problems.length) return refuse(res, c, problems);
      if (!requests.has(cancel[3]!)) return answer(res, c, 404, { status: 'NOT_FOUND' });
      cancels.push(cancel[3]!);
      return answer(res, c, 202, { status: 'CANCELLATION_REQUESTED' });
    }
    const result = /^\/([\w.-]+)\/([\w.-]+)\/requests\/([\w-]+)$/.exec(url.pathname);
    if (result && req.method === 'GET') {
      const r = requests.get(result[3]!);
      const c = contract(r ? (resultContractOf(r.endpoint) ?? 'result-video') : 'result-video');
      if (!keyOk) return answer(res, c, 401, { detail: 'Invalid authentication' });
      const problems = problemsOf(c, { headers: req.headers, query });
      if (problems.length) return refuse(res, c, problems);
      if (!r) return answer(res, c, 404, { detail: 'Request not found' });
      if (r.refused) {
        return answer(res, c, 422, { detail: [{ loc: ['body', 'prompt'], msg: 'The prompt was flagged by the content policy', type: 'content_policy_violation', url: 'https://docs.fal.ai/errors/#content_policy_violation' }] });
      }
      if (r.failed) return answer(res, c, 500, { detail: r.failed.error, error_type: r.failed.error_type }, { 'x-fal-error-type': r.failed.error_type });
      return answer(res, c, 200, outputOf(r.endpoint, result[3]!));
    }
    if (req.method === 'POST') {
      const endpoint = url.pathname.slice(1);
      const c = contracts[submitContractName(endpoint)];
      if (!c) return sendJson(res, 404, { detail: `Application '${endpoint}' not found` });
      if (!keyOk) return answer(res, c, 401, { detail: 'Invalid authentication' });
      const failure = submitFailures.shift();
      if (failure) {
        refusedSubmits.push({ status: failure.status });
        return answer(res, c, failure.status, failure.body ?? { detail: 'busy' }, failure.headers ?? {});
      }
      let input: unknown;
      try {
        input = JSON.parse(raw);
      } catch {
        return answer(res, c, 422, { detail: [{ loc: ['body'], msg: 'Invalid JSON', type: 'json_invalid', url: 'https://docs.fal.ai/errors/#json_invalid' }] });
      }
      const problems = problemsOf(c, { headers: req.headers, query, body: input });
      if (problems.length) return refuse(res, c, problems);
      const body = input as Record<string, unknown>;
      const requestId = randomUUID();
      submits.push({ endpoint, input: body, query: Object.fromEntries(url.searchParams), requestId });
      const failed = jobFailures.shift();
      const finishAt = opts.finishAfterMs ? Date.now() + opts.finishAfterMs() : undefined;
      requests.set(requestId, { endpoint, seq: ++seq, polls: 0, refused: /forbidden/i.test(String(body.prompt ?? '')), downloads: 0, ...(failed ? { failed } : {}), ...(finishAt !== undefined ? { finishAt } : {}) });
      if (holdSubmits) return; // the connection stays open until the caller goes away
      const serverError = queuedFailures.shift();
      if (serverError) {
        const { status: code, ...words } = serverError;
        return answer(res, c, code, words, { 'x-fal-request-id': requestId, 'x-fal-error-type': words.error_type });
      }
      // The job is queued and runs; only its answer is late (and lost to a caller that gave up).
      if (submitAnswerDelayMs > 0) await new Promise((r) => setTimeout(r, submitAnswerDelayMs));
      if (res.destroyed) return;
      const hook = url.searchParams.get('fal_webhook');
      const hookAfter = finishAt !== undefined ? finishAt - Date.now() : opts.webhookAfterMs;
      // A job held IN_PROGRESS does not end, so it sends no webhook either.
      if (hook && hookAfter !== undefined && !holdCompletion) {
        setTimeout(() => {
          requests.get(requestId)!.done = true;
          const body = JSON.stringify({ request_id: requestId, gateway_request_id: requestId, status: 'OK', payload: outputOf(endpoint, requestId) });
          void deliver(hook, body, signed(requestId, body));
        }, hookAfter);
      }
      const [owner, app] = endpoint.split('/');
      const root = `${baseUrl}/${owner}/${app}/requests/${requestId}`;
      return answer(res, c, 200, { status: 'IN_QUEUE', request_id: requestId, response_url: root, status_url: `${root}/status`, cancel_url: `${root}/cancel`, queue_position: 0 }, { 'x-fal-request-id': requestId });
    }
    return sendJson(res, 404, { detail: 'Not found' });
  });
  baseUrl = await listenOnLoopback(server);
  return {
    url: baseUrl,
    submits,
    refusedSubmits,
    invalid,
    requests,
    readLog,
    cancels,
    seenAuth,
    modelSearches,
    /** The front server refuses the next submit before the queue sees it: nothing is queued. */
    failNextSubmit: (f: { status: number; headers?: Record<string, string>; body?: unknown }) => submitFailures.push(f),
    /** fal's own server queues the next submit's job, then answers this request error (with its request id). */
    failNextSubmitQueued: (f: { status: number; error_type: string; detail: string }) => queuedFailures.push(f),
    /** Later submits are queued at once and answered this long after (0: at once). */
    delaySubmitAnswers: (ms: number) => (submitAnswerDelayMs = ms),
    /** The next job accepted fails on fal's side: COMPLETED with this error. */
    failNextJob: (f: { error: string; error_type: string }) => jobFailures.push(f),
    /** The model search stops listing this endpoint (fal retired it). */
    unlist: (endpoint: string) => unlisted.add(endpoint),
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
