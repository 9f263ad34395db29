import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { PageFallback } from './errors.ts';
import type { Config } from '../config.ts';
import { graphiqlPolicy, mediaOrigins } from './security-headers.ts';

/** Built by `npm start`/`npm test` (vite build of web/): the dashboard and GraphiQL. */
export const WEB_DIST = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../web/dist');

// Paths that are never the dashboard's: an unknown one there is the API's 404, never a page.
const NOT_APP = /^\/(api|graphql|files|hooks|auth|docs|healthz|readyz|metrics|voice-previews|assets)(\/|$)/;

const NOT_BUILT = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>adforge</title></head>
<body><h1>The dashboard is not built</h1><p>Run <code>npm run build:web</code> (or <code>npm start</code>, which builds it), then reload.</p></body></html>`;

const wantsPage = (request: FastifyRequest) => request.method === 'GET' && /text\/html/.test(String(request.headers.accept ?? ''));

/**
 * The dashboard at / (a single-page app: any other page address gets index.html) and GraphiQL at
 * GET /graphql for browsers, both from web/dist. Hashed assets are cached for a year.
 */
export async function registerWebApp(fastify: FastifyInstance, config: Pick<Config, 'storage' | 's3'>): Promise<PageFallback> {
  const built = fs.existsSync(path.join(WEB_DIST, 'index.html'));
  const graphiqlCsp = graphiqlPolicy(mediaOrigins(config));
  if (built) {
    await fastify.register(fastifyStatic, {
      root: WEB_DIST,
      prefix: '/',
      index: ['index.html'],
      // Our cache-control below: hashed assets forever, pages revalidated.
      cacheControl: false,
      setHeaders: (reply, file) => {
        reply.header('cache-control', file.includes(`${path.sep}assets${path.sep}`) ? 'public, max-age=31536000, immutable' : 'no-cache');
      },
    });
  } else {
    fastify.get('/', (_request, reply) => reply.type('text/html; charset=utf-8').send(NOT_BUILT));
  }
  const page = (reply: FastifyReply, file: string) =>
    built ? reply.header('cache-control', 'no-cache').sendFile(file) : reply.type('text/html; charset=utf-8').send(NOT_BUILT);

  // A browser opening /graphql gets GraphiQL; a GET with a query (or any other client) gets Yoga.
  // A hook of that one route (added as it is declared), so no other request pays for the check.
  const graphiql = async (request: FastifyRequest, reply: FastifyReply) => {
    if (wantsPage(request) && request.url === '/graphql') return page(reply.header('content-security-policy', graphiqlCsp), 'graphiql.html');
  };
  fastify.addHook('onRoute', (route) => {
    if (route.url === '/graphql') route.onRequest = [...(route.onRequest ? [route.onRequest].flat() : []), graphiql];
  });

  // For the not-found handler: any other page address of the app is the app (it routes in the browser).
  return (request, reply) => {
    if (!wantsPage(request) || NOT_APP.test(request.url.split('?')[0]!)) return undefined;
    return page(reply, 'index.html');
  };
}
