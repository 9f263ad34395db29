import { getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Metrics } from '../../observability/metrics.ts';

/** Every executed operation counted by its type and whether its result carries errors. */
export function metricsPlugin(metrics: Metrics): Plugin {
  return {
    onExecute({ args }) {
      const type = getOperationAST(args.document, args.operationName ?? undefined)?.operation ?? 'unknown';
      return {
        onExecuteDone({ result }) {
          const errors = (result as { errors?: unknown[] } | undefined)?.errors;
          metrics.graphql.operations.inc({ type, outcome: errors?.length ? 'error' : 'ok' });
        },
      };
    },
  };
}
