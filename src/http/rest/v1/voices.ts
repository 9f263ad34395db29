import { OPERATION_TABLE } from '../../../domain/operations.ts';
import { voicesQuery } from '../../../domain/voiceover-inputs.ts';
import { idempotencyOf, sendOutcome } from './outcome.ts';
import { page, voiceoverSchema, voiceSchema } from './responses.ts';
import { routeUsing } from './route.ts';

const route = routeUsing('voices', 'voiceovers');

const tag = 'Voiceovers';
// The voiceovers' paths, names and bodies are their entries in the operation table.
const tts = OPERATION_TABLE['text-to-speech'];
const sts = OPERATION_TABLE['speech-to-speech'];

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
    path: tts.path,
    operationId: tts.operationId,
    tag,
    summary: 'A voiceover read from text (synchronous)',
    description: 'Synchronous: answers the finished voiceover, whose `id` can be passed as `voiceover_id` to a talking avatar. Cost: 1 credit.',
    body: tts.schema,
    example: { text: 'Big sale today: every trail shoe 20 % off.', voice_id: '21m00Tcm4TlvDq8ikWAM', voice_settings: { stability: 0.5, similarity_boost: 0.75 } },
    idempotent: true,
    responses: { 201: { description: 'The finished voiceover', schema: voiceoverSchema } },
    errors: ['validation_error', 'insufficient_credits', 'not_found', 'conflict', 'external_service_error'],
    handler: async (s, req, reply) => sendOutcome(reply, await s.voiceovers.textToSpeech(req.principal, req.body, idempotencyOf(req))),
  }),
  route({
    method: 'POST',
    path: sts.path,
    operationId: sts.operationId,
    tag,
    summary: 'A recording re-spoken in a catalogue voice (synchronous)',
    description: 'Synchronous. The cost depends on the source audio duration (the spec\'s brackets, at most 120 s); the audio is fetched and measured.',
    body: sts.schema,
    example: { audio_url: 'https://example.com/read.wav', voice_id: '21m00Tcm4TlvDq8ikWAM' },
    idempotent: true,
    responses: { 201: { description: 'The finished voiceover', schema: voiceoverSchema } },
    errors: ['validation_error', 'insufficient_credits', 'not_found', 'conflict', 'external_service_error'],
    handler: async (s, req, reply) => sendOutcome(reply, await s.voiceovers.speechToSpeech(req.principal, req.body, idempotencyOf(req))),
  }),
];
