import { creditBalanceSchema } from './responses.ts';
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
];
