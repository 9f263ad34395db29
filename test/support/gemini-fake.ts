import http from 'node:http';
import { checkAnswer, loadContract, requestProblems, type Contract, type ContractProblem } from './contract.ts';
import { readBody, sendJson, listenOnLoopback, closeServer } from './http-fake.ts';
import { createFaults, hang, reset, sleep, type Fault } from './fake-faults.ts';

/*
 * A local stand-in for the Gemini API (v1beta), held to the stored contracts in
 * test/contracts/gemini/ (each request is checked against its call's contract, and the per-model
 * limits in its $defs; each JSON answer goes through checkAnswer):
 * - POST models/{model}:predictLongRunning -> an operation {name}; GET /{name} -> {done,
 *   response.generateVideoResponse {generatedSamples[{video{uri}}] | raiMediaFilteredReasons}};
 * - GET files/{id}:download?alt=media (the video's URI) -> 302 to a separate storage host, as Google
 *   does (cookbook Get_started_Veo_REST: curl --location; LiteLLM #13686); the storage host serves
 *   the bytes to anyone holding the link and records whether a key was sent to it;
 * - POST models/{model}:generateContent -> candidates[0].content.parts[].inlineData, or
 *   promptFeedback.blockReason;
 * - GET models (paged) and GET models/{model}, the free reads of `adforge providers check`.
 * A prompt with "forbidden" is filtered.
 *
 * Time, quotas and faults, as Google's pages describe them:
 * - an image takes `imageMs` to make. A call that names its deadline in `X-Server-Timeout` (whole
 *   seconds: googleapis/js-genai src/_api_client.ts at 6e9b35c sends it whenever a timeout is set)
 *   and would outlast it is ended at the deadline with 504 DEADLINE_EXCEEDED "The service is unable
 *   to finish processing within the deadline" (ai.google.dev/gemini-api/docs/troubleshooting); it
 *   made nothing. A failed request (a 400- or 500-class answer) is not charged (Gemini API billing
 *   FAQ, "Am I charged for failed requests?"): only images answered, or made and then lost on the
 *   way (`hang`, `reset`), are counted in `billedImages`;
 * - `limits`: the project's requests and images per minute for each image model (RPM, and IPM "only
 *   calculated for models capable of generating images": ai.google.dev/gemini-api/docs/rate-limits;
 *   limits are per project, not per key), over the last minute of `now()`. Past one, 429
 *   RESOURCE_EXHAUSTED with QuotaFailure, Help and RetryInfo {retryDelay: "<n>s"} details and no
 *   Retry-After header, as Google answers it (googleapis/python-genai#2044, google-gemini/gemini-cli#8437;
 *   the paid tier's ids as in mscraftsman/generative-ai#131);
 * - `failNext(call, fault)` (fake-faults.ts): the next valid call of that kind fails so. An error
 *   status is answered in Google's shape with the google.rpc code that HTTP status stands for.
 *
 * Errors are Google's: {error: {code, message, status, details}}. Verbatim forms (from the issue
 * threads cited in the contracts' error schema): a missing key 403 PERMISSION_DENIED; a key Google
 * does not know 400 INVALID_ARGUMENT with ErrorInfo reason API_KEY_INVALID; a field a typed message
 * does not have (generateContent) 400 "Invalid JSON payload received. Unknown name \"x\" at
 * 'generation_config.image_config': Cannot find field." with a BadRequest fieldViolation; a model it
 * does not serve 404 NOT_FOUND "models/x is not found for API version v1beta ...". Veo's instances and
 * parameters are free-form at the protocol level (google.protobuf.Value), so a Veo field it does not
 * take, and a value out of range anywhere, get a message of ours in the same shape, naming the field.
 */

