import SchemaBuilder from '@pothos/core';
import ErrorsPlugin from '@pothos/plugin-errors';
import type { GraphQLContext } from './request-context.ts';

export const builder = new SchemaBuilder<{
  Context: GraphQLContext;
  Scalars: {
    DateTime: { Input: string; Output: string };
    JSON: { Input: unknown; Output: unknown };
  };
  DefaultFieldNullability: false;
}>({
  // Inputs are validated by the services with the same zod schemas REST uses, so both doors agree.
  plugins: [ErrorsPlugin],
  defaultFieldNullability: false,
  errors: { defaultTypes: [] },
});

builder.scalarType('DateTime', {
  description: 'An ISO 8601 timestamp',
  serialize: (v) => String(v),
  parseValue: (v) => String(v),
});

builder.scalarType('JSON', {
  description: 'Any JSON value',
  serialize: (v) => v,
  parseValue: (v) => v,
});
