import type { FastifyReply } from 'fastify';
import type { App } from '../../app.ts';
import { canManage } from '../../domain/dashboard-users.ts';
import { sessionSecretOf } from '../dashboard/session-cookie.ts';
import { AppError } from '../../domain/errors.ts';
import type { EventBus } from '../../events/pg-events.ts';
import type { Deps } from '../../services/deps.ts';
import type { Principal } from '../../services/principal.ts';
import type { Services } from '../../service-factories.ts';
import type { DashboardPrincipal, SessionView } from '../../services/sessions.ts';
import type { Credentials, GraphQLAuth } from './caller.ts';
import type { LiveConnection, LiveSubscriptions } from './live-subscriptions.ts';
import { createLoaders, type Loaders } from './loaders.ts';

/** What resolvers can be given: every service, and the storage that signs the links of files. */
export type ResolverServices = Services & Pick<Deps, 'storage'>;

declare const sealed: unique symbol;
/** The resolver services, sealed: a type module reads the ones it named through its servicesFor accessor. */
export interface SealedServices {
  readonly [sealed]: true;
}

export const sealServices = (services: ResolverServices): SealedServices => services as unknown as SealedServices;

/**
 * A type module's accessor to the services its resolvers call, named once at the top of the
 * module: `services(ctx)` is that Pick of the record (made once per process), so the compiler
 * refuses a resolver that reaches for another.
 */
export function servicesFor<K extends keyof ResolverServices>(...names: K[]): (ctx: GraphQLContext) => Pick<ResolverServices, K> {
  const picked = new WeakMap<SealedServices, Pick<ResolverServices, K>>();
  return (ctx) => {
    let some = picked.get(ctx.services);
    if (!some) {
      const all = ctx.services as unknown as ResolverServices;
      some = Object.fromEntries(names.map((n) => [n, all[n]])) as Pick<ResolverServices, K>;
      picked.set(ctx.services, some);
    }
    return some;
  };
}

export interface GraphQLContext {
  /** Read through servicesFor, never whole. */
  services: SealedServices;
  /** The caller, checked once per request (HTTP) or connection (WebSocket). */
  auth: GraphQLAuth;
  /** The HTTP reply (not over WebSocket): where RateLimit-* go. */
  reply?: FastifyReply | undefined;
  loaders: Loaders;
  /** This process's LISTEN connection, shared by every subscription. */
  events: EventBus;
  /** What the caller presented: checked again while a subscription of theirs stays open. */
  credentials: Credentials;
  /** The WebSocket this operation came on (not over HTTP). */
  connection?: LiveConnection | undefined;
  /** This node's open subscriptions, their credentials and caps. */
  live?: LiveSubscriptions | undefined;
}

/**
 * Two doors to one schema (DESIGN decision 17). An Authorization header is an API key, as in
 * REST, and then a cookie is ignored. Without one, the dashboard's session cookie counts only
 * with its CSRF token: a page of another site can make the browser send the cookie, never the token.
 */
export async function authenticate(app: App, c: Credentials): Promise<GraphQLAuth> {
  try {
    if (c.authorization !== undefined || !c.cookie) {
      const { principal, rate } = await app.services.auth.authorize(c.authorization);
      return { principal, rate, bucket: principal.keyId };
    }
    const session = await app.services.sessions.requireSession(sessionSecretOf(c.cookie), c.csrfToken);
    return {
      principal: { teamId: session.teamId, keyId: null, userId: session.userId },
      rate: app.config.rateLimits[session.tier],
      bucket: `user:${session.userId}`,
      session,
    };
  } catch (e) {
    if (!(e instanceof AppError)) throw e;
    return { error: e };
  }
}

export async function buildContext(
  app: App,
  services: SealedServices,
  events: EventBus,
  credentials: Credentials,
  reply?: FastifyReply,
  extra: { connection?: LiveConnection | undefined; live?: LiveSubscriptions | undefined } = {},
): Promise<GraphQLContext> {
  const auth = await authenticate(app, credentials);
  if ('principal' in auth && reply) {
    // The client as Fastify names it (TRUST_PROXY), for the audit lines this request may write.
    const client = { ip: reply.request.ip, user_agent: reply.request.headers['user-agent'] ?? null };
    auth.principal = { ...auth.principal, client };
    if (auth.session) auth.session = { ...auth.session, client };
  }
  return { services, events, auth, reply, credentials, ...extra, loaders: createLoaders(app.services, 'principal' in auth ? auth.principal : undefined) };
}

/**
 * A subscription held to its credential and to the caps: refused up front past a cap, ended when
 * the key or session that opened it ends. `source` registers what to stop at that moment.
 */
export async function liveSubscription<T>(ctx: GraphQLContext, source: (onEnd: (stop: () => unknown) => void) => AsyncIterator<T>): Promise<AsyncIterableIterator<T>> {
  principalOf(ctx);
  if (!ctx.live) throw new Error('subscriptions need the live subscriptions of createGraphqlHandler');
  return ctx.live.open(ctx.auth, ctx.credentials, ctx.connection, ctx.reply, source);
}

/** Every field but the introspection ones needs a valid key or session: the same 401/403 rules as REST. */
export function principalOf(ctx: GraphQLContext): Principal {
  if ('error' in ctx.auth) throw ctx.auth.error;
  return ctx.auth.principal;
}

/** The dashboard's own fields (keys, members, sign-out) answer a signed-in person, never an API key. */
export function sessionOf(ctx: GraphQLContext): DashboardPrincipal & { view: SessionView } {
  if ('error' in ctx.auth) throw ctx.auth.error;
  if (!ctx.auth.session) throw new AppError('forbidden', 'This is for the dashboard: sign in there; an API key cannot manage keys, webhooks or members');
  return ctx.auth.session;
}

export function ownerOf(ctx: GraphQLContext): DashboardPrincipal & { view: SessionView } {
  const s = sessionOf(ctx);
  if (!canManage(s.role)) throw new AppError('forbidden', 'Only a team owner can do this');
  return s;
}
