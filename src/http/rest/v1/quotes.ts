import { speechToSpeechInput, textToSpeechInput } from '../../../domain/voiceover-inputs.ts';
import { scrapeInput } from '../../../services/ad-library/scrape.ts';
import { OPERATIONS } from '../../../services/generations/operations.ts';
import { quoteRateCost, type Quotable } from '../../../services/quotes.ts';
import type { z } from 'zod';
import type { ErrorCode } from '../../../domain/errors.ts';
import { CREATES } from './generations.ts';
import { quoteSchema } from './responses.ts';
import { routeUsing } from './route.ts';
import { voiceRoutes } from './voices.ts';

const route = routeUsing('quotes');

// POST /quotes/<a create's path>: exactly that create's body, checked and priced, nothing stored.
const exampleOf = (path: string) => voiceRoutes.find((r) => r.path === path)?.example;

type Quoted = { path: string; what: Quotable; name: string; body: z.ZodType; errors: ErrorCode[]; example?: unknown };
const QUOTABLE: Quoted[] = [
  ...CREATES.map((c): Quoted => ({ path: c.path, what: c.operation, name: c.operationId.replace(/^create/, ''), body: OPERATIONS[c.operation].schema, errors: ['not_found', 'conflict'], example: c.example })),
  { path: '/voiceovers/text-to-speech', what: 'text-to-speech', name: 'TextToSpeech', body: textToSpeechInput, errors: ['not_found'], example: exampleOf('/voiceovers/text-to-speech') },
  { path: '/voiceovers/speech-to-speech', what: 'speech-to-speech', name: 'SpeechToSpeech', body: speechToSpeechInput, errors: ['not_found', 'external_service_error'], example: exampleOf('/voiceovers/speech-to-speech') },
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
