import http from 'node:http';
import { checkAnswer, formFields, loadContract, requestProblems, type Contract, type ContractProblem, jsonPartProblems } from './contract.ts';
import { readForm, readRaw, sendJson, servedVideo, listenOnLoopback, closeServer } from './http-fake.ts';

/*
 * A local stand-in for Submagic's API, held to the contracts in test/contracts/submagic/ (written
 * from docs.submagic.co/api-reference: create-project, upload-project, get-project,
 * export-project, templates): `x-api-key`; POST /v1/projects (JSON with videoUrl) and POST
 * /v1/projects/upload (multipart with `file`) -> a project {id, status: "processing"}; GET
 * /v1/projects/{id} moving processing -> transcribing, then as `autoRender` says
 * (docs.submagic.co/guides/edit-transcript-before-rendering): by default the project renders as soon
 * as it is transcribed (exporting -> completed with `downloadUrl`, no export call); with
 * `autoRender: false` it stops at completed without `downloadUrl` ("transcribed and ready to
 * edit") until POST /v1/projects/{id}/export ({message, projectId, status: "exporting"}) or an
 * export in Submagic's editor (`exportByHand`) renders it. Every export is counted, so a test sees
 * a render asked for twice. GET /v1/templates.
 * Errors are Submagic's {error, message}: a request that breaks its contract is 400
 * VALIDATION_ERROR with `details: [{field, message, value}]` naming the field (create-project's
 * error responses), a wrong key 401 UNAUTHORIZED, an unknown project 404 NOT_FOUND. GET
 * /v1/projects/{id} is limited as get-project documents it, 100 requests an hour per key (or the
 * window a test gives): past that, 429 RATE_LIMIT_EXCEEDED with retryAfter (seconds). Every answer
 * is held to the contract; `readLog` keeps every project read with its status, 429s included.
 * Creates may be answered late (`delaySubmits`; the project exists from the moment the request is
 * read: Submagic keeps no idempotency key, so a create cut by the client's limit is made all the
 * same), and with `createLimit` they are limited as create-project and upload-project document
 * (500 requests an hour each page; an older copy gave 30), past it the same 429.
 */
interface Project {
  id: string;
  title: string;
  language: string;
  templateName: string | undefined;
  videoUrl: string | undefined;
  upload: Buffer | undefined;
  polls: number;
  exports: number;
  exportedAtPoll: number | undefined;
  failure: string | undefined;
  /** When transcription ends (ms, this fake's clock), with finishAfterMs; the export then renders at once. */
  transcribedAt?: number;
  /** Renders as soon as it is transcribed (Submagic's default for an API project). */
  autoRender: boolean;
}

const CONTRACTS = {
  create: loadContract('submagic', 'create-project'),
  upload: loadContract('submagic', 'upload-project'),
  get: loadContract('submagic', 'get-project'),
  export: loadContract('submagic', 'export-project'),
  templates: loadContract('submagic', 'list-templates'),
};
const HOUR_MS = 3_600_000;
export const SUBMAGIC_FAKE_TEMPLATES = ['Sara', 'Daniel', 'Hormozi 1', 'Hormozi 2', 'Beast', 'Leila', 'Ella', 'Karl'];

