import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.ts';

/**
 * Where a page may load media from besides this origin: the bucket that signs result links when
 * storage is S3 (an S3-compatible endpoint, or AWS's own hosts for the bucket's region).
 */
export function mediaOrigins(config: Pick<Config, 'storage' | 's3'>): string[] {
  const s3 = config.storage === 's3' ? config.s3 : undefined;
  if (!s3) return [];
  if (s3.endpoint) {
    const u = new URL(s3.endpoint);
    return s3.forcePathStyle ? [u.origin] : [u.origin, `${u.protocol}//${s3.bucket}.${u.host}`];
  }
  return [`https://${s3.bucket}.s3.${s3.region}.amazonaws.com`, `https://s3.${s3.region}.amazonaws.com`];
}

/**
 * The dashboard's pages: scripts and styles only from here (no inline script), media from here or
 * the bucket, requests and WebSockets only to here, and no framing by anyone.
 */
export function appPolicy(media: readonly string[]): string {
  const m = media.length ? ` ${media.join(' ')}` : '';
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src 'self' data: blob:${m}`,
    `media-src 'self' blob:${m}`,
    "connect-src 'self'",
    "font-src 'self'",
    "worker-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/**
 * GraphiQL's editor (Monaco) adds <style> elements as it runs and its stylesheet carries its fonts
 * as data: URLs; its scripts stay files of ours, so no script runs that we did not serve.
 */
export function graphiqlPolicy(media: readonly string[]): string {
  return appPolicy(media).replace("style-src 'self'", "style-src 'self' 'unsafe-inline'").replace("font-src 'self'", "font-src 'self' data:");
}

/** An answer that is not a page (JSON, files): nothing in it may run or be framed. */
export const API_POLICY = "default-src 'none'; frame-ancestors 'none'";

/** The headers every answer carries; a route that set its own policy (the API reference) keeps it. */
export function installSecurityHeaders(fastify: FastifyInstance, config: Pick<Config, 'storage' | 's3'>): void {
  const appCsp = appPolicy(mediaOrigins(config));
  fastify.addHook('onSend', async (_request, reply, payload) => {
    reply.header('strict-transport-security', 'max-age=31536000; includeSubDomains');
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'no-referrer');
    reply.header('x-frame-options', 'DENY');
    reply.header('cross-origin-opener-policy', 'same-origin');
    if (!reply.hasHeader('content-security-policy')) {
      const type = String(reply.getHeader('content-type') ?? '');
      reply.header('content-security-policy', type.startsWith('text/html') ? appCsp : API_POLICY);
    }
    return payload;
  });
}
