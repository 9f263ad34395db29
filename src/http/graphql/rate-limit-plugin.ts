import type { FastifyReply } from 'fastify';
import { getOperationAST, GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { REQUEST_COST } from '../../domain/rate-limit.ts';
import type { GraphQLContext } from './context.ts';

/**
 * The key's token bucket for GraphQL, the same one REST draws from: each operation of a request
 * (a batch counts each) takes a read's tokens, a mutation a write's. Over HTTP the answer carries
 * RateLimit-*; an empty bucket answers 429 with Retry-After and a `rate_limited` error, nothing
 * executed. Subscriptions are not counted (they cost nothing until an event).
 */
export function rateLimitPlugin(): Plugin<GraphQLContext & { reply?: FastifyReply }> {
  return {
    async onExecute({ args, setResultAndStopExecution }) {
      const ctx = args.contextValue;
      if (!('principal' in ctx.auth)) return; // the fields answer the 401/403 themselves
      const operation = getOperationAST(args.document, args.operationName ?? undefined);
      const cost = operation?.operation === 'mutation' ? REQUEST_COST.write : REQUEST_COST.read;
      const { headers, refusal } = await ctx.app.services.rateLimiter.draw(ctx.auth.bucket, ctx.auth.rate, cost);
      ctx.reply?.headers(headers);
      if (refusal) {
        setResultAndStopExecution({ errors: [new GraphQLError(refusal.message, { extensions: { code: refusal.code, http: { status: 429, headers } } })] });
      }
    },
  };
}
