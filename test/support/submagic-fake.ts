import http from 'node:http';
import { readForm, readRaw, sendJson, servedVideo, listenOnLoopback, closeServer } from './http-fake.ts';

/*
 * A local stand-in for Submagic's API as docs.submagic.co/api-reference describes it:
 * `x-api-key`; POST /v1/projects {title, language, videoUrl, templateName} and POST
 * /v1/projects/upload (multipart `file` and the same fields) -> {id, status: "processing"};
 * GET /v1/projects/{id} moving processing -> transcribing -> completed, `downloadUrl` filled after
 * POST /v1/projects/{id}/export ({message, projectId, status: "exporting"}); errors {error, message}.
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
}

export async function startSubmagicFake(opts: { key: string; video: Buffer }) {
  const projects = new Map<string, Project>();
  let failNext: string | undefined;
  let counter = 0;
  let base = '';

  const view = (p: Project) => {
    const transcribed = p.polls >= 2;
    const rendered = p.exportedAtPoll !== undefined && p.polls > p.exportedAtPoll;
    const status = p.failure && transcribed ? 'failed' : rendered ? 'completed' : p.exportedAtPoll !== undefined ? 'exporting' : transcribed ? 'completed' : p.polls === 1 ? 'transcribing' : 'processing';
    return {
      id: p.id,
      title: p.title,
      language: p.language,
      status,
      templateName: p.templateName,
      ...(status === 'failed' ? { failureReason: p.failure } : {}),
      ...(rendered ? { downloadUrl: `${base}/files/${p.id}.mp4`, directUrl: `${base}/files/${p.id}.mp4` } : {}),
    };
  };

  const create = (res: http.ServerResponse, f: { title?: unknown; language?: unknown; templateName?: unknown; videoUrl?: unknown }, upload?: Buffer) => {
    if (typeof f.title !== 'string' || f.title.length < 1 || f.title.length > 100) return sendJson(res, 400, { error: 'VALIDATION_ERROR', message: 'title must be 1-100 characters' });
    if (typeof f.language !== 'string' || !/^[a-z]{2}/.test(f.language)) return sendJson(res, 400, { error: 'VALIDATION_ERROR', message: 'language is required' });
    if (!upload && (typeof f.videoUrl !== 'string' || !/^https?:\/\//.test(f.videoUrl))) return sendJson(res, 400, { error: 'VALIDATION_ERROR', message: 'videoUrl must be a public URL' });
    const id = `00000000-0000-4000-8000-${String(++counter).padStart(12, '0')}`;
    const p: Project = { id, title: f.title, language: f.language, templateName: typeof f.templateName === 'string' ? f.templateName : undefined, videoUrl: typeof f.videoUrl === 'string' ? f.videoUrl : undefined, upload, polls: 0, exports: 0, exportedAtPoll: undefined, failure: failNext };
    failNext = undefined;
    projects.set(id, p);
    return sendJson(res, 201, { ...view(p), createdAt: new Date().toISOString() });
  };

  const server = http.createServer(async (req, res) => {
    const raw = await readRaw(req);
    const url = new URL(req.url ?? '/', base);
    if (servedVideo(req, res, url, opts.video)) return;
    if (req.headers['x-api-key'] !== opts.key) return sendJson(res, 401, { error: 'UNAUTHORIZED', message: 'Invalid API key' });
    if (req.method === 'POST' && url.pathname === '/v1/projects') return create(res, JSON.parse(raw.toString('utf8')) as Record<string, unknown>);
    if (req.method === 'POST' && url.pathname === '/v1/projects/upload') {
      const form = await readForm(req, raw);
      const f = form.get('file');
      if (!f || typeof f === 'string') return sendJson(res, 400, { error: 'VALIDATION_ERROR', message: 'file is required' });
      return create(res, { title: form.get('title'), language: form.get('language'), templateName: form.get('templateName') }, Buffer.from(await f.arrayBuffer()));
    }
    const exp = /^\/v1\/projects\/([\w-]+)\/export$/.exec(url.pathname);
    if (req.method === 'POST' && exp) {
      const p = projects.get(exp[1]!);
      if (!p) return sendJson(res, 404, { error: 'NOT_FOUND', message: 'Project not found' });
      if (p.polls < 2) return sendJson(res, 400, { error: 'BAD_REQUEST', message: 'Project is not transcribed yet' });
      p.exports++;
      p.exportedAtPoll ??= p.polls;
      return sendJson(res, 200, { message: 'Export started successfully', projectId: p.id, status: 'exporting' });
    }
    const one = /^\/v1\/projects\/([\w-]+)$/.exec(url.pathname);
    if (req.method === 'GET' && one) {
      const p = projects.get(one[1]!);
      if (!p) return sendJson(res, 404, { error: 'NOT_FOUND', message: 'Project not found' });
      p.polls++;
      return sendJson(res, 200, view(p));
    }
    return sendJson(res, 404, { error: 'NOT_FOUND', message: 'Not found' });
  });
  base = await listenOnLoopback(server);
  return {
    url: base,
    projects,
    failNext: (message: string) => (failNext = message),
    /** What a person approving in Submagic's editor does: the export. */
    exportByHand: (id: string) => {
      const p = projects.get(id)!;
      p.exports++;
      p.exportedAtPoll ??= p.polls;
    },
    close: () => closeServer(server),
  };
}
