import type { FastifyInstance } from 'fastify';
import type { VoiceService } from '../services/voices.ts';
import { contentRange, rangeAnswer, rangeRefusal } from './byte-range.ts';

const header = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value);

/**
 * A catalogue voice reading one line: the same bytes for everyone, so the link needs neither a
 * key nor a signature and an <audio> element can play it straight from GET /voices.
 */
export function registerVoicePreviewRoute(app: FastifyInstance, voices: VoiceService): void {
  app.get<{ Params: { file: string } }>('/voice-previews/:file', async (request, reply) => {
    const id = request.params.file.replace(/\.mp3$/, '');
    const bytes = await voices.preview(id);
    reply.header('Accept-Ranges', 'bytes').header('Cache-Control', 'public, max-age=86400').header('X-Content-Type-Options', 'nosniff');
    // Safari's <audio> asks for a range first and plays nothing from a server that ignores it.
    const range = header(request.headers.range);
    const answer = rangeAnswer(range, bytes.length, header(request.headers['if-range']));
    if (answer.kind === 'unsatisfiable') return reply.status(416).header('Content-Range', contentRange(bytes.length)).send(rangeRefusal(range, bytes.length));
    reply.header('Content-Type', 'audio/mpeg');
    if (answer.kind === 'whole') return reply.send(bytes);
    return reply.status(206).header('Content-Range', contentRange(bytes.length, answer.range)).send(bytes.subarray(answer.range.start, answer.range.end + 1));
  });
}
