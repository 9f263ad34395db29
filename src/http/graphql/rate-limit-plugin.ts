import type { FastifyReply } from 'fastify';
import { GraphQLError } from 'graphql';
import type { GraphQLParams, Plugin } from 'graphql-yoga';
import type { RateLimiter } from '../../services/rate-limiter.ts';
import type { GraphQLContext } from './request-context.ts';
import { operationCost, requestCost } from './work-cost.ts';

/** One HTTP request's operations, and the one draw that pays for all of them. */
interface RequestWork {
  operations: readonly GraphQLParams[];
  draw?: ReturnType<RateLimiter['draw']>;
  /** The headers of a refusal, for the whole answer. */
  refused?: Record<string, string>;
}

/**
 * The key's token bucket for GraphQL, the same one REST draws from, priced by the work asked,
 * not by the request: each root field of each operation (every operation of a batch, every alias)
 * takes a read's tokens in a query, a write's in a mutation, or what the field declares
 * (work-cost.ts: a quote that downloads media is a write). An HTTP request is drawn whole, once,
 * before any of its resolvers runs: the bucket pays for all of it or none of it runs. Over
 * WebSocket each operation is drawn alone. Over HTTP the answer carries RateLimit-*; a refusal
 * answers 429 with Retry-After and a `rate_limited` error for every operation, nothing executed.
 * Subscribing is charged where subscriptions are counted (live-subscriptions.ts), not here.
 */
export function rateLimitPlugin(rateLimiter: Pick<RateLimiter, 'draw'>): Plugin<GraphQLContext & { reply?: FastifyReply; request?: Request }> {
  const requests = new WeakMap<Request, RequestWork>();
  return {
    onRequestParse({ request }) {
      return {
        onRequestParseDone({ requestParserResult }) {
          requests.set(request, { operations: Array.isArray(requestParserResult) ? requestParserResult : [requestParserResult] });
        },
      };
    },
    async onExecute({ args, setResultAndStopExecution }) {
      const ctx = args.contextValue;
      if (!('principal' in ctx.auth)) return; // the fields answer the 401/403 themselves
      const { bucket, rate } = ctx.auth;
      const draw = (cost: number) => rateLimiter.draw(bucket, rate, cost);
      const work = ctx.request && requests.get(ctx.request);
      // Every operation of one HTTP request waits on the same draw, made for all of them.
      const { headers, refusal } = await (work ? (work.draw ??= draw(requestCost(args.schema, work.operations))) : draw(operationCost(args.schema, args.document, args.operationName)));
      ctx.reply?.headers(headers);
      if (refusal) {
        if (work) work.refused = headers;
        setResultAndStopExecution({ errors: [new GraphQLError(refusal.message, { extensions: { code: refusal.code, http: { status: 429, headers } } })] });
      }
    },
    // A batch is answered as an array, which Yoga sends as 200 whatever its errors say: refused, it is a 429 too.
    onResponse({ request, response, setResponse, fetchAPI }) {
      const refused = requests.get(request)?.refused;
      if (!refused || response.status === 429) return;
      const headers = new fetchAPI.Headers(response.headers);
      for (const [name, value] of Object.entries(refused)) headers.set(name, value);
      setResponse(new fetchAPI.Response(response.body, { status: 429, statusText: 'Too Many Requests', headers }));
    },
  };
}
