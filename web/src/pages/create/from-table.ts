import { graphqlQuoteName, OPERATION_TABLE, type FormOperation } from '../../../../src/domain/operations.ts';

/** What a create form takes from the operation table: its label, the body's schema, and the GraphQL fields it quotes and creates with. */
export function fromTable(operation: FormOperation) {
  const e = OPERATION_TABLE[operation];
  return { label: e.form?.label ?? operation, schema: e.schema, quoteField: graphqlQuoteName(e), createField: e.graphql.mutation };
}
