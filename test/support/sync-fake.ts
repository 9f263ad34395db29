import { createHash, createHmac } from 'node:crypto';
import http from 'node:http';
import { Agent, request } from 'undici';
import { checkAnswer, formFields, loadContract, requestProblems, type Contract, type ContractProblem, jsonPartProblems } from './contract.ts';
import { readForm, readRaw, sendJson, servedVideo, listenOnLoopback, closeServer } from './http-fake.ts';

/*
 * A local stand-in for sync.so's API, held to the contracts in test/contracts/sync/:
 * - POST /v2/generate, the multipart form (generate-multipart.json, from
 *   synchronicity-labs/sync-typescript-sdk at f0fef21, Client.ts createWithFiles, and
 *   sync.so/docs/api-reference/api/generate-api/create-with-files): `model`, the `video` and
 *   `audio` files, `options` as JSON, `webhookUrl`. The optional `Idempotency-Key` header
 *   (sync.so/docs/api-reference/guides/idempotency): a repeat with the same key replays the first
 *   answer instead of making another generation. A create may be answered late (`delaySubmits`:
 *   the generation exists from the start); a repeat while the first is still being answered gets
 *   503 {errorCode: IDEMPOTENCY_OUTCOME_UNKNOWN} and makes nothing (the keyed uncertain outcome
 *   create-with-files documents; sync's error-handling page: an IDEMPOTENCY_* answer authorizes
 *   no fresh key; its idempotency guide lists every IDEMPOTENCY_* code, a list not readable here,
 *   so the fake answers the one code whose status is recorded). `answerNextUnknown` answers a
 *   made generation that way, with its `generationId` ("an unknown response may include
 *   generationId; poll it") or without. With `generateLimit`, creates past sync's 100 a minute
 *   (rate-limits page) are its 429.
 * - GET /v2/generate/{id} (get-generation.json, docs.sync.so get-generate): PENDING, PROCESSING,
 *   then COMPLETED with outputUrl, or FAILED / REJECTED / CANCELED with `error` and `error_code`.
 * - GET /v2/models (list-models.json, sync.so/docs/api-reference/api/models-api/list).
 * - GET /v2/generations (list-generations.json, sync.so/docs/api-reference/api/generate-api/list):
 *   the generations named by `ids` and in `status`, newest first, `limit` of them; one read
 *   against `readLimit`, and each generation listed counts as looked at.
 * A request that breaks its contract is refused as sync refuses it: 400 with the error body of the
 * SDK's GenerationError, {message, statusCode}, plus `field` (the errors section of the
 * models-api page) naming the field; a wrong key is 401 with the same shape. Every answer is held
 * to the contract (checkAnswer). Webhooks follow synchronicity-labs/docs-v2 api-reference/webhooks.mdx:
 * a POST of the generation to webhookUrl, `Sync-Signature: t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<JSON>")>`.
 */
export interface SyncSubmit {
  id: string;
  model: string;
  options: Record<string, unknown> | undefined;
  webhookUrl: string | undefined;
  idempotencyKey: string | undefined;
  video: Buffer;
  videoType: string;
  audio: Buffer;
  audioType: string;
}

/** How a generation ends when it is not COMPLETED: sync's status, its `error` and `error_code`. */
export interface SyncEnding {
  status: 'FAILED' | 'REJECTED' | 'CANCELED' | 'TIMED_OUT';
  error: string;
  errorCode?: string;
}

const CONTRACTS = { generate: loadContract('sync', 'generate-multipart'), get: loadContract('sync', 'get-generation'), models: loadContract('sync', 'list-models'), list: loadContract('sync', 'list-generations') };
const DEFAULT_MODELS = ['sync-3', 'lipsync-2', 'lipsync-2-pro', 'lipsync-1.9.0-beta', 'react-1'];

