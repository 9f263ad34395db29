import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { AppError } from '../../../domain/errors.ts';
import { pageQuery } from '../../../domain/inputs.ts';
import { presignRequest } from '../../../services/uploads.ts';
import { answerEarly, leaveBodiesUnread, MULTIPART_OVERHEAD, uploadBodyOf } from '../../upload-body.ts';
import { idempotencyOf, sendOutcome } from './outcome.ts';
import { idParams, page } from './responses.ts';
import { routeUsing } from './route.ts';

const route = routeUsing('uploads');

const tag = 'Uploads';

const JSON_LIMIT = 16 * 1024;
/** The most MAX_INPUT_VIDEO_MB can be set to; what a server takes is its own setting's, stated in the description. */
const MAX_DECLARED_BYTES = 10_000 * 1024 * 1024;
const BINARY_WORDS = "The file's bytes, under any Content-Type: at most 10 MB for an image, the server's MAX_INPUT_VIDEO_MB (200 by default) for a video or audio";

const timestamp = z.iso.datetime({ offset: true }).meta({ description: 'ISO 8601 timestamp' });

export const uploadSchema = z
  .object({
    id: z.uuid(),
    url: z.string().meta({ description: '`upload:<id>`: put it in any URL field of a request (image_url, video_url, audio_url, reference images, frames, logos) of this team' }),
    content_type: z.string().meta({ description: 'What the bytes were sniffed to be (the Content-Type sent is not trusted)' }),
    size: z.int().min(0).meta({ description: 'Bytes' }),
    expires_at: timestamp.meta({ description: 'Until when the upload can be named in a request; unused, it is deleted after this' }),
  })
  .meta({ id: 'Upload' });

const uploadRead = uploadSchema.extend({ status: z.enum(['pending', 'ready']) }).meta({ id: 'UploadStatus' });

export const presignedSchema = uploadSchema
  .extend({
    status: z.literal('pending'),
    upload_url: z.string().meta({ description: 'PUT the file here (valid 1 hour), with exactly the Content-Type and size declared; then POST /uploads/{id}/complete' }),
    upload_method: z.literal('PUT'),
    upload_headers: z.record(z.string(), z.string()).meta({ description: 'Headers the PUT must carry' }),
  })
  .meta({ id: 'PresignedUpload' });

function contentTypeOf(request: FastifyRequest): string {
  return String(request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

export const uploadRoutes = [
  route({
    method: 'POST',
    path: '/uploads',
    operationId: 'createUpload',
    tag,
    summary: 'Upload an input file',
    description:
      'The file as the body (any Content-Type; its type is sniffed from the bytes), or as the one file part of a `multipart/form-data` form. Images (PNG, JPEG, WebP, GIF, AVIF) up to 10 MB; videos (MP4, MOV, WebM, Matroska) and audio (MP3, WAV, Ogg, FLAC, M4A) up to the server\'s MAX_INPUT_VIDEO_MB. ' +
      'With S3 storage, a JSON body `{content_type, size}` asks instead for a presigned PUT link: the client sends the bytes to the bucket, then calls POST /uploads/{id}/complete. On disk storage that form is a 400. ' +
      'The answer\'s `url` (`upload:<id>`) is taken by every URL field of the team\'s requests until `expires_at`.',
    body: presignRequest,
    otherBodies: {
      'application/octet-stream': { schema: { type: 'string', format: 'binary', maxLength: MAX_DECLARED_BYTES, description: BINARY_WORDS } },
      'multipart/form-data': { schema: { type: 'object', properties: { file: { type: 'string', format: 'binary', maxLength: MAX_DECLARED_BYTES, description: BINARY_WORDS } }, required: ['file'] } },
    },
    idempotent: true,
    responses: {
      201: { description: 'Stored (or, for the JSON form, a presigned upload waiting for its bytes)', schema: z.union([uploadSchema, presignedSchema]) },
    },
    errors: ['validation_error', 'conflict'],
    bodies: (scope, services) => {
      scope.removeContentTypeParser('application/json');
      scope.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: JSON_LIMIT }, (_req, text, done) => {
        try {
          done(null, JSON.parse(String(text)));
        } catch {
          done(new AppError('validation_error', 'the request body is not valid JSON'), undefined);
        }
      });
      leaveBodiesUnread(scope);
      return { bodyLimit: services.uploads.maxBytes + MULTIPART_OVERHEAD };
    },
    handler: async (s, req, reply) => {
      const type = contentTypeOf(req);
      if (type === 'application/json') return sendOutcome(reply, await s.uploads.presign(req.principal, req.body, idempotencyOf(req)));
      return answerEarly(req, reply, async () =>
        sendOutcome(reply, await s.uploads.create(req.principal, uploadBodyOf(req, s.uploads.maxBytes + MULTIPART_OVERHEAD), idempotencyOf(req))),
      );
    },
  }),
  route({
    method: 'POST',
    path: '/uploads/:id/complete',
    operationId: 'completeUpload',
    tag,
    summary: 'Complete a presigned upload',
    description: 'Checks what was PUT to the bucket: its size against the declared one and its type by its first bytes. A mismatch deletes the upload (400); a repeat answers the upload again.',
    params: idParams,
    responses: { 200: { description: 'The upload, ready to be named in requests', schema: uploadSchema } },
    errors: ['validation_error', 'not_found'],
    handler: (s, req) => s.uploads.complete(req.principal, req.params.id),
  }),
  route({
    method: 'GET',
    path: '/uploads',
    operationId: 'listUploads',
    tag,
    summary: "List the team's uploads",
    query: pageQuery,
    responses: { 200: { description: 'A page of uploads, newest first', schema: page(uploadSchema) } },
    errors: ['validation_error'],
    handler: (s, req) => s.uploads.list(req.principal, req.query),
  }),
  route({
    method: 'GET',
    path: '/uploads/:id',
    operationId: 'getUpload',
    tag,
    summary: 'Fetch an upload',
    params: idParams,
    responses: { 200: { description: 'The upload', schema: uploadRead } },
    errors: ['validation_error', 'not_found'],
    handler: (s, req) => s.uploads.get(req.principal, req.params.id),
  }),
];
