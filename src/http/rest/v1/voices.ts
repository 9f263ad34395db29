import type { FastifyInstance } from 'fastify';
import type { VoiceoverService } from '../../../services/voiceovers.ts';
import type { VoiceService } from '../../../services/voices.ts';
import { idempotencyOf, sendOutcome } from './outcome.ts';

export function voiceRoutes(scope: FastifyInstance, deps: { voices: VoiceService; voiceovers: VoiceoverService }): void {
  scope.get('/voices', (req) => deps.voices.list(req.query));
  scope.post('/voiceovers/text-to-speech', async (req, reply) =>
    sendOutcome(reply, await deps.voiceovers.textToSpeech(req.principal, req.body, idempotencyOf(req))),
  );
  scope.post('/voiceovers/speech-to-speech', async (req, reply) =>
    sendOutcome(reply, await deps.voiceovers.speechToSpeech(req.principal, req.body, idempotencyOf(req))),
  );
}
