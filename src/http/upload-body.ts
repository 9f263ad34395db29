import { Busboy, type BusboyHeaders, type BusboyInstance } from '@fastify/busboy';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { PassThrough, type Readable } from 'node:stream';
import { byteLimit } from '../adapters/net/byte-limit.ts';
import { AppError } from '../domain/errors.ts';

/** Room for a multipart form's boundaries, part headers and small fields around the largest file. */
export const MULTIPART_OVERHEAD = 64 * 1024;

const bodyTooLarge = () => new AppError('validation_error', 'the request body is too large');
const unreadableForm = () => new AppError('validation_error', 'file: the multipart form could not be read');

function contentTypeOf(request: FastifyRequest): string {
  return String(request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

/** An upload's bytes as they arrive, and the length the client announced for them when it did. */
export interface UploadBody {
  stream: Readable;
  declaredBytes?: number;
}

/** Every body of the scope not parsed by a more specific parser is left unread, for the route to stream. */
export function leaveBodiesUnread(scope: FastifyInstance): void {
  scope.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
}

/**
 * The file of an upload request as a stream: the body itself, or the one file part of a
 * multipart form (a form with no file or several is refused once it has been read). Nothing is
 * held: the bytes flow to whoever reads the stream, at its pace. The request itself is never
 * destroyed, so a refusal still reaches the client (see `answerEarly`). A Content-Length over
 * `maxBodyBytes` is refused before a byte is read, and the count goes on as bytes arrive.
 */
export function uploadBodyOf(request: FastifyRequest, maxBodyBytes: number): UploadBody {
  const raw = request.raw;
  const announced = Number(request.headers['content-length']);
  if (Number.isFinite(announced) && announced > maxBodyBytes) throw bodyTooLarge();
  const counted = byteLimit(maxBodyBytes, bodyTooLarge);
  const out = new PassThrough();
  const fail = (e: Error) => {
    raw.unpipe(counted);
    out.destroy(e);
  };
  // A body cut off by the client must not end like a whole one: only a complete request ends the stream.
  const cutOff = () => fail(new AppError('validation_error', 'the upload was cut off before its end'));
  raw.on('error', fail);
  raw.once('close', () => {
    if (!raw.complete) cutOff();
  });
  raw.once('end', () => (raw.complete ? counted.end() : cutOff()));
  counted.on('error', fail);
  raw.pipe(counted, { end: false });
  if (contentTypeOf(request) !== 'multipart/form-data') {
    counted.pipe(out);
    return { stream: out, ...(Number.isFinite(announced) && raw.headers['content-length'] !== undefined ? { declaredBytes: announced } : {}) };
  }
  let form: BusboyInstance;
  try {
    form = Busboy({ headers: request.headers as BusboyHeaders, limits: { fields: 50, fieldSize: 16 * 1024, headerPairs: 50 } });
  } catch {
    throw unreadableForm();
  }
  let files = 0;
  form.on('file', (_field, file) => {
    files++;
    // A part cut short fails its file stream: unheard, that error would end the process.
    file.on('error', () => fail(unreadableForm()));
    // Later files are read and dropped: the form is refused once its end shows how many it had.
    if (files === 1) file.pipe(out, { end: false });
    else file.resume();
  });
  form.once('finish', () => {
    if (files === 1) out.end();
    else fail(new AppError('validation_error', `file: a multipart upload carries exactly one file part; this one has ${files}`));
  });
  form.on('error', () => fail(unreadableForm()));
  counted.pipe(form);
  return { stream: out };
}

/**
 * When an answer goes out before the whole body was read (a refusal partway), the connection
 * closes after it: what the client still sends is read and dropped by the edge, so it sees the
 * answer instead of a reset.
 */
export async function answerEarly<T>(request: FastifyRequest, reply: FastifyReply, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    if (!request.raw.complete) {
      request.raw.unpipe();
      reply.header('connection', 'close');
    }
    throw e;
  }
}