export async function startSubmagicFake(opts: {
  key: string;
  video: Buffer;
  templates?: string[];
  projectReadsPerHour?: number;
  /** A window other than the hour (a test's seconds), over projectReadsPerHour. */
  projectReads?: { requests: number; perMs: number };
  /** The retryAfter of a 429 (Submagic's page shows 30). */
  retryAfterSeconds?: number;
  /** Projects are transcribed by the clock instead of by polls, each this long after its creation (the in-flight bench). */
  finishAfterMs?: () => number;
  /** Creates (JSON and upload together) allowed in a window; past it, 429 RATE_LIMIT_EXCEEDED. */
  createLimit?: { requests: number; perMs: number };
}) {
  const projects = new Map<string, Project>();
  /** When each GET /v1/projects/{id} arrived (ms): what Submagic's hourly limit counts. */
  const reads: number[] = [];
  let failNext: string | undefined;
  let counter = 0;
  let base = '';
  const limit = opts.projectReads ?? { requests: opts.projectReadsPerHour ?? 100, perMs: HOUR_MS };
  const readLog: Array<{ at: number; status: number }> = [];
  const recentCreates: number[] = [];
  let submitDelayMs = 0;

  const answer = (res: http.ServerResponse, c: Contract, status: number, body: unknown) => {
    checkAnswer(c, status, JSON.parse(JSON.stringify(body)));
    sendJson(res, status, body);
  };
  // A misnamed field is both unknown and, under its right name, missing: the field sent comes first.
  const ORDER: Record<ContractProblem['kind'], number> = { unknown: 0, enum: 1, type: 2, invalid: 3, missing: 4 };
  const refuse = (res: http.ServerResponse, c: Contract, found: ContractProblem[], values: Record<string, unknown>) => {
    const problems = [...found].sort((a, b) => ORDER[a.kind] - ORDER[b.kind]);
    const details = problems.map((p) => ({ field: p.path.join('.') || p.where, message: p.message, value: p.path.length === 1 ? (values[String(p.path[0])] ?? null) : null }));
    answer(res, c, 400, { error: 'VALIDATION_ERROR', message: 'Request validation failed', details: JSON.parse(JSON.stringify(details)) as unknown });
  };

  const isTranscribed = (p: Project) => (p.transcribedAt !== undefined ? Date.now() >= p.transcribedAt : p.polls >= 2);
  const view = (p: Project) => {
    const transcribed = isTranscribed(p);
    // An API project renders by itself once transcribed, unless it was created with autoRender: false.
    if (transcribed && p.autoRender && !p.failure) p.exportedAtPoll ??= p.polls;
    const rendered = p.exportedAtPoll !== undefined && (p.transcribedAt !== undefined || p.polls > p.exportedAtPoll);
    const status = p.failure && transcribed ? 'failed' : rendered ? 'completed' : p.exportedAtPoll !== undefined ? 'exporting' : transcribed ? 'completed' : p.polls === 1 ? 'transcribing' : 'processing';
    return {
      id: p.id,
      title: p.title,
      language: p.language,
      status,
      transcriptionStatus: p.failure && transcribed ? 'FAILED' : transcribed ? 'COMPLETED' : 'PROCESSING',
      ...(p.templateName ? { templateName: p.templateName } : {}),
      ...(status === 'failed' ? { failureReason: p.failure } : {}),
      ...(rendered ? { downloadUrl: `${base}/files/${p.id}.mp4`, directUrl: `${base}/files/${p.id}.mp4`, previewUrl: `https://app.submagic.co/view/${p.id}` } : {}),
    };
  };

  const create = async (res: http.ServerResponse, c: Contract, f: Record<string, unknown>, upload?: Buffer) => {
    const now = Date.now();
    const limit = opts.createLimit;
    while (limit && recentCreates.length && recentCreates[0]! <= now - limit.perMs) recentCreates.shift();
    if (limit && recentCreates.length >= limit.requests) return answer(res, c, 429, { error: 'RATE_LIMIT_EXCEEDED', message: 'Too many requests', retryAfter: opts.retryAfterSeconds ?? 30 });
    if (limit) recentCreates.push(now);
    const id = `00000000-0000-4000-8000-${String(++counter).padStart(12, '0')}`;
    const p: Project = {
      id,
      title: String(f.title),
      language: String(f.language),
      templateName: typeof f.templateName === 'string' ? f.templateName : undefined,
      videoUrl: typeof f.videoUrl === 'string' ? f.videoUrl : undefined,
      upload,
      polls: 0,
      exports: 0,
      exportedAtPoll: undefined,
      failure: failNext,
      // JSON gives a boolean, the form text.
      autoRender: f.autoRender !== false && f.autoRender !== 'false',
      ...(opts.finishAfterMs ? { transcribedAt: Date.now() + opts.finishAfterMs() } : {}),
    };
    failNext = undefined;
    projects.set(id, p);
    const made = { ...view(p), createdAt: new Date().toISOString() };
    // A long create: the project exists already; its answer comes later, to a client that may have given up.
    if (submitDelayMs > 0) await new Promise((r) => setTimeout(r, submitDelayMs));
    return answer(res, c, 201, made);
  };

  const server = http.createServer(async (req, res) => {
    const raw = await readRaw(req);
    const url = new URL(req.url ?? '/', base);
    if (servedVideo(req, res, url, opts.video)) return;
    const exp = /^\/v1\/projects\/([^/]+)\/export$/.exec(url.pathname);
    const one = /^\/v1\/projects\/([^/]+)$/.exec(url.pathname);
    const c =
      req.method === 'POST' && url.pathname === '/v1/projects'
        ? CONTRACTS.create
        : req.method === 'POST' && url.pathname === '/v1/projects/upload'
          ? CONTRACTS.upload
          : req.method === 'POST' && exp
            ? CONTRACTS.export
            : req.method === 'GET' && url.pathname === '/v1/templates'
              ? CONTRACTS.templates
              : req.method === 'GET' && one
                ? CONTRACTS.get
                : undefined;
    if (!c) return sendJson(res, 404, { error: 'NOT_FOUND', message: 'Not found' });
    if (req.headers['x-api-key'] !== opts.key) return answer(res, c, 401, { error: 'UNAUTHORIZED', message: 'Invalid or missing API key' });
    const query = Object.fromEntries(url.searchParams);

    if (c === CONTRACTS.upload) {
      const form = await readForm(req, raw);
      const fields = await formFields(form);
      const problems = [...requestProblems(c, { headers: req.headers, query, body: fields }), ...jsonPartProblems(c, 'dictionary', fields.dictionary)];
      if (problems.length) return refuse(res, c, problems, fields);
      return create(res, c, fields, Buffer.from(await (form.get('file') as File).arrayBuffer()));
    }
    let body: unknown;
    try {
      body = c.request.body ? (raw.length ? JSON.parse(raw.toString('utf8')) : {}) : undefined;
    } catch {
      return answer(res, c, 400, { error: 'VALIDATION_ERROR', message: 'The body is not JSON' });
    }
    const problems = requestProblems(c, { headers: req.headers, query, ...(c.request.body ? { body } : {}) });
    if (problems.length) return refuse(res, c, problems, (body ?? {}) as Record<string, unknown>);
    if (c === CONTRACTS.create) return create(res, c, body as Record<string, unknown>);
    if (c === CONTRACTS.templates) return answer(res, c, 200, { templates: opts.templates ?? SUBMAGIC_FAKE_TEMPLATES });
    if (c === CONTRACTS.export) {
      const p = projects.get(exp![1]!);
      if (!p) return answer(res, c, 404, { error: 'NOT_FOUND', message: 'Project not found' });
      if (!isTranscribed(p)) return answer(res, c, 400, { error: 'BAD_REQUEST', message: 'Project is not transcribed yet' });
      p.exports++;
      p.exportedAtPoll ??= p.polls;
      return answer(res, c, 200, { message: 'Export started successfully', projectId: p.id, status: 'exporting' });
    }
    // GET /v1/projects/{id}: 100 an hour (get-project); the rest is refused, as Submagic refuses it.
    const now = Date.now();
    while (reads.length && reads[0]! <= now - limit.perMs) reads.shift();
    if (reads.length >= limit.requests) {
      readLog.push({ at: now, status: 429 });
      return answer(res, c, 429, { error: 'RATE_LIMIT_EXCEEDED', message: 'Too many requests', retryAfter: opts.retryAfterSeconds ?? 30 });
    }
    reads.push(now);
    readLog.push({ at: now, status: 200 });
    const p = projects.get(one![1]!);
    if (!p) return answer(res, c, 404, { error: 'NOT_FOUND', message: 'Project not found' });
    p.polls++;
    return answer(res, c, 200, view(p));
  });
  base = await listenOnLoopback(server);
  return {
    url: base,
    projects,
    reads,
    readLog,
    failNext: (message: string) => (failNext = message),
    /** Creates answer this long after their request is read (the project is made at once). */
    delaySubmits: (ms: number) => (submitDelayMs = ms),
    /** What a person approving in Submagic's editor does: the export. */
    exportByHand: (id: string) => {
      const p = projects.get(id)!;
      p.exports++;
      p.exportedAtPoll ??= p.polls;
    },
    close: () => closeServer(server),
  };
}
