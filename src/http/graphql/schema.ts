import { lexicographicSortSchema, printSchema, type GraphQLSchema } from 'graphql';
import { builder } from './builder.ts';
import './types/errors.ts';
import './types/credit-balance.ts';
import './types/team-retention.ts';
import './types/team-storage.ts';
import './types/team.ts';
import './types/ledger-line.ts';
import './types/spend-by-day.ts';
import './types/product.ts';
import './types/brand.ts';
import './types/avatar.ts';
import './types/template.ts';
import './types/voice.ts';
import './types/generation.ts';
import './types/generation-mutations.ts';
import './types/subscriptions.ts';
import './types/ad-library.ts';
import './types/campaign.ts';
import './types/webhooks.ts';
import './types/dashboard.ts';
import './types/team-data.ts';
import './types/audit.ts';
import './types/upload.ts';
import './types/engines.ts';

builder.queryType({});
builder.mutationType({});

let schema: GraphQLSchema | undefined;

export function graphqlSchema(): GraphQLSchema {
  schema ??= builder.toSchema();
  return schema;
}

/** The SDL committed as schema/schema.graphql; sorted, so it changes only when the schema does. */
export function printedSchema(): string {
  return `${printSchema(lexicographicSortSchema(graphqlSchema()))}\n`;
}
