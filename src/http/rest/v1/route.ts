import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { pickServices, type Services } from '../../../service-factories.ts';
import type { ErrorCode } from '../../../domain/errors.ts';
import { REQUEST_COST } from '../../../domain/rate-limit.ts';

/** What a route takes and answers, as the OpenAPI document states it. */
export interface RouteDoc {
  method: 'GET' | 'POST' | 'DELETE';
  /** Fastify's form, under /api/v1: `/products/:id`. */
  path: string;
  operationId: string;
  tag: string;
  summary: string;
  description?: string;
  params?: z.ZodObject;
  query?: z.ZodType;
  body?: z.ZodType;
  /** A request body the route accepts, shown in the document. */
  example?: unknown;
  /** Takes an Idempotency-Key (every POST that creates something). */
  idempotent?: boolean;
  /** What it draws from the key's token bucket: GETs are reads, the rest writes unless said otherwise. */
  cost?: keyof typeof REQUEST_COST;
  /** The answers other than errors, by status. */
  responses: Record<number, { description: string; schema?: z.ZodType; headers?: Record<string, string> }>;
  /** The errors this route can answer besides those of every route (401, 403, 404 route, 400 body). */
  errors: ErrorCode[];
  /** Request bodies in other media types than JSON, as the document states them (JSON Schema). */
  otherBodies?: Record<string, { schema: Record<string, unknown>; description?: string }>;
}

export interface Route<K extends keyof Services = keyof Services> extends RouteDoc {
  /** The services its handler is given, and so the only ones it can call. */
  uses: readonly K[];
  handler: (services: Pick<Services, K>, request: FastifyRequest<{ Params: Record<string, string> }>, reply: FastifyReply) => unknown;
  /** A route that reads other bodies than JSON: its own scope, given its parsers and its body limit here. */
  bodies?: (scope: FastifyInstance, services: Pick<Services, K>) => { bodyLimit: number };
}

/**
 * The `route` of a module whose handlers call these services and no other: a route of /api/v1,
 * its document and its handler in one place, so the two cannot drift.
 */
export function routeUsing<K extends keyof Services>(...uses: K[]) {
  return (r: Omit<Route<K>, 'uses'>): Route<K> => ({ ...r, uses });
}

function mountOne<K extends keyof Services>(scope: FastifyInstance, services: Services, r: Route<K>): void {
  const given = pickServices(services, r.uses);
  const cost = REQUEST_COST[r.cost ?? (r.method === 'GET' ? 'read' : 'write')];
  if (r.bodies) {
    const bodies = r.bodies;
    scope.register(async (own) => {
      const { bodyLimit } = bodies(own, given);
      own.route<{ Params: Record<string, string> }>({ method: r.method, url: r.path, bodyLimit, config: { cost }, handler: (request, reply) => r.handler(given, request, reply) });
    });
    return;
  }
  scope.route<{ Params: Record<string, string> }>({ method: r.method, url: r.path, config: { cost }, handler: (request, reply) => r.handler(given, request, reply) });
}

/** Registers routes, each handler given only the services its module uses. */
export function mount(scope: FastifyInstance, services: Services, routes: readonly Route[]): void {
  for (const r of routes) mountOne(scope, services, r);
}
