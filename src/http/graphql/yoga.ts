import type http from 'node:http';
import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import proxyAddr from '@fastify/proxy-addr';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GraphQLError } from 'graphql';
import { createYoga, maskError } from 'graphql-yoga';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import type { App } from '../../app.ts';
import { AppError } from '../../domain/errors.ts';
import { isDatabaseUnavailable } from '../../domain/database-unavailable.ts';
import type { EventBus } from '../../events/pg-events.ts';
import type { Credentials } from './caller.ts';
import { GRAPHQL_LIMITS } from './limits.ts';
import { authenticate, buildContext, sealServices, type GraphQLContext } from './request-context.ts';
import { createLiveSubscriptions, type LiveConnection, type LiveSubscriptions } from './live-subscriptions.ts';
import { metricsPlugin } from './metrics-plugin.ts';
import { fastifyTrustProxy } from '../trust-proxy.ts';
import { errorCodesPlugin } from './error-codes-plugin.ts';
import { rateLimitPlugin } from './rate-limit-plugin.ts';
import { graphqlSchema } from './schema.ts';

export const GRAPHQL_PATH = '/graphql';
export const GRAPHQL_BODY_LIMIT = 8 * 1024 * 1024;

const credentialsOf = (headers: Headers): Credentials => ({
  authorization: headers.get('authorization') ?? undefined,
  cookie: headers.get('cookie') ?? undefined,
  csrfToken: headers.get('x-csrf-token') ?? undefined,
});

const isStreamed = (type: string | null) => !!type && /^(text\/event-stream|multipart\/mixed)/i.test(type);

/** AppErrors keep their REST code as `extensions.code`; anything else is masked. */
function mask(error: unknown, message: string, isDev?: boolean): Error {
  const original = (error as { originalError?: unknown } | undefined)?.originalError ?? error;
  if (original instanceof AppError) {
    return new GraphQLError(original.message, { extensions: { code: original.code } });
  }
  if (isDatabaseUnavailable(original)) {
    return new GraphQLError('The database is unreachable for now: retry in a few seconds', { extensions: { code: 'service_unavailable', http: { status: 503, headers: { 'retry-after': '5' } } } });
  }
  return maskError(error, message, isDev);
}

/**
 * A WebSocket frame is a message of graphql-transport-ws: a subscription document and its
 * variables, never an upload. ws's own default (100 MiB) would be read whole before any
 * authentication; a larger frame closes the socket with 1009.
 */
export const WEBSOCKET_MAX_PAYLOAD = 64 * 1024;

