// What every client of our GraphQL API does the same way: the dashboard (web/src/api/client.ts,
// the session's cookie) and the campaign CLI (src/cli/campaign/api.ts, an API key) send the same
// operation body, read the same answer and turn a mutation's result union into its data or an error.
// Pure: no Node and no DOM, so the browser bundle and the CLI both import it.

/** An error the server answered with (a GraphQL error's `extensions.code`, or an `AppError` result), or one the client names. */
export class ApiError extends Error {
  readonly code: string;
  /** Seconds the server asked to wait (its Retry-After), when it said. */
  readonly retryAfter: number | undefined;
  constructor(code: string, message: string, retryAfter?: number) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.retryAfter = retryAfter;
  }
}

export type GraphqlErrors = { message: string; extensions?: { code?: string } }[];

/** A GraphQL answer over HTTP. */
export interface GraphqlAnswer<T> {
  data?: T | null;
  errors?: GraphqlErrors;
}

/** The body of one operation sent over HTTP. */
export const operationBody = (query: string, variables: Record<string, unknown>): string => JSON.stringify({ query, variables });

/** An answer's text read as a GraphQL answer; undefined when it is not JSON (a proxy's error page). */
export function readAnswer<T>(text: string): GraphqlAnswer<T> | undefined {
  try {
    return JSON.parse(text) as GraphqlAnswer<T>;
  } catch {
    return undefined;
  }
}

/** The graphql-ws address of an HTTP(S) GraphQL endpoint: the same URL on wss: (ws: for http:). */
export function websocketUrl(endpoint: URL): string {
  const url = new URL(endpoint.href);
  url.protocol = endpoint.protocol === 'https:' ? 'wss:' : 'ws:';
  return url.href;
}

/** A mutation's result union: a success gives its `data`; an `AppError` is thrown as an ApiError with its code. */
export function unwrap<T>(result: { __typename: string; data?: T; code?: string; message?: string }): T {
  if (result.__typename === 'AppError') throw new ApiError(result.code ?? 'error', result.message ?? 'refused');
  return result.data as T;
}
