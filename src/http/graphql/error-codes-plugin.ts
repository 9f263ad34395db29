import { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';

/**
 * Every error of an answer names its code, as REST's do: graphql-js reports variables that do not
 * fit their declared types (a missing ID!, a string for an Int) from inside execution, without
 * one. Those are the caller's mistake: `validation_error`, with graphql-js's words.
 */
export function errorCodesPlugin(): Plugin {
  return {
    onExecute() {
      return {
        onExecuteDone({ result, setResult }) {
          if (Symbol.asyncIterator in result || !result.errors?.some((e) => !e.extensions?.code)) return;
          setResult({
            ...result,
            errors: result.errors.map((e) =>
              e.extensions?.code ? e : new GraphQLError(e.message, { nodes: e.nodes ?? null, path: e.path ?? null, originalError: e.originalError ?? null, extensions: { ...e.extensions, code: 'validation_error' } }),
            ),
          });
        },
      };
    },
  };
}
