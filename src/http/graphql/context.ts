import type { FastifyReply } from 'fastify';
import type { App } from '../../app.ts';
import type { BucketRule } from '../../domain/rate-limit.ts';
import { AppError } from '../../domain/errors.ts';
import type { EventBus } from '../../events/pg-events.ts';
import type { Principal } from '../../services/context.ts';
import { createLoaders, type Loaders } from './loaders.ts';

export interface GraphQLContext {
  app: App;
  /** The caller's key, checked once per request (HTTP) or connection (WebSocket). */
  auth: { principal: Principal; rate: BucketRule } | { error: AppError };
  /** The HTTP reply (not over WebSocket): where RateLimit-* go. */
  reply?: FastifyReply | undefined;
  loaders: Loaders;
  /** This process's LISTEN connection, shared by every subscription. */
  events: EventBus;
}

export async function buildContext(app: App, events: EventBus, authorization: string | undefined, reply?: FastifyReply): Promise<GraphQLContext> {
  let auth: GraphQLContext['auth'];
  try {
    auth = await app.services.auth.authorize(authorization);
  } catch (e) {
    if (!(e instanceof AppError)) throw e;
    auth = { error: e };
  }
  return { app, events, auth, reply, loaders: createLoaders(app, 'principal' in auth ? auth.principal : undefined) };
}

/** Every field but the introspection ones needs a valid key: the same 401/403 rules as REST. */
export function principalOf(ctx: GraphQLContext): Principal {
  if ('error' in ctx.auth) throw ctx.auth.error;
  return ctx.auth.principal;
}
