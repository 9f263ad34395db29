import fs from 'node:fs/promises';
import path from 'node:path';
import { createRequire } from 'node:module';
import type { FastifyInstance } from 'fastify';
import { printedOpenApi } from './rest/openapi.ts';

// The contract and its reference page, both without a key. The page is Swagger UI served from
// its npm package through this server (no CDN), under a policy that lets it load nothing else.

const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>adforge API reference</title>
<link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
<div id="reference"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/start.js"></script>
</body>
</html>
`;

// Our own script rather than an inline one, so the policy needs no 'unsafe-inline' for scripts.
const START = `window.ui = SwaggerUIBundle({ url: '/api/v1/openapi.json', dom_id: '#reference', deepLinking: true, validatorUrl: null });\n`;

// Swagger UI sets inline styles; it fetches only the document, from here.
const POLICY = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export function registerApiDocs(fastify: FastifyInstance): void {
  // Built on the first request (about 100 ms), not at every start.
  let openApi: string | undefined;
  const dir = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

  fastify.get('/api/v1/openapi.json', (_req, reply) => reply.type('application/json; charset=utf-8').send((openApi ??= printedOpenApi())));
  fastify.get('/docs', (_req, reply) => reply.header('content-security-policy', POLICY).type('text/html; charset=utf-8').send(PAGE));
  fastify.get('/docs/assets/start.js', (_req, reply) => reply.type('text/javascript; charset=utf-8').send(START));
  fastify.get<{ Params: { file: string } }>('/docs/assets/:file', async (req, reply) => {
    const type = ASSETS[req.params.file];
    if (!type) return reply.callNotFound();
    const bytes = await fs.readFile(path.join(dir, req.params.file));
    return reply.header('cache-control', 'public, max-age=86400').type(type).send(bytes);
  });
}
