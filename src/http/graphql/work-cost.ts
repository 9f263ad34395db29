import { getOperationAST, Kind, parse, type DocumentNode, type FragmentDefinitionNode, type GraphQLSchema, type SelectionSetNode } from 'graphql';
import { REQUEST_COST } from '../../domain/rate-limit.ts';
import { GRAPHQL_LIMITS } from './limits.ts';

/**
 * What a root field takes from the key's bucket when it is not its operation's kind's price (a
 * query's field a read, a mutation's a write), declared on the field as `extensions.rateCost`:
 * a quote that downloads and probes media is a write.
 */
export type RateCost = keyof typeof REQUEST_COST;

/**
 * The tokens an operation takes: each root field its own price, every alias counted (fields asked
 * twice under one response name are resolved once, so counted once), fragments on the root
 * followed. Subscriptions are priced where they subscribe; an operation that cannot be found is 0.
 */
export function operationCost(schema: GraphQLSchema, document: DocumentNode, operationName?: string | null): number {
  const operation = getOperationAST(document, operationName ?? undefined);
  if (!operation || operation.operation === 'subscription') return 0;
  const root = operation.operation === 'mutation' ? schema.getMutationType() : schema.getQueryType();
  const fallback: RateCost = operation.operation === 'mutation' ? 'write' : 'read';
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  const byResponseName = new Map<string, number>();
  const followed = new Set<string>();
  const visit = (set: SelectionSetNode): void => {
    for (const s of set.selections) {
      if (s.kind === Kind.FIELD) {
        const declared = root?.getFields()[s.name.value]?.extensions?.rateCost as RateCost | undefined;
        const name = s.alias?.value ?? s.name.value;
        byResponseName.set(name, Math.max(byResponseName.get(name) ?? 0, REQUEST_COST[declared ?? fallback]));
      } else if (s.kind === Kind.INLINE_FRAGMENT) {
        visit(s.selectionSet);
      } else if (!followed.has(s.name.value)) {
        followed.add(s.name.value);
        const fragment = fragments.get(s.name.value);
        if (fragment) visit(fragment.selectionSet);
      }
    }
  };
  visit(operation.selectionSet);
  let total = 0;
  for (const cost of byResponseName.values()) total += cost;
  return total;
}

// Clients send the same few documents again and again: each is parsed and priced once, not at
// every request (Yoga caches its own parse the same way). The oldest entry goes past the bound.
// Only documents of an ordinary size are kept, so the cache stays small whatever is sent.
const PRICED_DOCUMENTS = 1000;
const MAX_PRICED_LENGTH = 16 * 1024;
const priced = new Map<string, number>();

/** One operation as sent: its price, or 0 when it does not parse within the token limit (it is answered with its syntax error). */
function sentCost(schema: GraphQLSchema, query: string, operationName: string | null | undefined): number {
  const key = `${operationName ?? ''}\n${query}`;
  const known = priced.get(key);
  if (known !== undefined) return known;
  let cost = 0;
  try {
    cost = operationCost(schema, parse(query, { maxTokens: GRAPHQL_LIMITS.maxTokens }), operationName);
  } catch {
    cost = 0;
  }
  if (key.length <= MAX_PRICED_LENGTH) {
    if (priced.size >= PRICED_DOCUMENTS) priced.delete(priced.keys().next().value!);
    priced.set(key, cost);
  }
  return cost;
}

/**
 * The tokens a whole HTTP request takes: every operation of a batch, as sent, before any of them is
 * validated.
 */
export function requestCost(schema: GraphQLSchema, operations: readonly { query?: string | undefined; operationName?: string | undefined | null }[]): number {
  let total = 0;
  for (const op of operations) if (typeof op?.query === 'string') total += sentCost(schema, op.query, op.operationName);
  return total;
}
