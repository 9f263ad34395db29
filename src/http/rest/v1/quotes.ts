import { GENERATION_OPERATION_TABLE, isVoiceOperation, OPERATION_TABLE, OPERATIONS, restName, type VoiceOperation } from '../../../domain/operations.ts';
import { scrapeInput } from '../../../services/ad-library/scrape.ts';
import { quoteRateCost, type Quotable } from '../../../services/quotes.ts';
import type { z } from 'zod';
import type { ErrorCode } from '../../../domain/errors.ts';
import { quoteSchema } from './responses.ts';
import { routeUsing } from './route.ts';
import { voiceRoutes } from './voices.ts';

const route = routeUsing('quotes');

// POST /quotes/<a create's path>: exactly that create's body, checked and priced, nothing stored.
const exampleOf = (path: string) => voiceRoutes.find((r) => r.path === path)?.example;

type Quoted = { path: string; what: Quotable; name: string; body: z.ZodType; errors: ErrorCode[]; example?: unknown };
// A voiceover's quote fails as its create does: an unknown voice, and for speech-to-speech a source it cannot fetch.
const VOICE_ERRORS: Record<VoiceOperation, ErrorCode[]> = { 'text-to-speech': ['not_found'], 'speech-to-speech': ['not_found', 'external_service_error'] };
const QUOTABLE: Quoted[] = [
  ...OPERATIONS.map((what): Quoted => {
    const e = OPERATION_TABLE[what];
    const quoted = { path: e.path, what, name: restName(e), body: e.schema };
    return isVoiceOperation(what)
      ? { ...quoted, errors: VOICE_ERRORS[what], example: exampleOf(e.path) }
      : { ...quoted, errors: ['not_found', 'conflict'], example: GENERATION_OPERATION_TABLE[what].openapi.example };
  }),
  { path: '/ad-library/scrape', what: 'ad-library-scrape', name: 'AdLibraryScrape', body: scrapeInput, errors: [] },
];

export const quoteRoutes = QUOTABLE.map((q) =>
  route({
    method: 'POST',
    path: `/quotes${q.path}`,
    operationId: `quote${q.name}`,
    tag: 'Quotes',
    cost: quoteRateCost(q.what),
    summary: `The price of POST ${q.path}, before paying`,
    description: `Takes exactly the body of \`POST ${q.path}\`, runs the same validation and lookups, and answers what that create would charge now. Nothing is stored or charged.`,
    body: q.body,
    example: q.example,
    responses: { 200: { description: 'The price and whether the balance covers it', schema: quoteSchema } },
    errors: ['validation_error', ...q.errors],
    handler: (s, req) => s.quotes.quote(req.principal, q.what, req.body),
  }),
);
