import { parse, validate } from 'graphql';
import { describe, expect, it } from 'vitest';
import * as dataOperations from '../../web/src/api/data-operations.ts';
import * as operations from '../../web/src/api/operations.ts';
import { graphqlSchema } from '../../src/http/graphql/schema.ts';

// The dashboard is a GraphQL client like any other: every document it sends must be valid
// against the schema the server serves, so a change to one breaks this test, not the page.
describe('the dashboard\'s GraphQL documents', () => {
  const documents: [string, string][] = Object.entries({ ...operations, ...dataOperations } as Record<string, unknown>).filter((e): e is [string, string] => typeof e[1] === 'string');
  it('are there', () => expect(documents.length).toBeGreaterThan(15));
  for (const [name, text] of documents) {
    it(`${name} is valid against the schema`, () => {
      expect(validate(graphqlSchema(), parse(text)).map((e) => e.message)).toEqual([]);
    });
  }
});