export async function startSyncFake(opts: {
  key: string;
  webhookSecret: string;
  video: Buffer;
  pollsUntilDone?: number;
  webhookAfterMs?: number;
  models?: string[];
  /**
   * GET /v2/generate/{id} allowed in a window (sync's rate-limits page: 600 a minute per IP); past
   * it, sync's 429 {statusCode: 429, message, errorCode: rate_limit_exceeded}, with no Retry-After (sync documents none).
   */
  readLimit?: { requests: number; perMs: number };
  /** POST /v2/generate allowed in a window (sync's rate-limits page: 100 a minute per IP); past it, the same 429. */
  generateLimit?: { requests: number; perMs: number };
}) {
  const submits: SyncSubmit[] = [];
  /** Every POST /v2/generate that reached the fake, kept or not: what a resend looks like. */
  const posts: Array<{ idempotencyKey: string | undefined; answered: number | 'dropped'; fingerprint: string }> = [];
  const jobs = new Map<string, { polls: number; done: boolean; ending?: SyncEnding }>();
  const hooksSent: Array<{ status: number; body: string }> = [];
  const hookAgent = new Agent({ connect: { rejectUnauthorized: false } });
  let endNext: SyncEnding | undefined;
  let dropNext = false;
  /** How long a create takes to answer (ms): the generation exists from the moment its request is read. */
  let submitDelayMs = 0;
  /** Keys whose first request is still being answered. */
  const inFlight = new Set<string>();
  /** The first answer under each key, replayed to a repeat. */
  const firstAnswers = new Map<string, { status: number; body: unknown }>();
  /** The next generation made is answered 503 IDEMPOTENCY_OUTCOME_UNKNOWN instead of its 201. */
  let unknownNext: { withGenerationId: boolean } | undefined;
  let counter = 0;
  let base = '';
  /** Every GET of a generation or of the list (one read each; when it arrived, its status), 429s included: what a bench counts as polls. */
  const readLog: Array<{ at: number; status: number }> = [];
  /** Every GET /v2/generations served: the ids it asked for and its limit. */
  const listReads: Array<{ ids: string[]; limit: number }> = [];
  const recentReads: number[] = [];
  const recentGenerates: number[] = [];

  const answer = (res: http.ServerResponse, c: Contract, status: number, body: unknown) => {
    checkAnswer(c, status, body);
    sendJson(res, status, body);
  };
  // A misnamed field is both unknown and, under its right name, missing: the field sent is the one named.
  const ORDER: Record<ContractProblem['kind'], number> = { unknown: 0, enum: 1, type: 2, invalid: 3, missing: 4 };
  const refuse = (res: http.ServerResponse, c: Contract, found: ContractProblem[]) => {
    const problems = [...found].sort((a, b) => ORDER[a.kind] - ORDER[b.kind]);
    answer(res, c, 400, { message: problems.map((p) => p.message), statusCode: 400, field: problems[0]!.path.join('.') || problems[0]!.where });
  };

  const generation = (id: string, status: string, extra: Record<string, unknown> = {}) => ({
    id,
    createdAt: new Date().toISOString(),
    status,
    model: submits.find((s) => s.id === id)?.model ?? 'lipsync-2',
    input: [],
    ...(status === 'COMPLETED' ? { outputUrl: `${base}/files/${id}.mp4`, outputDuration: 1 } : {}),
    ...extra,
  });
  const ended = (id: string, e: SyncEnding) => generation(id, e.status, { error: e.error, ...(e.errorCode ? { error_code: e.errorCode } : {}) });
  const current = (id: string) => {
    const job = jobs.get(id)!;
    if (!job.done) return generation(id, job.polls <= 1 ? 'PENDING' : 'PROCESSING');
    return job.ending ? ended(id, job.ending) : generation(id, 'COMPLETED');
  };
  /**
   * GET /v2/generations: the generations named by `ids` and in one of `status` (each a
   * comma-separated list), newest first, `limit` of them; each listed one counts as looked at.
   */
  const list = (q: URLSearchParams) => {
    const ids = q.get('ids')?.split(',');
    const statuses = q.get('status')?.split(',');
    const shown = [...jobs.keys()].reverse().filter((id) => !ids || ids.includes(id));
    listReads.push({ ids: ids ?? [], limit: Number(q.get('limit') ?? 0) });
    const out = shown.map((id) => {
      const job = jobs.get(id)!;
      job.polls++;
      if (job.polls > (opts.pollsUntilDone ?? 1)) job.done = true;
      return current(id);
    });
    return out.filter((g) => !statuses || statuses.includes(g.status)).slice(0, Number(q.get('limit') ?? out.length));
  };
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

  async function create(req: http.IncomingMessage, res: http.ServerResponse, raw: Buffer, key: string | undefined) {
    const c = CONTRACTS.generate;
    if (!String(req.headers['content-type']).startsWith('multipart/form-data')) return answer(res, c, 400, { message: 'this fake takes the multipart form (the SDK createWithFiles)', statusCode: 400 });
    const form = await readForm(req, raw);
    const fields = await formFields(form);
    const problems = [...requestProblems(c, { headers: req.headers, body: fields }), ...jsonPartProblems(c, 'options', fields.options)];
    if (problems.length) return refuse(res, c, problems);
    const now = Date.now();
    const limit = opts.generateLimit;
    while (limit && recentGenerates.length && recentGenerates[0]! <= now - limit.perMs) recentGenerates.shift();
    if (limit && recentGenerates.length >= limit.requests) return answer(res, c, 429, { message: 'Rate limit exceeded. Please try again later.', statusCode: 429, errorCode: 'rate_limit_exceeded' });
    if (limit) recentGenerates.push(now);
    const drop = dropNext;
    dropNext = false;
    // What sync's guide asks of a retry besides the key: the same inputs (the form's text and file bytes).
    const fingerprint = createHash('sha256').update(raw.toString('latin1').replaceAll(/^--.*$/gm, '')).digest('hex');
    const post: (typeof posts)[number] = { idempotencyKey: key, answered: drop ? 'dropped' : 201, fingerprint };
    posts.push(post);
    // The first request under this key is still being answered: its outcome is not known yet, nothing new is made.
    if (key !== undefined && inFlight.has(key)) {
      post.answered = 503;
      return answer(res, c, 503, { message: 'The outcome of the first request with this Idempotency-Key is not known yet; retry with the same key and payload.', statusCode: 503, errorCode: 'IDEMPOTENCY_OUTCOME_UNKNOWN' });
    }
    // The same key: the first answer again, not another generation (sync's idempotency guide).
    const replayed = key === undefined ? undefined : firstAnswers.get(key);
    if (replayed) return drop ? res.destroy() : answer(res, c, replayed.status, replayed.body);
    const video = form.get('video');
    const audio = form.get('audio');
    if (!(video instanceof File) || !(audio instanceof File)) return answer(res, c, 400, { message: 'one video input and one audio input are required', statusCode: 400, field: video instanceof File ? 'audio' : 'video' });
    const videoBytes = Buffer.from(await video.arrayBuffer());
    // An MP4 starts with an ftyp box.
    if (videoBytes.subarray(4, 8).toString('latin1') !== 'ftyp') return answer(res, c, 422, { message: 'the video input is not a video', statusCode: 422, field: 'video' });
    const id = `gen-${++counter}`;
    const webhookUrl = typeof fields.webhookUrl === 'string' ? fields.webhookUrl : undefined;
    submits.push({
      id,
      model: String(fields.model),
      options: typeof fields.options === 'string' ? (JSON.parse(fields.options) as Record<string, unknown>) : undefined,
      webhookUrl,
      idempotencyKey: key,
      video: videoBytes,
      videoType: video.type,
      audio: Buffer.from(await audio.arrayBuffer()),
      audioType: audio.type,
    });
    jobs.set(id, { polls: 0, done: false, ...(endNext ? { ending: endNext } : {}) });
    endNext = undefined;
    if (key !== undefined) {
      firstAnswers.set(key, { status: 201, body: generation(id, 'PENDING') });
    }
    if (webhookUrl && opts.webhookAfterMs !== undefined) {
      setTimeout(() => {
        jobs.get(id)!.done = true;
        const body = JSON.stringify(current(id));
        void deliver(webhookUrl, body, sign(body));
      }, opts.webhookAfterMs);
    }
    // A long create: the generation exists already; its answer comes later, to a client that may have given up.
    if (submitDelayMs > 0 && key !== undefined) {
      inFlight.add(key);
      await new Promise((r) => setTimeout(r, submitDelayMs));
      inFlight.delete(key);
    } else if (submitDelayMs > 0) await new Promise((r) => setTimeout(r, submitDelayMs));
    // The generation exists; the answer is lost on the way back (a reset after sending).
    if (drop) return res.destroy();
    if (unknownNext) {
      const withId = unknownNext.withGenerationId;
      unknownNext = undefined;
      post.answered = 503;
      return answer(res, c, 503, { message: 'The outcome of this request could not be confirmed; retry with the same key and payload.', statusCode: 503, errorCode: 'IDEMPOTENCY_OUTCOME_UNKNOWN', ...(withId ? { generationId: id } : {}) });
    }
    return answer(res, c, 201, generation(id, 'PENDING'));
  }

  const server = http.createServer(async (req, res) => {
    const raw = await readRaw(req);
    const url = new URL(req.url ?? '/', base);
    if (servedVideo(req, res, url, opts.video)) return;
    const one = /^\/v2\/generate\/([^/]+)$/.exec(url.pathname);
    const c =
      req.method === 'POST' && url.pathname === '/v2/generate'
        ? CONTRACTS.generate
        : req.method === 'GET' && one
          ? CONTRACTS.get
          : req.method === 'GET' && url.pathname === '/v2/models'
            ? CONTRACTS.models
            : req.method === 'GET' && url.pathname === '/v2/generations'
              ? CONTRACTS.list
              : undefined;
    if (!c) return sendJson(res, 404, { message: `Cannot ${req.method} ${url.pathname}`, statusCode: 404 });
    if (req.headers['x-api-key'] !== opts.key) return answer(res, c, 401, { message: 'Unauthorized', statusCode: 401 });
    const key = req.headers['idempotency-key'];
    if (Array.isArray(key)) return answer(res, c, 400, { message: 'exactly one Idempotency-Key header', statusCode: 400, errorCode: 'INVALID_IDEMPOTENCY_KEY', field: 'Idempotency-Key' });
    if (c === CONTRACTS.generate) return create(req, res, raw, key);
    const problems = requestProblems(c, { headers: req.headers, query: Object.fromEntries(url.searchParams) });
    if (problems.length) return refuse(res, c, problems);
    if (c === CONTRACTS.models) return answer(res, c, 200, (opts.models ?? DEFAULT_MODELS).map((name) => ({ name, type: 'lipsync', version: name.replace(/^\D+/, '') || '1', description: `${name}` })));
    const now = Date.now();
    const limit = opts.readLimit;
    while (limit && recentReads.length && recentReads[0]! <= now - limit.perMs) recentReads.shift();
    if (limit && recentReads.length >= limit.requests) {
      readLog.push({ at: now, status: 429 });
      return answer(res, c, 429, { message: 'Rate limit exceeded. Please try again later.', statusCode: 429, errorCode: 'rate_limit_exceeded' });
    }
    if (limit) recentReads.push(now);
    readLog.push({ at: now, status: 200 });
    if (c === CONTRACTS.list) return answer(res, c, 200, list(url.searchParams));
    const job = jobs.get(one![1]!);
    if (!job) return answer(res, c, 404, { message: 'Generation not found', statusCode: 404 });
    job.polls++;
    if (job.polls > (opts.pollsUntilDone ?? 1)) job.done = true;
    return answer(res, c, 200, current(one![1]!));
  });
  base = await listenOnLoopback(server);
  return {
    url: base,
    submits,
    posts,
    jobs,
    hooksSent,
    readLog,
    listReads,
    sign,
    /** The generation as sync would post it to its webhook now (for a test to deliver late). */
    generationOf: (id: string) => current(id),
    /** The next generation fails with this message (status FAILED). */
    failNext: (message: string) => (endNext = { status: 'FAILED', error: message, errorCode: 'generation_unhandled_error' }),
    /** The next generation ends this way (REJECTED, CANCELED ...). */
    endNext: (e: SyncEnding) => (endNext = e),
    /** The next POST is taken (a generation made, or replayed) but its answer never arrives. */
    dropNextAnswer: () => (dropNext = true),
    /** Creates answer this long after their request is read (the generation is made at once). */
    delaySubmits: (ms: number) => (submitDelayMs = ms),
    /** The next generation made is answered 503 IDEMPOTENCY_OUTCOME_UNKNOWN, with its generationId or without. */
    answerNextUnknown: (o: { withGenerationId: boolean }) => (unknownNext = o),
    close: () => {
      void hookAgent.close();
      return closeServer(server);
    },
  };
}
