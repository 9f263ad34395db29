import type { FastifyInstance } from 'fastify';
import type { VoiceService } from '../services/voices.ts';

/**
 * A catalogue voice reading one line: the same bytes for everyone, so the link needs neither a
 * key nor a signature and an <audio> element can play it straight from GET /voices.
 */
export function registerVoicePreviewRoute(app: FastifyInstance, voices: VoiceService): void {
  app.get<{ Params: { file: string } }>('/voice-previews/:file', async (request, reply) => {
    const id = request.params.file.replace(/\.mp3$/, '');
    const bytes = await voices.preview(id);
    return reply
      .header('Content-Type', 'audio/mpeg')
      .header('Cache-Control', 'public, max-age=86400')
      .header('X-Content-Type-Options', 'nosniff')
      .send(bytes);
  });
}
