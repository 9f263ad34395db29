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
 * GET /v3/videos lists the account's videos newest first, `limit` (1..100) a page, `token` for the
 * next; a page is one read against `readLimit`, and every video on it counts as looked at.
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

type Handler = (o: { body: any; id?: string; key?: string; query?: Record<string, string> }) => { status: number; body: unknown } | 'dropped' | Promise<{ status: number; body: unknown } | 'dropped'>;

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
  let holdNextVideoMs = 0;
  /** Keys whose first request is still being worked on: a repeat meanwhile is answered 409 request_in_progress. */
  const inFlight = new Set<string>();
  const inProgressAnswers = new Map<string, number>();
  /** How the next reads of many videos at once go wrong: an answer past any client's cap, or a refusal of the read itself. */
  const brokenLists: Array<'oversized' | 'refused'> = [];
  let refuseNextVideo: string | undefined;
  let refuseNextWorkflow: string | undefined;
  let loseNextExecution = false;
  let counter = 0;
  let base = '';
  /** Every read of a job (when it arrived, its status), 429s included: what a bench counts as polls. */
  const readLog: Array<{ at: number; status: number; path: string }> = [];
  /** Every page of GET /v3/videos served: the ids it held and the limit asked. */
  const listReads: Array<{ ids: string[]; limit: number }> = [];
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
    if (!done(job)) return { id, status: job.polls === 1 ? 'pending' : 'processing' };
    if (job.failure) return { id, status: 'failed', failure_code: 'face_not_detected', failure_message: job.failure };
    return { id, status: 'completed', video_url: `${base}/files/${id}.mp4`, duration: 1 };
  };

  const submit = (): { status: number; body: unknown } | undefined => {
    const f = submitFailures.shift();
    return f && { status: f.status, body: f.body ?? { error: { code: 'unavailable', message: 'Service unavailable', param: null, doc_url: null } } };
  };

  const routes: Array<{ method: string; path: RegExp; contract: Contract; mutation?: boolean; list?: boolean; handle: Handler }> = [
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
      handle: async ({ body, key }) => {
        const failed = submit();
        if (failed) return failed;
        if (holdNextVideoMs && key) {
          // A slow create: the video is made only once HeyGen answers, after the client may have given up.
          const ms = holdNextVideoMs;
          holdNextVideoMs = 0;
          inFlight.add(`/v3/videos ${key}`);
          await new Promise((r) => setTimeout(r, ms));
          inFlight.delete(`/v3/videos ${key}`);
        }
        const image = body.image.type === 'asset_id' ? assets.get(body.image.asset_id) : undefined;
        if (body.image.type === 'asset_id' && !image?.type.startsWith('image/')) return error(400, 'invalid_parameter', 'image asset not found or not an image', 'image');
        if (body.audio_asset_id !== undefined && !assets.get(body.audio_asset_id)?.type.startsWith('audio/')) return error(400, 'invalid_parameter', 'audio asset not found or not audio', 'audio_asset_id');
        videoCreates.push({ body, key });
        const id = `vid_${++counter}`;
        jobs.set(id, { kind: 'video', polls: 0, ...timed(), ...(refuseNextVideo ? { failure: refuseNextVideo } : {}) });
        refuseNextVideo = undefined;
        callBack(id, body, 'avatar_video.success');
        const reply = { status: 200, body: { data: { video_id: id, status: 'waiting', output_format: 'mp4' } } };
        if (key) replays.set(`/v3/videos ${key}`, reply);
        if (dropNextVideoAnswer) {
          // The job exists and its answer is kept for a replay; this answer never arrives.
          dropNextVideoAnswer = false;
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
      handle: async ({ body, key }) => {
        const failed = submit();
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
      path: /^\/v3\/videos$/,
      contract: contract('list-videos'),
      list: true,
      handle: ({ query }) => {
        // The account's videos, newest first: ours and any a test made elsewhere (addOtherVideos).
        const all = [...jobs.entries()].filter(([, j]) => j.kind === 'video').reverse();
        const from = query?.token ? Number(query.token) : 0;
        const limit = Number(query?.limit ?? 10);
        const page = all.slice(from, from + limit);
        const more = from + limit < all.length;
        listReads.push({ ids: page.map(([id]) => id), limit });
        return { status: 200, body: { data: page.map(([id, job]) => videoData(id, job)), has_more: more, next_token: more ? String(from + limit) : null } };
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
    const answer = (status: number, body: unknown, replayKey?: string) => {
      if (route) checkAnswer(route.contract, status, body);
      if (replayKey && status < 300) replays.set(replayKey, { status, body });
      sendJson(res, status, body);
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
      // HeyGen's Idempotency-Key: a repeat while the first request is still running is 409 request_in_progress (nothing new queued).
      if (replayKey && inFlight.has(replayKey)) {
        inProgressAnswers.set(replayKey, (inProgressAnswers.get(replayKey) ?? 0) + 1);
        const e = error(409, 'request_in_progress', 'A request with this idempotency key is still being processed. Retry later with the same key.');
        return answer(e.status, e.body);
      }
      if (replayKey && replays.has(replayKey)) {
        const r = replays.get(replayKey)!;
        replayed.set(replayKey, (replayed.get(replayKey) ?? 0) + 1);
        return answer(r.status, r.body);
      }
      if (route.list && brokenLists.length) {
        const broken = brokenLists.shift()!;
        if (broken === 'refused') {
          const e = error(400, 'invalid_parameter', 'The list could not be read', 'limit');
          return answer(e.status, e.body);
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ data: Array.from({ length: 60_000 }, (_, i) => ({ id: `vid_elsewhere_${i}`, status: 'completed', title: 'x'.repeat(64) })) }));
      }
      const id = route.path.exec(url.pathname)?.[1];
      // A list of jobs is one read against the limit, like a read of one job.
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
      const out = await route.handle({ body, query, ...(id !== undefined ? { id: decodeURIComponent(id) } : {}), ...(key ? { key } : {}) });
      // A connection cut after the request was read: the job exists, its answer never arrives.
      if (out === 'dropped') return req.socket.destroy();
      return answer(out.status, out.body, replayKey);
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
    listReads,
    callbacksSent,
    /** Videos made on the account elsewhere (its web app, another service), newer than those so far: they push older ones off the list's first pages. */
    addOtherVideos: (n: number) => {
      for (let i = 0; i < n; i++) jobs.set(`vid_other_${++counter}`, { kind: 'video', polls: 0, ended: true });
    },
    failNextSubmit: (f: { status: number; body?: unknown }) => submitFailures.push(f),
    dropNextVideoAnswer: () => (dropNextVideoAnswer = true),
    /** The next reads of many videos fail, one way each. */
    breakNextLists: (...how: Array<'oversized' | 'refused'>) => brokenLists.push(...how),
    /** Reads of many still waiting to fail (0 once each broke). */
    brokenListsLeft: () => brokenLists.length,
    /** The next create with a key answers only after `ms`; a repeat of its key meanwhile gets 409 request_in_progress. */
    holdNextVideo: (ms: number) => (holdNextVideoMs = ms),
    refuseNextVideo: (message: string) => (refuseNextVideo = message),
    refuseNextWorkflow: (message: string) => (refuseNextWorkflow = message),
    loseNextExecution: () => (loseNextExecution = true),
    close: async () => {
      await closeServer(server);
      await hookAgent.close();
    },
  };
}
