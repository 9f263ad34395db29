import http from 'node:http';
import { checkAnswer, formFields, loadContract, requestProblems, type Contract, type ContractProblem } from './contract.ts';
import { readForm, readRaw, sendJson, listenOnLoopback, closeServer } from './http-fake.ts';
import { createFaults, hang, reset, sleep, type Fault } from './fake-faults.ts';

/*
 * A local stand-in for the OpenAI API, held to the stored contracts in test/contracts/openai/
 * (openai/openai-openapi f85dbe2): POST /v1/images/generations (JSON), POST /v1/images/edits
 * (multipart, images as `image` or `image[]` files), POST /v1/videos (multipart, `input_reference`
 * a file), GET /v1/videos/{id}, GET /v1/videos/{id}/content (the MP4), GET /v1/models and
 * GET /v1/models/{model}. Every request is checked against its contract before anything else, and
 * every JSON answer against the contract's documented shape (checkAnswer throws: the test fails).
 *
 * Errors as OpenAI gives them: `{error: {message, type, param, code}}` (the document's
 * #/components/schemas/ErrorResponse). Status and wording as OpenAI's API answers them (seen in its
 * clients' public reports, e.g. teabranch/open-responses-server#41, feder-cr issue 889):
 * - 401 invalid_api_key "Incorrect API key provided: ..." (no key: "You didn't provide an API key. ...");
 * - 400 for a request that breaks the contract, naming the field in `param`: unknown_parameter
 *   "Unknown parameter: 'x'.", missing_required_parameter "Missing required parameter: 'x'.",
 *   invalid_type, invalid_value "Invalid value: 'v'. Supported values are: ...", unsupported_parameter
 *   for a field the chosen model does not take;
 * - 404 model_not_found "The model `x` does not exist or you do not have access to it.";
 * - 404 "Invalid URL (METHOD /v1/path)" for a route the API does not have (the Videos API once retired).
 * A prompt containing "forbidden" is refused the way each API refuses. It records what it received.
 *
 * Time, limits and faults:
 * - an Images call takes `imageMs`, and OpenAI goes on when the client goes away: the images are
 *   made (and billed) at the end whether or not anyone still waits for them, so `billedImages`
 *   counts them all. The SDK waits 10 minutes for an answer (openai-node src/client.ts at 7b7d6ca,
 *   DEFAULT_TIMEOUT) and resends a request that timed out or got 408, 409, 429 or a 5xx (shouldRetry);
 * - `limits`: requests and images per minute for each model (RPM and IPM, the names the document's
 *   ProjectRateLimit gives: max_requests_per_1_minute, max_images_per_1_minute), over the last minute
 *   of `now()`. Past one: 429 `rate_limit_exceeded` "Rate limit reached for <model> in organization
 *   ... on images per minute (IPM): Limit n, Used n, Requested n. Please try again in <s>s. ..." with
 *   the x-ratelimit-* headers and no Retry-After (the wording as clients report it, e.g.
 *   rotemweiss57/gpt-newspaper#10; chatboxai/chatbox#1361 for images);
 * - `failNext(call, fault)` (fake-faults.ts): the next valid call of that kind fails so; an error
 *   status is answered `{error: {message, type, param, code}}`, a 5xx with code `server_error` (the
 *   document's error codes).
 */

type Call = 'images-generations' | 'images-edits' | 'videos-create' | 'videos-retrieve' | 'videos-content' | 'models-list' | 'models-retrieve';

/** The models the fake lists by default: the GPT image models and Sora, as the contracts name them. */
export const FAKE_OPENAI_MODELS = ['gpt-image-1', 'gpt-image-1-mini', 'gpt-image-1.5', 'gpt-image-2', 'gpt-image-2-2026-04-21', 'chatgpt-image-latest', 'sora-2', 'sora-2-pro'];

/**
 * gpt-image-2's size rules, which its contract can only state in words (the `x-note` of the size
 * rule in images-generations.json, from CreateImageRequest.size's description): beside auto and
 * the standard sizes, WIDTHxHEIGHT with both divisible by 16, the ratio from 1:3 to 3:1, at most
 * 3840x2160 (its edge and its pixels).
 */