export function createGraphqlHandler(app: App, events: EventBus) {
  const services = sealServices({ ...app.services, storage: app.storage });
  const live = createLiveSubscriptions(app.services, events, (c) => authenticate(app, c), { limits: app.config.subscriptions });
  const yoga = createYoga<{ req?: FastifyRequest; reply?: FastifyReply; credentials?: Credentials; connection?: LiveConnection }, GraphQLContext>({
    schema: graphqlSchema(),
    graphqlEndpoint: GRAPHQL_PATH,
    // GraphiQL is ours (web/graphiql.html, served from web/dist), not Yoga's page of CDN scripts.
    graphiql: false,
    logging: false,
    maskedErrors: { maskError: mask },
    batching: { limit: 5 },
    // Pages of any site may call GraphQL with an API key, never with the browser's credentials:
    // Yoga's default would allow credentials for whatever origin asks.
    cors: { origin: '*', credentials: false },
    context: (init) => buildContext(app, services, events, init.credentials ?? credentialsOf(init.request.headers), init.reply, { connection: init.connection, live }),
    plugins: [
      errorCodesPlugin(),
      metricsPlugin(app.metrics),
      rateLimitPlugin(app.services.rateLimiter),
      EnvelopArmorPlugin({
        maxDepth: { n: GRAPHQL_LIMITS.maxDepth },
        maxAliases: { n: GRAPHQL_LIMITS.maxAliases },
        maxTokens: { n: GRAPHQL_LIMITS.maxTokens },
        maxDirectives: { n: GRAPHQL_LIMITS.maxDirectives },
        costLimit: { maxCost: GRAPHQL_LIMITS.maxCost },
        blockFieldSuggestion: { enabled: true },
      }),
    ],
  });

  /** Mounted in its own scope so Yoga, not Fastify, reads every body and content type. */
  async function register(scope: FastifyInstance): Promise<void> {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, body));
    scope.route({
      url: GRAPHQL_PATH,
      method: ['GET', 'POST', 'OPTIONS'],
      // A batch of campaign rows (500 rows, scripts up to 5000 characters) does not fit REST's 1 MiB.
      bodyLimit: GRAPHQL_BODY_LIMIT,
      handler: async (req, reply) => {
        const response = await yoga.handleNodeRequestAndResponse(req, reply, { req, reply });
        response.headers.forEach((value, key) => reply.header(key, value));
        reply.status(response.status);
        // An answer of one piece is sent as one write (headers and body together), as REST's are;
        // piping it as a stream cost a write per chunk and the stream machinery (bench:profile).
        // Event streams and incremental (multipart) answers stay streams.
        reply.send(isStreamed(response.headers.get('content-type')) ? response.body : await response.text());
        return reply;
      },
    });
  }

  /** graphql-ws on the same path; the API key travels in connectionParams.authorization. */
  function websocket(): {
    handleUpgrade: (req: http.IncomingMessage, socket: import('node:stream').Duplex, head: Buffer) => void;
    live: LiveSubscriptions;
    close: () => Promise<void>;
  } {
    const wss = new WebSocketServer({ noServer: true, maxPayload: WEBSOCKET_MAX_PAYLOAD });
    // Sockets not yet past connection_init, per client address: each costs a TLS session and a timer.
    const unauthenticated = new Map<string, number>();
    const perClient = app.config.subscriptions.unauthenticatedPerClient;
    // The client as Fastify's request.ip names it: behind trusted proxies, from X-Forwarded-For.
    const trust = fastifyTrustProxy(app.config.trustProxy);
    const trusted = trust === false ? undefined : Array.isArray(trust) ? proxyAddr.compile(trust) : trust;
    const clientOf = (req: http.IncomingMessage) => (trusted ? proxyAddr(req, trusted) : (req.socket.remoteAddress ?? ''));
    const authenticated = new WeakMap<http.IncomingMessage, () => void>();
    // One per socket: the subscriptions it carries are counted against it.
    const connections = new WeakMap<import('ws').WebSocket, LiveConnection>();
    // The key travels in connectionParams.authorization (or apiKey); a dashboard session as the
    // upgrade's cookie with its CSRF token in connectionParams.csrfToken.
    const credentialsOfConnection = (ctx: { connectionParams?: Record<string, unknown> | undefined; extra: unknown }): Credentials => {
      const params = ctx.connectionParams;
      const raw = params?.authorization ?? params?.Authorization ?? (params?.apiKey ? `Bearer ${String(params.apiKey)}` : undefined);
      const request = (ctx.extra as { request?: http.IncomingMessage }).request;
      return {
        authorization: typeof raw === 'string' ? raw : undefined,
        cookie: request?.headers.cookie,
        csrfToken: typeof params?.csrfToken === 'string' ? params.csrfToken : undefined,
      };
    };
    // Operations over WebSocket run through Yoga's own pipeline: the same limits, masking and context.
    const server = useServer<Record<string, unknown>>(
      {
        onConnect: async (ctx) => {
          const ok = !('error' in (await authenticate(app, credentialsOfConnection(ctx))));
          if (ok) authenticated.get((ctx.extra as { request: http.IncomingMessage }).request)?.();
          return ok;
        },
        execute: (args: any) => args.rootValue.execute(args),
        subscribe: (args: any) => args.rootValue.subscribe(args),
        onSubscribe: async (ctx, _id, payload) => {
          const socket = (ctx.extra as { socket: import('ws').WebSocket }).socket;
          let connection = connections.get(socket);
          if (!connection) connections.set(socket, (connection = { close: (code: number, reason: string) => socket.close(code, reason) }));
          const { schema, execute, subscribe, contextFactory, parse, validate } = yoga.getEnveloped({
            credentials: credentialsOfConnection(ctx),
            connection,
            params: payload,
          } as never);
          const args = {
            schema,
            operationName: payload.operationName,
            document: parse(payload.query),
            variableValues: payload.variables,
            contextValue: await contextFactory(),
            rootValue: { execute, subscribe },
          };
          const errors = validate(args.schema, args.document);
          if (errors.length) return errors;
          return args;
        },
      },
      wss,
    );
    return {
      handleUpgrade(req, socket, head) {
        if ((req.url ?? '').split('?')[0] !== GRAPHQL_PATH) {
          socket.destroy();
          return;
        }
        const client = clientOf(req);
        const waiting = unauthenticated.get(client) ?? 0;
        if (waiting >= perClient) {
          socket.end('HTTP/1.1 429 Too Many Requests\r\nConnection: close\r\nRetry-After: 5\r\nContent-Length: 0\r\n\r\n');
          return;
        }
        unauthenticated.set(client, waiting + 1);
        let counted = true;
        const leave = () => {
          if (!counted) return;
          counted = false;
          const n = (unauthenticated.get(client) ?? 1) - 1;
          if (n > 0) unauthenticated.set(client, n);
          else unauthenticated.delete(client);
        };
        socket.once('close', leave);
        wss.handleUpgrade(req, socket, head, (ws) => {
          // A frame past maxPayload is the client's doing: ws has already begun closing with 1009;
          // graphql-ws would print a stack trace to stderr for each one.
          const emit = ws.emit.bind(ws);
          ws.emit = ((event: string | symbol, ...args: unknown[]) =>
            event === 'error' && (args[0] as { code?: unknown } | undefined)?.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH' ? true : emit(event, ...args)) as typeof ws.emit;
          authenticated.set(req, leave);
          ws.once('close', leave);
          wss.emit('connection', ws, req);
        });
      },
      live,
      close: async () => {
        await server.dispose();
        await new Promise<void>((r) => wss.close(() => r()));
      },
    };
  }

  return { register, websocket };
}