/** Models the fake serves: Google's current ones (gemini-2.5-flash-image's shutdown date was 2026-10-02). */
export const GEMINI_FAKE_MODELS: Readonly<Record<string, { displayName: string; methods: string[] }>> = {
  'veo-3.1-generate-preview': { displayName: 'Veo 3.1', methods: ['predictLongRunning'] },
  'veo-3.1-fast-generate-preview': { displayName: 'Veo 3.1 Fast', methods: ['predictLongRunning'] },
  'veo-3.1-lite-generate-preview': { displayName: 'Veo 3.1 Lite', methods: ['predictLongRunning'] },
  'gemini-3-pro-image': { displayName: 'Nano Banana Pro', methods: ['generateContent', 'countTokens'] },
  'gemini-3.1-flash-image': { displayName: 'Nano Banana 2', methods: ['generateContent', 'countTokens'] },
  'gemini-3.5-flash': { displayName: 'Gemini 3.5 Flash', methods: ['generateContent', 'countTokens'] },
};

const contract = (name: string) => loadContract('gemini', name);

// camelCase JSON names as Google's messages spell the proto path: generation_config.image_config, contents[0].parts[1].
function protoPath(path: Array<string | number>): string {
  return path.reduce<string>((out, p) => (typeof p === 'number' ? `${out}[${p}]` : `${out ? `${out}.` : ''}${p.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}`), '');
}

function googleError(code: number, status: string, message: string, details: unknown[] = []) {
  return { error: { code, message, status, ...(details.length ? { details } : {}) } };
}

/**
 * A broken request as Google words it. `typed` says whether a field's parent is a typed proto
 * message (Google's JSON parser refuses an unknown name there) rather than a free-form Value.
 */
function invalidArgument(problems: ContractProblem[], typed: (path: Array<string | number>) => boolean) {
  const lines = problems.map((p) => {
    const field = String(p.path.at(-1) ?? p.where);
    const at = protoPath(p.path.slice(0, -1));
    if (p.kind === 'unknown' && typed(p.path)) return { field: at, description: `Invalid JSON payload received. Unknown name "${field}"${at ? ` at '${at}'` : ''}: Cannot find field.` };
    if (p.kind === 'unknown') return { field: protoPath(p.path), description: `\`${field}\` isn't supported by this model.` };
    return { field: protoPath(p.path), description: `Invalid value at '${protoPath(p.path)}': ${p.message}` };
  });
  return googleError(400, 'INVALID_ARGUMENT', lines.map((l) => l.description).join('\n'), [{ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: lines }]);
}

/** Problems of a value against one of the contract's per-model schemas, located from `at`. */
function modelProblems(c: Contract, schema: object | undefined, value: unknown, at: Array<string | number>): ContractProblem[] {
  if (!schema) return [];
  return requestProblems({ ...c, request: { method: c.request.method, path: c.request.path, body: schema } }, { body: value }).map((p) => ({ ...p, path: [...at, ...p.path] }));
}

const modelDefs = (c: Contract): Record<string, object> => ((c.request.body as { $defs: { models: { $defs: Record<string, object> } } }).$defs.models.$defs);

/** The google.rpc code name Google sends with each HTTP status (google/rpc/code.proto's mapping). */
const RPC_STATUS: Readonly<Record<number, string>> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ABORTED',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  500: 'INTERNAL',
  501: 'NOT_IMPLEMENTED',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};
// The words of the troubleshooting page for the statuses it lists.
const RPC_MESSAGE: Readonly<Record<number, string>> = {
  500: 'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting',
  503: 'The model is overloaded. Please try again later.',
  504: 'The service is unable to finish processing within the deadline.',
};

export type GeminiCall = 'generate-content' | 'predict-long-running';

