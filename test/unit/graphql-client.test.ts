import { describe, expect, it } from 'vitest';
import { ApiError, operationBody, readAnswer, unwrap, websocketUrl } from '../../src/domain/graphql-client.ts';

// The one reading of our GraphQL API's answers that the dashboard and the campaign CLI share.
describe('the GraphQL client core', () => {
  it('sends the query and its variables as one JSON body', () => {
    expect(JSON.parse(operationBody('query Q($id: ID!) { a(id: $id) }', { id: 'x' }))).toEqual({ query: 'query Q($id: ID!) { a(id: $id) }', variables: { id: 'x' } });
  });

  it('reads an answer, and nothing from a body that is not JSON', () => {
    expect(readAnswer('{"data":{"a":1}}')).toEqual({ data: { a: 1 } });
    expect(readAnswer('{"errors":[{"message":"no","extensions":{"code":"forbidden"}}]}')?.errors?.[0]?.extensions?.code).toBe('forbidden');
    expect(readAnswer('<html>502 Bad Gateway</html>')).toBeUndefined();
    expect(readAnswer('')).toBeUndefined();
  });

  it('subscribes on the same address over wss (ws for plain http)', () => {
    expect(websocketUrl(new URL('https://ads.example:8443/graphql'))).toBe('wss://ads.example:8443/graphql');
    expect(websocketUrl(new URL('http://localhost:3000/graphql'))).toBe('ws://localhost:3000/graphql');
  });

  it('unwraps a success to its data and throws an AppError with its code and message', () => {
    expect(unwrap({ __typename: 'MutationX', data: { id: 'x' } })).toEqual({ id: 'x' });
    const refused = (() => {
      try {
        unwrap({ __typename: 'AppError', code: 'insufficient_credits', message: 'Not enough credits' });
      } catch (e) {
        return e;
      }
    })();
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({ code: 'insufficient_credits', message: 'Not enough credits', retryAfter: undefined });
  });
});
