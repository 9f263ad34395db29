import http from 'node:http';
import { Agent, request } from 'undici';
import { fileTypeFromBuffer } from 'file-type';
import { checkAnswer, formFields, loadContract, requestProblems, type Contract, type ContractProblem } from './contract.ts';
import { readForm, readRaw, sendJson, servedVideo, listenOnLoopback, closeServer } from './http-fake.ts';

/*
 * A local stand-in for HeyGen's API, held to the contracts in test/contracts/heygen/ (HeyGen's
 * OpenAPI as heygen-com/heygen-cli's generated gen/*.go carries it, and the face swap workflow of
 * heygen-com/skills-legacy skills/faceswap/SKILL.md). Every request is checked against its call's
 * contract and every answer against the documented shapes.
 *
 * Refusals are HeyGen's (developers.heygen.com/reference/upload-asset, StandardAPIError): a wrong
 * or missing `x-api-key` is 401 {error: {code: "authentication_failed", message}}; a request that
 * breaks its contract is 400 {error: {code: "invalid_parameter", message, param}} naming the field;
 * an unknown video or translation is 404 {error: {code: "not_found"}}; an unknown workflow execution
 * answers status "not_found" (the skill's poller reads it so). v3 mutations honour `Idempotency-Key`:
 * a repeat replays the first answer. An upload's type is the one its bytes show, as HeyGen detects it.
 * It records what it received and serves real MP4 bytes as results.
 *
 * Reads of jobs (GET of a video, a translation, an execution) may be limited to a window a test
 * gives (`readLimit`): past it, 429 rate_limit_exceeded with `Retry-After` in seconds (HeyGen's
 * usage-limits page: "429 Too Many Requests with a Retry-After header"). With `callbackAfterMs`, a
 * video or translation created with `callback_url` ends that long after its create and HeyGen's
 * callback is POSTed there: {event_type: avatar_video.success | video_translate.success,
 * event_data: {video_id, url, callback_id}} (the event names of HeyGen's webhook events; adforge
 * does not read the body, it reads the job: docs/providers.md).
 *
 * GET /v3/videos/statuses (heygen-cli gen/video.go VideoStatusesList) answers up to 100 videos named
 * by `video_ids` in one read: queued, processing, completed or failed (with `error`), not_found for
 * an id it does not know; no video_url. One read against `readLimit`; each video named counts as
 * looked at. A queued video's own GET shows `pending` (its enum) or, when a test asks
 * (`showQueuedAs`), `waiting`: the word the create answers for the same video (gen/video.go VideoCreate).
 *
 * Submits as HeyGen answers them under load:
 * - a create may take long to answer (`delaySubmits`): the job exists from the moment the request
 *   is read, its answer comes after the delay, and is kept for a replay under its key;
 * - a repeat under the same `Idempotency-Key` while the first is still in flight gets 409
 *   {error: {code: "request_in_progress"}} (the Idempotency-Key parameter of every v3 mutation on
 *   developers.heygen.com: "A retry that arrives while the original is still in flight gets a 409
 *   request_in_progress"); after it, the first answer is replayed;
 * - with `concurrentJobs`, a video or translation created while that many are unfinished is refused
 *   429 rate_limit_exceeded with Retry-After (developers.heygen.com/docs/usage-limits: concurrent
 *   jobs, 10 on Pay-As-You-Go, include avatar video renders and video translations; "Exceeding the
 *   limit returns 429 Too Many Requests with a Retry-After header").
 */
interface Job {
  kind: 'video' | 'translation' | 'workflow';
  polls: number;
  failure?: string;
  lost?: boolean;
  /** Ended by the callback timer (callbackAfterMs), whatever its polls. */
  ended?: boolean;
  /** When the job ends (ms, this fake's clock), with finishAfterMs. */
  finishAt?: number;
}

interface Asset {
  bytes: Buffer;
  /** The type HeyGen would detect from the bytes. */
  type: string;
  filename: string;
}

const contract = (name: string): Contract => loadContract('heygen', name);

/** The language names HeyGen's own documents spell out: the languages contract's examples. */
export const HEYGEN_DOCUMENTED_LANGUAGES: readonly string[] = (
  contract('list-translation-languages').responses['200'] as { properties: { data: { properties: { languages: { items: { examples: string[] } } } } } }
).properties.data.properties.languages.items.examples;