export async function startGeminiFake(opts: {
  key: string;
  video: Buffer;
  png: Buffer;
  pollsUntilDone?: number;
  /** How long one image takes to make (default 0). */
  imageMs?: number;
  /** Per-minute quotas of the project for each image model: requests (RPM) and images (IPM). */
  limits?: { rpm?: number; ipm?: number };
  /** The clock of the quota windows (default Date.now). */
  now?: () => number;
}) {
  const videoSubmits: Array<{ model: string; body: Record<string, any> }> = [];
  const imageCalls: Array<{ model: string; body: Record<string, any> }> = [];
  /** The deadline each image call named (X-Server-Timeout), in the order of imageCalls. */
  const imageDeadlines: Array<string | undefined> = [];
  const storageReads: Array<{ path: string; headers: http.IncomingHttpHeaders }> = [];
  /** Every refusal the fake gave for a broken request, for tests to read. */
  const refusals: Array<{ call: string; status: number; body: unknown }> = [];
  const ops = new Map<string, { polls: number; forbidden: boolean }>();
  /** Images Google made (and bills): answered, or made and then lost on the way. */
  const billedImages: Array<{ model: string; prompt: string }> = [];
  const faults = createFaults<GeminiCall>();
  const now = opts.now ?? Date.now;
  /** Accepted image requests, by model, for the per-minute quotas. */
  const recent = new Map<string, number[]>();
  let counter = 0;
  let base = '';
  let storageBase = '';

  const answer = (res: http.ServerResponse, c: Contract, status: number, body: unknown, headers: Record<string, string> = {}) => {
    checkAnswer(c, status, body);
    if (status >= 400) refusals.push({ call: c.call, status, body });
    sendJson(res, status, body, headers);
  };
  const headersOf = (req: http.IncomingMessage) => Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k.toLowerCase(), v]));

  /** The key, checked as Google does; true when the request may go on. */
  function keyAccepted(req: http.IncomingMessage, res: http.ServerResponse, c: Contract): boolean {
    const key = req.headers['x-goog-api-key'];
    if (key === undefined) {
      answer(res, c, 403, googleError(403, 'PERMISSION_DENIED', "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API."));
      return false;
    }
    if (key !== opts.key) {
      answer(res, c, 400, googleError(400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com', metadata: { service: 'generativelanguage.googleapis.com' } }]));
      return false;
    }
    return true;
  }

  /** Past the model's quota for the last minute: Google's 429, with the wait until a slot frees. */
  function quotaRefusal(model: string) {
    const t = now();
    const window = (recent.get(model) ?? []).filter((at) => at > t - 60_000);
    recent.set(model, window);
    const limit = Math.min(opts.limits?.rpm ?? Infinity, opts.limits?.ipm ?? Infinity);
    if (window.length < limit) return undefined;
    // One image per call: requests and images count alike. The ids are those of the request quota (no IPM id was found in the sources).
    const metric = ['generate_content_paid_tier_requests', 'GenerateRequestsPerMinutePerProjectPerModel'];
    const waitS = Math.max(1, Math.ceil((window[0]! + 60_000 - t) / 1000));
    return googleError(429, 'RESOURCE_EXHAUSTED', 'You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.', [
      { '@type': 'type.googleapis.com/google.rpc.QuotaFailure', violations: [{ quotaMetric: `generativelanguage.googleapis.com/${metric[0]}`, quotaId: metric[1], quotaDimensions: { location: 'global', model }, quotaValue: String(limit) }] },
      { '@type': 'type.googleapis.com/google.rpc.Help', links: [{ description: 'Learn more about Gemini API quotas', url: 'https://ai.google.dev/gemini-api/docs/rate-limits' }] },
      { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${waitS}s` },
    ]);
  }

  /** A fault's error answer in Google's shape. */
  function faultAnswer(res: http.ServerResponse, c: Contract, f: Extract<Fault, { status: number }>) {
    const body = f.body ?? googleError(f.status, RPC_STATUS[f.status] ?? 'UNKNOWN', RPC_MESSAGE[f.status] ?? `it answered ${f.status}`);
    answer(res, c, f.status, body, f.headers ?? {});
  }

  function modelNotFound(res: http.ServerResponse, c: Contract, model: string, method: string) {
    answer(res, c, 404, googleError(404, 'NOT_FOUND', `models/${model} is not found for API version v1beta, or is not supported for ${method}. Call ListModels to see the list of available models and their supported methods.`));
  }

  const modelResource = (id: string) => ({ name: `models/${id}`, version: '001', displayName: GEMINI_FAKE_MODELS[id]!.displayName, description: GEMINI_FAKE_MODELS[id]!.displayName, inputTokenLimit: 1024, outputTokenLimit: 8192, supportedGenerationMethods: GEMINI_FAKE_MODELS[id]!.methods });

  /** Parses a JSON body; answers Google's parse error and returns undefined when it is not JSON. */
  function jsonBody(raw: string, res: http.ServerResponse, c: Contract): Record<string, any> | undefined {
    try {
      return JSON.parse(raw) as Record<string, any>;
    } catch {
      answer(res, c, 400, googleError(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received. Unexpected token.'));
      return undefined;
    }
  }

  const server = http.createServer(async (req, res) => {
    const raw = await readBody(req);
    const url = new URL(req.url ?? '/', base);
    const query = Object.fromEntries(url.searchParams);
    if (url.pathname.startsWith('/frames/')) {
      res.writeHead(200, { 'content-type': 'image/png' });
      return res.end(opts.png);
    }

    const predict = /^\/v1beta\/models\/([\w.-]+):predictLongRunning$/.exec(url.pathname);
    if (req.method === 'POST' && predict) {
      const c = contract('predict-long-running');
      if (!keyAccepted(req, res, c)) return;
      const model = predict[1]!;
      if (!GEMINI_FAKE_MODELS[model]?.methods.includes('predictLongRunning')) return modelNotFound(res, c, model, 'predictLongRunning');
      const body = jsonBody(raw, res, c);
      if (!body) return;
      const problems = [...requestProblems(c, { headers: headersOf(req), query, body }), ...modelProblems(c, modelDefs(c)[model], body, [])];
      // instances[] and parameters are google.protobuf.Value: only the request's own top level is typed.
      if (problems.length) return answer(res, c, 400, invalidArgument(problems, (path) => path.length === 1));
      videoSubmits.push({ model, body });
      const fault = faults.take('predict-long-running');
      if (fault && 'status' in fault) return faultAnswer(res, c, fault);
      if (fault && 'delayMs' in fault) await sleep(fault.delayMs);
      const name = `models/${model}/operations/op${++counter}`;
      ops.set(name, { polls: 0, forbidden: /forbidden/i.test(String(body.instances?.[0]?.prompt)) });
      if (fault && 'hang' in fault) return hang(res);
      if (fault && 'reset' in fault) return reset(res);
      return answer(res, c, 200, { name });
    }

    const generate = /^\/v1beta\/models\/([\w.-]+):generateContent$/.exec(url.pathname);
    if (req.method === 'POST' && generate) {
      const c = contract('generate-content');
      if (!keyAccepted(req, res, c)) return;
      const model = generate[1]!;
      if (!GEMINI_FAKE_MODELS[model]?.methods.includes('generateContent')) return modelNotFound(res, c, model, 'generateContent');
      const body = jsonBody(raw, res, c);
      if (!body) return;
      const problems = requestProblems(c, { headers: headersOf(req), query, body });
      const imageConfig = body.generationConfig?.imageConfig;
      if (!problems.length && imageConfig) problems.push(...modelProblems(c, modelDefs(c)[model], imageConfig, ['generationConfig', 'imageConfig']));
      if (problems.length) return answer(res, c, 400, invalidArgument(problems, () => true));
      imageCalls.push({ model, body });
      imageDeadlines.push(req.headers['x-server-timeout'] as string | undefined);
      const limited = quotaRefusal(model);
      if (limited) return answer(res, c, 429, limited);
      const fault = faults.take('generate-content');
      if (fault && 'status' in fault) return faultAnswer(res, c, fault);
      recent.get(model)!.push(now());
      const takes = (opts.imageMs ?? 0) + (fault && 'delayMs' in fault ? fault.delayMs : 0);
      const deadline = Number(req.headers['x-server-timeout']) * 1000;
      if (deadline > 0 && takes > deadline) {
        await sleep(deadline);
        return faultAnswer(res, c, { status: 504 });
      }
      await sleep(takes);
      const prompt = String(body.contents?.[0]?.parts?.[0]?.text);
      if (/forbidden/i.test(prompt)) return answer(res, c, 200, { promptFeedback: { blockReason: 'SAFETY' } });
      if (fault && 'answer' in fault) return sendJson(res, 200, fault.answer);
      billedImages.push({ model, prompt });
      if (fault && 'hang' in fault) return hang(res);
      if (fault && 'reset' in fault) return reset(res);
      return answer(res, c, 200, { candidates: [{ content: { role: 'model', parts: [{ inlineData: { mimeType: 'image/png', data: opts.png.toString('base64') } }] }, finishReason: 'STOP' }], modelVersion: model });
    }

    const download = /^\/v1beta\/files\/(op\d+):download$/.exec(url.pathname);
    if (req.method === 'GET' && download) {
      const c = contract('file-download');
      if (!keyAccepted(req, res, c)) return;
      const problems = requestProblems(c, { headers: headersOf(req), query });
      if (problems.length) return answer(res, c, 400, invalidArgument(problems, () => true));
      // As Google does: the file's URI answers with a redirect to where the bytes are, on another host.
      checkAnswer(c, 302, undefined);
      res.writeHead(302, { location: `${storageBase}/signed/${download[1]}.mp4?Expires=9999999999&Signature=fake` });
      return res.end();
    }

    const op = /^\/v1beta\/(models\/[\w.-]+\/operations\/(op\d+))$/.exec(url.pathname);
    if (req.method === 'GET' && op) {
      const c = contract('operations-get');
      if (!keyAccepted(req, res, c)) return;
      const problems = requestProblems(c, { headers: headersOf(req), query });
      if (problems.length) return answer(res, c, 400, invalidArgument(problems, () => true));
      const o = ops.get(op[1]!);
      if (!o) return answer(res, c, 404, googleError(404, 'NOT_FOUND', `Operation ${op[1]} not found.`));
      o.polls++;
      if (o.polls <= (opts.pollsUntilDone ?? 2)) return answer(res, c, 200, { name: op[1], metadata: {} });
      const response = o.forbidden
        ? { raiMediaFilteredCount: 1, raiMediaFilteredReasons: ['The prompt could not be submitted: it may violate our policies.'] }
        : { generatedSamples: [{ video: { uri: `${base}/v1beta/files/${op[2]}:download?alt=media` } }] };
      return answer(res, c, 200, { name: op[1], done: true, response: { '@type': 'type.googleapis.com/google.ai.generativelanguage.v1beta.PredictLongRunningResponse', generateVideoResponse: response } });
    }

    if (req.method === 'GET' && url.pathname === '/v1beta/models') {
      const c = contract('models-list');
      if (!keyAccepted(req, res, c)) return;
      const problems = requestProblems(c, { headers: headersOf(req), query });
      if (problems.length) return answer(res, c, 400, invalidArgument(problems, () => true));
      const all = Object.keys(GEMINI_FAKE_MODELS);
      const start = Number(query.pageToken ?? 0);
      const size = Math.min(Number(query.pageSize ?? 50), 1000);
      const next = start + size < all.length ? { nextPageToken: String(start + size) } : {};
      return answer(res, c, 200, { models: all.slice(start, start + size).map(modelResource), ...next });
    }

    const get = /^\/v1beta\/models\/([\w.-]+)$/.exec(url.pathname);
    if (req.method === 'GET' && get) {
      const c = contract('models-get');
      if (!keyAccepted(req, res, c)) return;
      const problems = requestProblems(c, { headers: headersOf(req), query });
      if (problems.length) return answer(res, c, 400, invalidArgument(problems, () => true));
      if (!GEMINI_FAKE_MODELS[get[1]!]) return answer(res, c, 404, googleError(404, 'NOT_FOUND', `models/${get[1]} is not found for API version v1beta, or is not supported for GetModel. Call ListModels to see the list of available models and their supported methods.`));
      return answer(res, c, 200, modelResource(get[1]!));
    }
    return sendJson(res, 404, googleError(404, 'NOT_FOUND', 'Not found'));
  });
  base = await listenOnLoopback(server);

  // The file store the download redirects to: another origin, which needs only the signed link.
  const storage = http.createServer((req, res) => {
    storageReads.push({ path: req.url ?? '', headers: req.headers });
    res.writeHead(200, { 'content-type': 'video/mp4' });
    res.end(opts.video);
  });
  storageBase = await listenOnLoopback(storage);

  return {
    url: `${base}/v1beta`,
    base,
    videoSubmits,
    imageCalls,
    imageDeadlines,
    billedImages,
    failNext: (call: GeminiCall, fault: Fault, after?: number) => faults.failNext(call, fault, after),
    storageReads,
    refusals,
    close: async () => {
      await Promise.all([closeServer(server), closeServer(storage)]);
    },
  };
}