export function gptImage2SizeProblem(size: string): string | undefined {
  if (['auto', '1024x1024', '1536x1024', '1024x1536'].includes(size)) return undefined;
  const m = /^(\d+)x(\d+)$/.exec(size);
  if (!m) return `Invalid size '${size}'. Sizes are WIDTHxHEIGHT.`;
  const [w, h] = [Number(m[1]), Number(m[2])];
  if (w % 16 || h % 16) return `Invalid size '${size}'. Width and height must both be divisible by 16.`;
  if (Math.max(w, h) > 3 * Math.min(w, h)) return `Invalid size '${size}'. The aspect ratio must be between 1:3 and 3:1.`;
  if (Math.max(w, h) > 3840 || w * h > 3840 * 2160) return `Invalid size '${size}'. The maximum supported resolution is 3840x2160.`;
  return undefined;
}

const GPT_IMAGE_2 = ['gpt-image-2', 'gpt-image-2-2026-04-21'];

/** The field a problem names, as OpenAI writes a parameter: `image[][0].type`, `input[4].action.query`. */
const paramOf = (p: ContractProblem): string => p.path.reduce<string>((s, seg, i) => (typeof seg === 'number' ? `${s}[${seg}]` : i === 0 ? seg : `${s}.${seg}`), '');

function valueAt(body: unknown, path: Array<string | number>): unknown {
  return path.reduce<unknown>((v, seg) => (v !== null && typeof v === 'object' ? (v as Record<string | number, unknown>)[seg] : undefined), body);
}

/** A contract problem as OpenAI's 400; an unknown field is named first, as the API does. */
function refusal(problems: ContractProblem[], body: unknown): { message: string; type: string; param: string | null; code: string | null } {
  const order = ['unknown', 'missing', 'type', 'enum', 'invalid'];
  const p = [...problems].sort((a, b) => order.indexOf(a.kind) - order.indexOf(b.kind))[0]!;
  const param = paramOf(p);
  const base = { type: 'invalid_request_error', param };
  switch (p.kind) {
    case 'unknown':
      return { ...base, message: `Unknown parameter: '${param}'.`, code: 'unknown_parameter' };
    case 'missing':
      return { ...base, message: `Missing required parameter: '${param}'.`, code: 'missing_required_parameter' };
    case 'type':
      return { ...base, message: `Invalid type for '${param}': ${p.message}.`, code: 'invalid_type' };
    case 'enum':
      return { ...base, message: `Invalid value: '${String(valueAt(body, p.path))}'. ${p.message.replace(/^.* must be one of /, 'Supported values are: ')}.`, code: 'invalid_value' };
    default:
      return /boolean schema is false/.test(p.message)
        ? { ...base, message: `Unsupported parameter: '${param}' is not supported with this model.`, code: 'unsupported_parameter' }
        : { ...base, message: `Invalid '${param}': ${p.message}.`, code: 'invalid_value' };
  }
}

