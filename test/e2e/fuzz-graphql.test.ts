import fc from 'fast-check';
import {
  buildClientSchema,
  getIntrospectionQuery,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isScalarType,
  type GraphQLInputType,
  type GraphQLSchema,
} from 'graphql';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/app.ts';
import { graphqlClient } from '../support/graphql-client.ts';

// Every mutation of the GraphQL schema, its variables generated from its argument types (and
// values of the wrong type): never a 5xx nor an internal error; each error names its code; a
// mutation that answered only errors changed nothing stored or charged.

const RUNS = Number(process.env.FUZZ_RUNS ?? 12);
const KNOWN_CODES = new Set(['validation_error', 'unauthorized', 'insufficient_credits', 'forbidden', 'not_found', 'conflict', 'rate_limited', 'GRAPHQL_VALIDATION_FAILED', 'BAD_USER_INPUT', 'GRAPHQL_PARSE_FAILED']);

let svc: TestService;
let client: Awaited<ReturnType<typeof graphqlClient>>;
let key: string;
let schema: GraphQLSchema;

beforeAll(async () => {
  svc = await startTestService();
  client = await graphqlClient(svc);
  ({ key } = await svc.team({ credits: 1_000_000 }));
  const introspection = await client.gql(getIntrospectionQuery(), {}, key);
  schema = buildClientSchema(introspection.body.data);
});
afterAll(async () => {
  await client?.close();
  await svc?.close();
});

async function stored(): Promise<Record<string, number>> {
  const { rows } = await sql<Record<string, number>>`select
      (select coalesce(sum(credits_used), 0) from teams)::int as credits_used,
      (select count(*) from credit_ledger)::int as ledger,
      (select count(*) from generations)::int as generations,
      (select count(*) from products)::int as products,
      (select count(*) from brands)::int as brands,
      (select count(*) from avatars)::int as avatars,
      (select count(*) from voiceovers)::int as voiceovers,
      (select count(*) from campaigns)::int as campaigns,
      (select count(*) from api_keys)::int as keys,
      (select count(*) from graphile_worker._private_jobs)::int as jobs`.execute(svc.app.db);
  return rows[0]!;
}

const wrong = fc.oneof(fc.string({ maxLength: 20 }), fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.constant([]), fc.constant({}));

/** A value for a GraphQL input type, usually of that type, now and then of another. */
function valueOf(type: GraphQLInputType, depth = 0): fc.Arbitrary<unknown> {
  const shaped = shapedValue(type, depth);
  return fc.oneof({ weight: 6, arbitrary: shaped }, { weight: 1, arbitrary: wrong });
}

function shapedValue(type: GraphQLInputType, depth: number): fc.Arbitrary<unknown> {
  if (isNonNullType(type)) return valueOf(type.ofType, depth);
  if (isListType(type)) return fc.array(valueOf(type.ofType, depth + 1), { maxLength: depth > 2 ? 0 : 3 });
  if (isEnumType(type)) return fc.constantFrom(...type.getValues().map((v) => v.name));
  if (isInputObjectType(type)) {
    const fields = Object.values(type.getFields());
    if (depth > 3) return fc.constant({});
    return fc.record(Object.fromEntries(fields.map((f) => [f.name, valueOf(f.type, depth + 1)])), { requiredKeys: [] });
  }
  if (isScalarType(type)) {
    switch (type.name) {
      case 'Int':
        return fc.oneof(fc.integer({ min: -5, max: 100 }), fc.integer());
      case 'Float':
        return fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer({ min: 0, max: 60 }));
      case 'Boolean':
        return fc.boolean();
      case 'ID':
        return fc.oneof(fc.uuid(), fc.string({ maxLength: 40 }));
      case 'DateTime':
        return fc.oneof(fc.date({ noInvalidDate: true }).map((d) => d.toISOString()), fc.string({ maxLength: 20 }));
      case 'JSON':
        return fc.jsonValue({ maxDepth: 2 });
      default:
        // Strings: links only ever point at a closed loopback port.
        return fc.oneof(fc.string({ maxLength: 60 }), fc.constantFrom('http://127.0.0.1:9/a.png', 'fast', '1:1', 'en'));
    }
  }
  return wrong;
}

const mutations = () => Object.values(schema.getMutationType()!.getFields());

describe('fuzzing every GraphQL mutation from the schema', () => {
  it('the schema has mutations to fuzz', () => {
    expect(mutations().length).toBeGreaterThan(10);
  });

  it('every mutation: never a 5xx or an internal error, each error coded; an all-error answer stored nothing', async () => {
    for (const field of mutations()) {
      const args = field.args;
      const variables = fc.record(Object.fromEntries(args.map((a) => [a.name, valueOf(a.type)])), { requiredKeys: [] });
      const declared = args.map((a) => `$${a.name}: ${a.type.toString()}`).join(', ');
      const passed = args.map((a) => `${a.name}: $${a.name}`).join(', ');
      const selection = isScalarType(getNamedType(field.type)) || isEnumType(getNamedType(field.type)) ? '' : ' { __typename }';
      const query = `mutation Fuzz${declared ? `(${declared})` : ''} { ${field.name}${passed ? `(${passed})` : ''}${selection} }`;
      await fc.assert(
        fc.asyncProperty(variables, async (vars) => {
          const before = await stored();
          const res = await client.gql(query, vars, key);
          expect(res.status, `${field.name} ${JSON.stringify(vars).slice(0, 200)}: ${JSON.stringify(res.body).slice(0, 300)}`).toBeLessThan(500);
          const errors = (res.body.errors ?? []) as { message: string; extensions?: { code?: string } }[];
          for (const e of errors) {
            expect(KNOWN_CODES.has(e.extensions?.code ?? ''), `${field.name}: ${JSON.stringify(e)}`).toBe(true);
            expect(e.message.length).toBeGreaterThan(0);
          }
          if (errors.length && !res.body.data?.[field.name]) expect(await stored(), `${field.name} failed but changed what is stored`).toEqual(before);
        }),
        { numRuns: RUNS },
      );
    }
  }, 120_000);
});
