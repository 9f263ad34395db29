import { speechToSpeechInput, textToSpeechInput, voicesQuery } from '../../../domain/voiceover-inputs.ts';
import { idempotencyOf, sendOutcome } from './outcome.ts';
import { page, voiceoverSchema, voiceSchema } from './responses.ts';
import { route } from './route.ts';

const tag = 'Voiceovers';

export const voiceRoutes = [
  route({
    method: 'GET',
    path: '/voices',
    operationId: 'listVoices',
    tag,
    summary: 'The voice catalogue',
    query: voicesQuery,
    responses: { 200: { description: 'A page of voices', schema: page(voiceSchema) } },
    errors: ['validation_error'],
    handler: (s, req) => s.voices.list(req.query),
  }),
  route({
    method: 'POST',
    path: '/voiceovers/text-to-speech',
    operationId: 'createTextToSpeech',
    tag,
    summary: 'A voiceover read from text (synchronous)',
    body: textToSpeechInput,
    idempotent: true,
    responses: { 201: { description: 'The finished voiceover', schema: voiceoverSchema } },
    errors: ['validation_error', 'insufficient_credits', 'not_found', 'conflict', 'external_service_error'],
    handler: async (s, req, reply) => sendOutcome(reply, await s.voiceovers.textToSpeech(req.principal, req.body, idempotencyOf(req))),
  }),
  route({
    method: 'POST',
    path: '/voiceovers/speech-to-speech',
    operationId: 'createSpeechToSpeech',
    tag,
    summary: "A recording re-spoken in a catalogue voice (synchronous)",
    body: speechToSpeechInput,
    idempotent: true,
    responses: { 201: { description: 'The finished voiceover', schema: voiceoverSchema } },
    errors: ['validation_error', 'insufficient_credits', 'not_found', 'conflict', 'external_service_error'],
    handler: async (s, req, reply) => sendOutcome(reply, await s.voiceovers.speechToSpeech(req.principal, req.body, idempotencyOf(req))),
  }),
];