type Answer = { status: number; body: unknown; retryAfter?: number };
type Handler = (o: { body: any; id?: string; key?: string; query?: Record<string, string> }) => Answer | 'dropped' | Promise<Answer>;

export async function startHeyGenFake(opts: {
  key: string;
  video: Buffer;
  pollsUntilDone?: number;
  languages?: readonly string[];
  /** Reads of jobs allowed in a window; past it, 429 with Retry-After. */
  readLimit?: { requests: number; perMs: number; retryAfterSeconds?: number };
  /** A job created with callback_url ends this long after its create and is called back (with finishAfterMs: when it ends by the clock). */
  callbackAfterMs?: number;
  /** A create's answer waits until its callback was delivered: the callback beats the answer to the client. */
  callBackBeforeAnswer?: boolean;
  /** Jobs end by the clock instead of by polls, each this long after its submit (the in-flight bench). */
  finishAfterMs?: () => number;
  /** Unfinished videos and translations allowed at once (HeyGen's plan concurrency); past it, a create is 429. */
  concurrentJobs?: number;
}) {
  const assets = new Map<string, Asset>();
  const videoCreates: Array<{ body: Record<string, any>; key: string | undefined }> = [];
  const translationCreates: Array<{ body: Record<string, any>; key: string | undefined }> = [];
  const workflowCreates: Array<{ body: Record<string, any> }> = [];
  /** Every request the fake refused by its contract, with what was wrong. */
  const refused: Array<{ call: string; problems: ContractProblem[] }> = [];
  const jobs = new Map<string, Job>();
  const replays = new Map<string, { status: number; body: unknown }>();
  /** How many times each `path key` was answered from its first answer. */
  const replayed = new Map<string, number>();
  const submitFailures: Array<{ status: number; body?: unknown }> = [];
  /** What GET /v3/video-translations/languages lists; a test may take a name away. */
  const languages: string[] = [...(opts.languages ?? HEYGEN_DOCUMENTED_LANGUAGES)];
  let dropNextVideoAnswer = false;
  let refuseNextVideo: string | undefined;
  let refuseNextWorkflow: string | undefined;
  let loseNextExecution = false;
  /** The word a queued video's own GET shows. */
  let queuedWord: 'pending' | 'waiting' = 'pending';
  /** How long a create takes to answer (ms). */
  let submitDelayMs = 0;
  /** `path key` of mutations whose first request is still being answered. */
  const inFlight = new Set<string>();
  /** 409 request_in_progress answers given, by path and key. */
  const inProgressAnswers = new Map<string, number>();
  /** How the next reads of many videos at once go wrong: an answer past any client's cap, or a refusal of the read itself. */
  const brokenLists: Array<'oversized' | 'refused'> = [];
  /** Every GET /v3/videos/statuses served: the ids it asked for. */
  const statusReads: Array<{ ids: string[] }> = [];
  let counter = 0;
  let base = '';
  /** Every read of a job (when it arrived, its status), 429s included: what a bench counts as polls. */
  const readLog: Array<{ at: number; status: number; path: string }> = [];
  const recentReads: number[] = [];
  const callbacksSent: Array<{ url: string; status: number; body: Record<string, unknown> }> = [];
  const hookAgent = new Agent({ connect: { rejectUnauthorized: false } });
  /** Calls back when the job ends; settles once the call was answered (or could not be made). */
  const callBack = (id: string, body: Record<string, any>, event: string): Promise<void> => {
    if (typeof body.callback_url !== 'string' || opts.callbackAfterMs === undefined) return Promise.resolve();
    const url = body.callback_url;
    const finishAt = jobs.get(id)?.finishAt;
    return new Promise<void>((resolve) =>
      setTimeout(() => {
        const job = jobs.get(id);
        if (job) job.ended = true;
        const sent = { event_type: event, event_data: { video_id: id, url: `${base}/files/${id}.mp4`, callback_id: body.callback_id ?? null } };
        request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(sent), dispatcher: hookAgent })
          .then(async (r) => {
            await r.body.dump();
            callbacksSent.push({ url, status: r.statusCode, body: sent });
          })
          .catch(() => callbacksSent.push({ url, status: 0, body: sent }))
          .finally(resolve);
      }, finishAt !== undefined ? Math.max(0, finishAt - Date.now()) : opts.callbackAfterMs),
    );
  };

  const error = (status: number, code: string, message: string, param: string | null = null) => ({ status, body: { error: { code, message, param, doc_url: null } } });
  const done = (job: Job) => job.ended === true || (job.finishAt !== undefined ? Date.now() >= job.finishAt : job.polls > (opts.pollsUntilDone ?? 1));
  const timed = (): { finishAt?: number } => (opts.finishAfterMs ? { finishAt: Date.now() + opts.finishAfterMs() } : {});
  /** A video as HeyGen shows it, in its own read and in the list alike; every look counts as one of its polls. */
  const videoData = (id: string, job: Job) => {
    job.polls++;
    if (!done(job)) return { id, status: job.polls === 1 ? queuedWord : 'processing' };
    if (job.failure) return { id, status: 'failed', failure_code: 'face_not_detected', failure_message: job.failure };
    return { id, status: 'completed', video_url: `${base}/files/${id}.mp4`, duration: 1 };
  };

  /** Past the plan's concurrent jobs: 429 with Retry-After (sent as a header beside the body, see `answer`). */
  const busy = (): { status: number; body: unknown; retryAfter?: number } | undefined => {
    if (opts.concurrentJobs === undefined) return undefined;
    const running = [...jobs.values()].filter((j) => (j.kind === 'video' || j.kind === 'translation') && !done(j)).length;
    if (running < opts.concurrentJobs) return undefined;
    return { ...error(429, 'rate_limit_exceeded', `Concurrent job limit reached (${opts.concurrentJobs}). Retry after the time in the Retry-After header.`), retryAfter: 5 };
  };

  const submit = (): { status: number; body: unknown } | undefined => {
    const f = submitFailures.shift();
    return f && { status: f.status, body: f.body ?? { error: { code: 'unavailable', message: 'Service unavailable', param: null, doc_url: null } } };
  };

  const routes: Array<{ method: string; path: RegExp; contract: Contract; mutation?: boolean; create?: boolean; list?: boolean; handle: Handler }> = [
    {
      method: 'POST',
      path: /^\/v3\/assets$/,
      contract: contract('upload-asset'),
      mutation: true,
      handle: ({ body }) => {
        const id = `ast_${++counter}`;
        const f = body.file as { filename: string; type: string; bytes: Buffer };
        assets.set(id, { bytes: f.bytes, type: f.type, filename: f.filename });
        return { status: 200, body: { data: { asset_id: id, url: `${base}/assets/${id}`, mime_type: f.type, size_bytes: f.bytes.length } } };
      },
    },
    {
      method: 'POST',
      path: /^\/v3\/videos$/,
      contract: contract('create-video'),
      mutation: true,
      create: true,
      handle: ({ body, key }) => {
        const failed = submit() ?? busy();
        if (failed) return failed;
        const image = body.image.type === 'asset_id' ? assets.get(body.image.asset_id) : undefined;
        if (body.image.type === 'asset_id' && !image?.type.startsWith('image/')) return error(400, 'invalid_parameter', 'image asset not found or not an image', 'image');
        if (body.audio_asset_id !== undefined && !assets.get(body.audio_asset_id)?.type.startsWith('audio/')) return error(400, 'invalid_parameter', 'audio asset not found or not audio', 'audio_asset_id');
        videoCreates.push({ body, key });
        const id = `vid_${++counter}`;
        jobs.set(id, { kind: 'video', polls: 0, ...timed(), ...(refuseNextVideo ? { failure: refuseNextVideo } : {}) });
        refuseNextVideo = undefined;
        callBack(id, body, 'avatar_video.success');
        const reply = { status: 200, body: { data: { video_id: id, status: 'waiting', output_format: 'mp4' } } };
        if (dropNextVideoAnswer) {
          // The job exists and its answer is kept for a replay; this answer never arrives.
          dropNextVideoAnswer = false;
          if (key) replays.set(`/v3/videos ${key}`, reply);
          return 'dropped';
        }
        return reply;
      },
    },
    {
      method: 'POST',
      path: /^\/v3\/video-translations$/,
      contract: contract('create-video-translation'),
      mutation: true,
      create: true,
      handle: async ({ body, key }) => {
        const failed = submit() ?? busy();
        if (failed) return failed;
        const unknown = (body.output_languages as string[]).find((l) => !languages.includes(l));
        if (unknown !== undefined) return error(400, 'invalid_parameter', `language not supported: ${unknown}`, 'output_languages');
        translationCreates.push({ body, key });
        const id = `vt_${++counter}`;
        jobs.set(id, { kind: 'translation', polls: 0, ...timed() });
        const called = callBack(id, body, 'video_translate.success');
        // The callback reaches the client before the create's own answer does.
        if (opts.callBackBeforeAnswer) await called;
        return { status: 200, body: { data: { video_translation_ids: [id] } } };
      },
    },
    {
      method: 'POST',
      path: /^\/v1\/workflows\/executions$/,
      contract: contract('create-workflow-execution'),
      create: true,
      handle: ({ body }) => {
        const failed = submit();
        if (failed) return failed;
        workflowCreates.push({ body });
        const id = `node-gw-${++counter}`;
        jobs.set(id, { kind: 'workflow', polls: 0, ...timed(), ...(refuseNextWorkflow ? { failure: refuseNextWorkflow } : {}), ...(loseNextExecution ? { lost: true } : {}) });
        refuseNextWorkflow = undefined;
        loseNextExecution = false;
        return { status: 200, body: { data: { execution_id: id, status: 'submitted' } } };
      },
    },
    {
      method: 'GET',
      path: /^\/v3\/videos\/statuses$/,
      contract: contract('get-video-statuses'),
      list: true,
      handle: ({ query }) => {
        const ids = (query?.video_ids ?? '').split(',').filter(Boolean);
        statusReads.push({ ids });
        const data = ids.map((id) => {
          const job = jobs.get(id);
          if (job?.kind !== 'video') return { video_id: id, status: 'not_found' };
          const seen = videoData(id, job);
          if (seen.status === 'failed') return { video_id: id, status: 'failed', error: { code: seen.failure_code, message: seen.failure_message } };
          // The statuses read's own word for a video in the queue.
          return { video_id: id, status: seen.status === queuedWord ? 'queued' : seen.status };
        });
        return { status: 200, body: { data, has_more: false, next_token: null } };
      },
    },
    {
      method: 'GET',
      path: /^\/v3\/videos\/([^/]+)$/,
      contract: contract('get-video'),
      handle: ({ id }) => {
        const job = jobs.get(id!);
        if (job?.kind !== 'video') return error(404, 'not_found', 'Video not found.');
        return { status: 200, body: { data: videoData(id!, job) } };
      },
    },
    {
      method: 'GET',
      path: /^\/v3\/video-translations\/languages$/,
      contract: contract('list-translation-languages'),
      handle: () => ({ status: 200, body: { data: { languages } } }),
    },
    {
      method: 'GET',
      path: /^\/v3\/video-translations\/([^/]+)$/,
      contract: contract('get-video-translation'),
      handle: ({ id }) => {
        const job = jobs.get(id!);
        if (job?.kind !== 'translation') return error(404, 'not_found', 'Video translation not found.');
        job.polls++;
        if (!done(job)) return { status: 200, body: { data: { id, status: job.polls === 1 ? 'pending' : 'running' } } };
        return { status: 200, body: { data: { id, status: 'completed', video_url: `${base}/files/${id}.mp4`, duration: 1 } } };
      },
    },
    {
      method: 'GET',
      path: /^\/v1\/workflows\/executions\/([^/]+)$/,
      contract: contract('get-workflow-execution'),
      handle: ({ id }) => {
        const job = jobs.get(id!);
        if (job?.kind !== 'workflow' || job.lost) return { status: 200, body: { data: { execution_id: id, status: 'not_found' } } };
        job.polls++;
        if (!done(job)) return { status: 200, body: { data: { execution_id: id, status: 'submitted' } } };
        if (job.failure) return { status: 200, body: { data: { execution_id: id, status: 'failed', error: { message: job.failure } } } };
        return { status: 200, body: { data: { execution_id: id, status: 'completed', output: { video_url: `${base}/files/${id}.mp4` } } } };
      },
    },
    {
      method: 'GET',
      path: /^\/v3\/users\/me$/,
      contract: contract('get-current-user'),
      handle: () => ({
        status: 200,
        body: { data: { username: 'adforge-test', email: null, first_name: null, last_name: null, billing_type: 'wallet', wallet: { currency: 'usd', remaining_balance: 42.5, auto_reload: { enabled: false } }, subscription: null, usage_based: null } },
      }),
    },
  ];

  /** The body as the contract describes it: JSON, or the form's parts with each file's detected type. */
  async function bodyOf(req: http.IncomingMessage, raw: Buffer, c: Contract): Promise<unknown> {
    if (!c.request.contentType) return undefined;
    if (c.request.contentType === 'multipart/form-data') {
      const form = await readForm(req, raw);
      const fields = await formFields(form);
      for (const [name, value] of form.entries()) {
        if (typeof value === 'string') continue;
        const bytes = Buffer.from(await value.arrayBuffer());
        // HeyGen reads the type from the bytes, never from the part's header.
        const detected = (await fileTypeFromBuffer(bytes))?.mime ?? value.type;
        fields[name] = { ...(fields[name] as object), type: detected, bytes };
      }
      return fields;
    }
    return JSON.parse(raw.toString('utf8'));
  }

  const server = http.createServer(async (req, res) => {
    let route: (typeof routes)[number] | undefined;
    const answer = (status: number, body: unknown, replayKey?: string, retryAfter?: number) => {
      if (route) checkAnswer(route.contract, status, body);
      if (replayKey && status < 300) replays.set(replayKey, { status, body });
      sendJson(res, status, body, retryAfter !== undefined ? { 'retry-after': String(retryAfter) } : {});
    };
    try {
      const raw = await readRaw(req);
      const url = new URL(req.url ?? '/', base);
      if (servedVideo(req, res, url, opts.video)) return;
      route = routes.find((r) => r.method === req.method && r.path.test(url.pathname));
      if (!route) return sendJson(res, 404, { error: { code: 'not_found', message: 'Not found', param: null, doc_url: null } });
      if (req.headers['x-api-key'] !== opts.key) {
        const e = error(401, 'authentication_failed', 'Invalid or expired API key. Verify your x-api-key header.');
        return answer(e.status, e.body);
      }
      let body: unknown;
      try {
        body = await bodyOf(req, raw, route.contract);
      } catch {
        const e = error(400, 'invalid_parameter', 'The request body could not be read');
        return answer(e.status, e.body);
      }
      // The contract sees a file part as {filename, type, size}; the handler also gets its bytes.
      const seen = route.contract.request.contentType === 'multipart/form-data' ? Object.fromEntries(Object.entries(body as Record<string, any>).map(([k, v]) => [k, typeof v === 'object' ? { filename: v.filename, type: v.type, size: v.size } : v])) : body;
      const query = Object.fromEntries(url.searchParams);
      const problems = requestProblems(route.contract, { headers: req.headers, body: seen, ...(route.contract.request.query ? { query } : {}) });
      if (problems.length) {
        refused.push({ call: route.contract.call, problems });
        // A field this call does not have is named first: a misnamed field shows as it and as the required one it misses.
        const first = problems.find((p) => p.kind === 'unknown') ?? problems[0]!;
        const e = error(400, 'invalid_parameter', problems.map((p) => p.message).join('; '), first.path.join('.') || null);
        return answer(e.status, e.body);
      }
      const key = route.mutation && typeof req.headers['idempotency-key'] === 'string' ? req.headers['idempotency-key'] : undefined;
      const replayKey = key ? `${url.pathname} ${key}` : undefined;
      if (replayKey && replays.has(replayKey)) {
        const r = replays.get(replayKey)!;
        replayed.set(replayKey, (replayed.get(replayKey) ?? 0) + 1);
        return answer(r.status, r.body);
      }
      // The first request under this key is still being answered: nothing new is made.
      if (replayKey && inFlight.has(replayKey)) {
        inProgressAnswers.set(replayKey, (inProgressAnswers.get(replayKey) ?? 0) + 1);
        const e = error(409, 'request_in_progress', 'A request with this Idempotency-Key is still in progress. Retry later with the same key.');
        return answer(e.status, e.body);
      }
      if (route.list && brokenLists.length) {
        const broken = brokenLists.shift()!;
        if (broken === 'refused') {
          const e = error(400, 'invalid_parameter', 'The list could not be read', 'video_ids');
          return answer(e.status, e.body);
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ data: Array.from({ length: 60_000 }, (_, i) => ({ id: `vid_elsewhere_${i}`, status: 'completed', title: 'x'.repeat(64) })) }));
      }
      const id = route.path.exec(url.pathname)?.[1];
      // A read of many jobs is one read against the limit, like a read of one job.
      if (req.method === 'GET' && (id !== undefined || route.list)) {
        const now = Date.now();
        const limit = opts.readLimit;
        while (limit && recentReads.length && recentReads[0]! <= now - limit.perMs) recentReads.shift();
        if (limit && recentReads.length >= limit.requests) {
          readLog.push({ at: now, status: 429, path: url.pathname });
          const e = error(429, 'rate_limit_exceeded', 'Rate limit exceeded. Retry after the time in the Retry-After header.');
          checkAnswer(route.contract, e.status, e.body);
          return sendJson(res, e.status, e.body, { 'retry-after': String(limit.retryAfterSeconds ?? 1) });
        }
        if (limit) recentReads.push(now);
        readLog.push({ at: now, status: 200, path: url.pathname });
      }
      if (replayKey) inFlight.add(replayKey);
      let out: Awaited<ReturnType<Handler>>;
      try {
        out = await route.handle({ body, query, ...(id !== undefined ? { id: decodeURIComponent(id) } : {}), ...(key ? { key } : {}) });
        // A long create: the job exists already; its answer (kept for a replay) comes later, to a client that may have given up.
        if (route.create && submitDelayMs > 0) await new Promise((r) => setTimeout(r, submitDelayMs));
        if (replayKey && out !== 'dropped' && out.status < 300) replays.set(replayKey, { status: out.status, body: out.body });
      } finally {
        if (replayKey) inFlight.delete(replayKey);
      }
      // A connection cut after the request was read: the job exists, its answer never arrives.
      if (out === 'dropped') return req.socket.destroy();
      return answer(out.status, out.body, replayKey, out.retryAfter);
    } catch (e) {
      if (!res.headersSent) sendJson(res, 500, { error: { code: 'fake_broke', message: String(e), param: null, doc_url: null } });
      throw e;
    }
  });
  base = await listenOnLoopback(server);
  return {
    url: base,
    assets,
    videoCreates,
    translationCreates,
    workflowCreates,
    refused,
    jobs,
    replayed,
    inProgressAnswers,
    languages,
    readLog,
    statusReads,
    callbacksSent,
    /** Videos made on the account elsewhere (its web app, another service), newer than those so far. */
    addOtherVideos: (n: number) => {
      for (let i = 0; i < n; i++) jobs.set(`vid_other_${++counter}`, { kind: 'video', polls: 0, ended: true });
    },
    failNextSubmit: (f: { status: number; body?: unknown }) => submitFailures.push(f),
    dropNextVideoAnswer: () => (dropNextVideoAnswer = true),
    refuseNextVideo: (message: string) => (refuseNextVideo = message),
    refuseNextWorkflow: (message: string) => (refuseNextWorkflow = message),
    loseNextExecution: () => (loseNextExecution = true),
    /** The word a queued video's own GET shows: `pending` (its enum) or `waiting` (the create's word). */
    showQueuedAs: (word: 'pending' | 'waiting') => (queuedWord = word),
    /** Creates (videos, translations, face swaps) answer this long after they are read. */
    delaySubmits: (ms: number) => (submitDelayMs = ms),
    /** The next reads of many videos fail, one way each. */
    breakNextLists: (...how: Array<'oversized' | 'refused'>) => brokenLists.push(...how),
    /** Reads of many still waiting to fail (0 once each broke). */
    brokenListsLeft: () => brokenLists.length,
    close: async () => {
      await closeServer(server);
      await hookAgent.close();
    },
  };
}