export async function startOpenAiFake(opts: {
  key: string;
  video: Buffer;
  png: Buffer;
  pollsUntilDone?: number;
  /** The model ids GET /v1/models lists and GET /v1/models/{model} finds (default FAKE_OPENAI_MODELS). */
  models?: string[];
  /** Models OpenAI lists with a `shutdown_date`. */
  shutdowns?: Record<string, string>;
  /** The Videos API is gone: its routes answer as an unknown URL does. */
  videosRetired?: boolean;
  /** How long one Images call takes (default 0). */
  imageMs?: number;
  /** Per-minute limits of the organization for each image model: requests (RPM) and images (IPM). */
  limits?: { rpm?: number; ipm?: number };
  /** The clock of the limit windows (default Date.now). */
  now?: () => number;
}) {
  const contracts = Object.fromEntries(
    (['images-generations', 'images-edits', 'videos-create', 'videos-retrieve', 'videos-content', 'models-list', 'models-retrieve'] as const).map((n) => [n, loadContract('openai', n)]),
  ) as Record<Call, Contract>;
  const videoCreates: Array<Record<string, unknown>> = [];
  const imageCreates: Array<Record<string, unknown>> = [];
  /** The input_reference file of each video create, by prompt. */
  const videoReferences = new Map<string, { type: string; bytes: Buffer }>();
  /** Edits as received: the text fields, and each image file (field name, file name, type, bytes). */
  const imageEdits: Array<{ fields: Record<string, string>; images: Array<{ field: string; filename: string; type: string; bytes: Buffer }> }> = [];
  const videos = new Map<string, { polls: number; forbidden: boolean; model: string; seconds: string; size: string; prompt: string; created: number }>();
  /** Every request the fake refused for breaking its contract: the call, the status and OpenAI's error. */
  const refused: Array<{ call: string; status: number; error: Record<string, unknown> }> = [];
  /** Every read of the model endpoints, for the free check's tests. */
  const modelReads: string[] = [];
  const models = opts.models ?? FAKE_OPENAI_MODELS;
  let counter = 0;
  /** Images OpenAI made (and bills), whether the client was still there to receive them or not. */
  const billedImages: Array<{ model: string; prompt: string }> = [];
  const faults = createFaults<Call>();
  const clock = opts.now ?? Date.now;
  /** Accepted image requests by model, each with its image count, for the per-minute limits. */
  const recent = new Map<string, Array<{ at: number; images: number }>>();

  /** Past a model's limit for the last minute: OpenAI's 429 and its headers; undefined within it. */
  function overLimit(model: string, images: number): { body: unknown; headers: Record<string, string> } | undefined {
    const t = clock();
    const window = (recent.get(model) ?? []).filter((r) => r.at > t - 60_000);
    recent.set(model, window);
    const used = { requests: window.length, images: window.reduce((n, r) => n + r.images, 0) };
    const rpm = opts.limits?.rpm ?? Infinity;
    const ipm = opts.limits?.ipm ?? Infinity;
    const over = used.requests + 1 > rpm ? { what: 'requests per min (RPM)', limit: rpm, used: used.requests, asked: 1 } : used.images + images > ipm ? { what: 'images per min (IPM)', limit: ipm, used: used.images, asked: images } : undefined;
    if (!over) return undefined;
    const waitS = Math.max(1, Math.ceil((window[0]!.at + 60_000 - t) / 1000));
    return {
      body: { error: { message: `Rate limit reached for ${model} in organization org-fake on ${over.what}: Limit ${over.limit}, Used ${over.used}, Requested ${over.asked}. Please try again in ${waitS}s. Visit https://platform.openai.com/account/rate-limits to learn more.`, type: 'requests', param: null, code: 'rate_limit_exceeded' } },
      headers: {
        'x-ratelimit-limit-requests': String(Number.isFinite(rpm) ? rpm : 10_000),
        'x-ratelimit-remaining-requests': String(Number.isFinite(rpm) ? Math.max(0, rpm - used.requests) : 10_000),
        'x-ratelimit-reset-requests': `${waitS}s`,
      },
    };
  }

  const faultBody = (status: number) => ({
    error: status >= 500
      ? { message: 'The server had an error while processing your request. Sorry about that!', type: 'server_error', param: null, code: 'server_error' }
      : { message: `it answered ${status}`, type: 'invalid_request_error', param: null, code: null },
  });

  const answer = (res: http.ServerResponse, call: Call, status: number, body: unknown, headers: Record<string, string> = {}) => {
    checkAnswer(contracts[call], status, body);
    sendJson(res, status, body, headers);
  };
  const refuse = (res: http.ServerResponse, call: string, status: number, error: { message: string; type: string; param: string | null; code: string | null }) => {
    refused.push({ call, status, error });
    sendJson(res, status, { error });
  };

  const route = (method: string, path: string): { call: Call; id?: string } | undefined => {
    if (method === 'POST' && path === '/v1/images/generations') return { call: 'images-generations' };
    if (method === 'POST' && path === '/v1/images/edits') return { call: 'images-edits' };
    if (method === 'POST' && path === '/v1/videos') return { call: 'videos-create' };
    if (method === 'GET' && path === '/v1/models') return { call: 'models-list' };
    let m = /^\/v1\/videos\/([^/]+)\/content$/.exec(path);
    if (method === 'GET' && m) return { call: 'videos-content', id: decodeURIComponent(m[1]!) };
    m = /^\/v1\/videos\/([^/]+)$/.exec(path);
    if (method === 'GET' && m) return { call: 'videos-retrieve', id: decodeURIComponent(m[1]!) };
    m = /^\/v1\/models\/([^/]+)$/.exec(path);
    if (method === 'GET' && m) return { call: 'models-retrieve', id: decodeURIComponent(m[1]!) };
    return undefined;
  };

  const modelObject = (id: string) => ({ id, object: 'model', created: 1_745_000_000, owned_by: 'system', ...(opts.shutdowns?.[id] ? { shutdown_date: opts.shutdowns[id] } : {}) });

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const bytes = await readRaw(req);
    const url = new URL(req.url ?? '/', 'http://fake');
    const method = req.method ?? 'GET';
    const auth = req.headers.authorization;
    if (auth !== `Bearer ${opts.key}`) {
      return refuse(res, `${method} ${url.pathname}`, 401, auth
        ? { message: `Incorrect API key provided: ${auth.replace(/^Bearer /, '').slice(0, 3)}****. You can find your API key at https://platform.openai.com/account/api-keys.`, type: 'invalid_request_error', param: null, code: 'invalid_api_key' }
        : { message: "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).", type: 'invalid_request_error', param: null, code: null });
    }
    const r = route(method, url.pathname);
    if (!r || (opts.videosRetired && r.call.startsWith('videos-'))) {
      return refuse(res, `${method} ${url.pathname}`, 404, { message: `Invalid URL (${method} ${url.pathname})`, type: 'invalid_request_error', param: null, code: null });
    }
    const c = contracts[r.call];
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k.toLowerCase(), Array.isArray(v) ? v.join(', ') : v]));
    const query = Object.fromEntries(url.searchParams);
    // A body of the wrong kind cannot even be read: refused before the contract is applied.
    const contentType = String(headers['content-type'] ?? '');
    if (c.request.contentType && !contentType.startsWith(c.request.contentType)) {
      return refuse(res, c.call, 400, { message: `Invalid Content-Type header (${contentType}), expected ${c.request.contentType}`, type: 'invalid_request_error', param: null, code: null });
    }
    let body: unknown;
    let form: FormData | undefined;
    if (c.request.contentType === 'multipart/form-data') {
      form = await readForm(req, bytes);
      body = await formFields(form);
    } else if (c.request.contentType === 'application/json') {
      try {
        body = JSON.parse(bytes.toString('utf8'));
      } catch {
        return refuse(res, c.call, 400, { message: 'We could not parse the JSON body of your request.', type: 'invalid_request_error', param: null, code: null });
      }
    }
    const problems = requestProblems(c, { headers, query, ...(c.request.body ? { body } : {}) });
    if (problems.length) return refuse(res, c.call, 400, refusal(problems, problems[0]!.where === 'query' ? query : body));
    const b = (body ?? {}) as Record<string, unknown>;
    const sizeProblem = GPT_IMAGE_2.includes(String(b.model)) && typeof b.size === 'string' ? gptImage2SizeProblem(b.size) : undefined;
    if (sizeProblem) return refuse(res, c.call, 400, { message: sizeProblem, type: 'invalid_request_error', param: 'size', code: 'invalid_value' });
    const now = Math.floor(Date.now() / 1000);

    switch (r.call) {
      case 'models-list':
        modelReads.push('*');
        return answer(res, r.call, 200, { object: 'list', data: models.map(modelObject) });
      case 'models-retrieve':
        modelReads.push(r.id!);
        if (!models.includes(r.id!)) {
          return answer(res, r.call, 404, { error: { message: `The model \`${r.id!}\` does not exist or you do not have access to it.`, type: 'invalid_request_error', param: null, code: 'model_not_found' } });
        }
        return answer(res, r.call, 200, modelObject(r.id!));
      case 'videos-create': {
        const b = body as Record<string, unknown>;
        const fields = Object.fromEntries(Object.entries(b).filter(([, v]) => typeof v === 'string')) as Record<string, string>;
        const reference = form!.get('input_reference');
        if (reference && typeof reference !== 'string') videoReferences.set(String(fields.prompt), { type: reference.type, bytes: Buffer.from(await reference.arrayBuffer()) });
        videoCreates.push(fields);
        const id = `video_${++counter}`;
        const v = { polls: 0, forbidden: /forbidden/i.test(String(fields.prompt)), model: fields.model ?? 'sora-2', seconds: fields.seconds ?? '4', size: fields.size ?? '720x1280', prompt: String(fields.prompt), created: now };
        videos.set(id, v);
        return answer(res, r.call, 200, { id, object: 'video', status: 'queued', progress: 0, model: v.model, seconds: v.seconds, size: v.size, created_at: now, completed_at: null, expires_at: null, error: null, prompt: v.prompt, remixed_from_video_id: null });
      }
      case 'videos-retrieve': {
        const v = videos.get(r.id!);
        if (!v) return answer(res, r.call, 404, { error: { message: `Video with id '${r.id!}' not found.`, type: 'invalid_request_error', param: null, code: 'video_not_found' } });
        v.polls++;
        const done = v.polls > (opts.pollsUntilDone ?? 2);
        const status = !done ? (v.polls === 1 ? 'queued' : 'in_progress') : v.forbidden ? 'failed' : 'completed';
        return answer(res, r.call, 200, {
          id: r.id,
          object: 'video',
          status,
          progress: done ? 100 : 50,
          model: v.model,
          seconds: v.seconds,
          size: v.size,
          created_at: v.created,
          completed_at: done ? now : null,
          expires_at: status === 'completed' ? now + 3600 : null,
          prompt: v.prompt,
          remixed_from_video_id: null,
          error: status === 'failed' ? { code: 'moderation_blocked', message: 'Your request was blocked by our moderation system.' } : null,
        });
      }
      case 'videos-content': {
        const v = videos.get(r.id!);
        if (!v || v.polls <= (opts.pollsUntilDone ?? 2) || v.forbidden) return answer(res, r.call, 404, { error: { message: 'Video is not ready', type: 'invalid_request_error', param: null, code: null } });
        res.writeHead(200, { 'content-type': 'video/mp4' });
        return res.end(opts.video);
      }
      case 'images-generations':
      case 'images-edits': {
        const b = body as Record<string, unknown>;
        if (r.call === 'images-generations') imageCreates.push(b);
        else {
          const fields: Record<string, string> = {};
          const images: (typeof imageEdits)[number]['images'] = [];
          for (const [name, value] of form!.entries()) {
            if (typeof value === 'string') fields[name] = value;
            else if (name === 'image' || name === 'image[]') images.push({ field: name, filename: value.name, type: value.type, bytes: Buffer.from(await value.arrayBuffer()) });
          }
          imageEdits.push({ fields, images });
        }
        if (/forbidden/i.test(String(b.prompt))) {
          return answer(res, r.call, 400, { error: { message: 'Your request was rejected by the safety system.', type: 'image_generation_user_error', param: null, code: 'moderation_blocked' } });
        }
        const n = Number(b.n ?? 1);
        const model = String(b.model ?? 'gpt-image-1');
        const limited = overLimit(model, n);
        if (limited) return answer(res, r.call, 429, limited.body, limited.headers);
        const fault = faults.take(r.call);
        if (fault && 'status' in fault) return answer(res, r.call, fault.status, fault.body ?? faultBody(fault.status), fault.headers ?? {});
        recent.get(model)!.push({ at: clock(), images: n });
        await sleep((opts.imageMs ?? 0) + (fault && 'delayMs' in fault ? fault.delayMs : 0));
        for (let i = 0; i < n; i++) billedImages.push({ model, prompt: String(b.prompt) });
        if (fault && 'answer' in fault) return sendJson(res, 200, fault.answer);
        if (fault && 'hang' in fault) return hang(res);
        if (fault && 'reset' in fault) return reset(res);
        // Made whether or not the client stayed: nobody is left to answer.
        if (res.destroyed) return;
        const quality = ['low', 'medium', 'high'].includes(String(b.quality)) ? { quality: b.quality } : {};
        return answer(res, r.call, 200, {
          created: now,
          data: Array.from({ length: n }, () => ({ b64_json: opts.png.toString('base64') })),
          output_format: 'png',
          ...quality,
          usage: { input_tokens: 50, output_tokens: 50, total_tokens: 100, input_tokens_details: { text_tokens: 10, image_tokens: 40 } },
        });
      }
    }
  };

  const server = http.createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      // An answer outside the contract (checkAnswer) or a fault of the fake: a 500, and the error surfaces in the test run.
      if (!res.headersSent) sendJson(res, 500, { error: { message: 'fake failure', type: 'server_error', param: null, code: null } });
      throw e;
    });
  });
  const url = `${await listenOnLoopback(server)}/v1`;
  return {
    url,
    videoCreates,
    videoReferences,
    imageCreates,
    imageEdits,
    videos,
    refused,
    modelReads,
    billedImages,
    failNext: (call: Call, fault: Fault, after?: number) => faults.failNext(call, fault, after),
    close: () => closeServer(server),
  };
}
