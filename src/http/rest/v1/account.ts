import { ledgerQuery } from '../../../services/credits.ts';
import { creditBalanceSchema, ledgerLineSchema, page } from './responses.ts';
import { route } from './route.ts';

export const accountRoutes = [
  route({
    method: 'GET',
    path: '/account/credits',
    operationId: 'getCredits',
    tag: 'Account',
    summary: "The team's credit balance",
    responses: { 200: { description: 'The balance', schema: creditBalanceSchema } },
    errors: [],
    handler: (s, req) => s.credits.balance(req.principal),
  }),
  route({
    method: 'GET',
    path: '/account/ledger',
    operationId: 'listLedger',
    tag: 'Account',
    summary: "The team's credit ledger, newest first",
    description:
      'Every debit and refund (and period resets and limit changes), each with the credits used after it. All lines sum to `credits_used`. Filters pick lines; they do not change `credits_used_after`.',
    query: ledgerQuery,
    responses: { 200: { description: 'A page of ledger lines', schema: page(ledgerLineSchema) } },
    errors: ['validation_error'],
    handler: (s, req) => s.credits.ledger(req.principal, req.query),
  }),
];
