import type { FastifyReply } from 'fastify';
import { parse, serialize } from 'cookie';
import { SESSION_COOKIE } from '../../domain/dashboard-users.ts';

/** The dashboard session's secret from a Cookie header (HTTP and the WebSocket upgrade alike). */
export const sessionSecretOf = (cookieHeader: string | undefined): string | undefined => (cookieHeader ? parse(cookieHeader)[SESSION_COOKIE] : undefined);

export const setSessionCookie = (reply: FastifyReply, value: string, maxAgeSeconds: number): FastifyReply =>
  reply.header('set-cookie', serialize(SESSION_COOKIE, value, { path: '/', httpOnly: true, secure: true, sameSite: 'lax', maxAge: maxAgeSeconds }));
