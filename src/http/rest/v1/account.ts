import { ledgerQuery } from '../../../services/credits.ts';
import { creditBalanceSchema, ledgerLineSchema, page } from './responses.ts';
import { routeUsing } from './route.ts';
import { z } from 'zod';

const route = routeUsing('credits', 'storageUsage');

const storageUsageSchema = z
  .object({
    outputs_bytes: z.int().meta({ description: "generations' results and voiceovers' audio" }),
    inputs_bytes: z.int().meta({ description: 'input copies kept for generations, product and custom avatar images' }),
    uploads_bytes: z.int().meta({ description: 'uploads (ready ones)' }),
    total_bytes: z.int().meta({ description: 'the sum, which the storage quota is checked against' }),
    quota_bytes: z.int().nullable().meta({ description: "the tier's storage quota; past it uploads and new generations are refused (403 forbidden); null = none" }),
  })
  .meta({ id: 'StorageUsage' });

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
  route({
    method: 'GET',
    path: '/account/storage',
    operationId: 'getStorageUsage',
    tag: 'Account',
    summary: "The bytes the team stores, by kind, and its tier's storage quota",
    responses: { 200: { description: 'The usage', schema: storageUsageSchema } },
    errors: [],
    handler: (s, req) => s.storageUsage.get(req.principal.teamId),
  }),
];
