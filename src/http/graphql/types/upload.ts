import type { PresignedUpload, Upload } from '../../../services/uploads.ts';
import { builder } from '../builder.ts';
import { principalOf, servicesFor } from '../request-context.ts';
import { errorTypes } from './errors.ts';
import { idempotencyFor, unwrapOutcome } from './idempotency.ts';
import { pageArgs, pageOf, pageQuery } from './page-type.ts';
import { notFoundAsNull } from './visibility.ts';

const services = servicesFor('uploads');

// The bytes of an upload go to POST /api/v1/uploads (GraphQL is JSON); here the team's uploads are
// read, and with S3 storage a presigned upload is asked for and completed.

const uploadFields = (t: any) => ({
  id: t.exposeID('id'),
  url: t.exposeString('url', { description: '`upload:<id>`: put it in any URL field of a request of this team' }),
  content_type: t.exposeString('content_type', { description: 'What the bytes were sniffed to be' }),
  size: t.exposeFloat('size', { description: 'Bytes' }),
  expires_at: t.field({ type: 'DateTime', description: 'Until when it can be named in a request; unused, it is deleted after this', resolve: (u: Upload) => u.expires_at }),
});

export const UploadRef = builder.objectRef<Upload & { status?: 'pending' | 'ready' }>('Upload').implement({
  fields: (t) => ({
    ...uploadFields(t),
    status: t.string({ description: '`ready`, or `pending` while a presigned upload waits for completeUpload', resolve: (u) => u.status ?? 'ready' }),
  }),
});

const PresignedUploadRef = builder.objectRef<PresignedUpload>('PresignedUpload').implement({
  fields: (t) => ({
    upload: t.field({ type: UploadRef, resolve: (p) => ({ ...p, status: 'pending' as const }) }),
    upload_url: t.exposeString('upload_url', { description: 'PUT the file here within an hour, with exactly the declared Content-Type and size; then call completeUpload' }),
    upload_method: t.exposeString('upload_method'),
  }),
});

const UploadPage = pageOf<Upload>('UploadPage', UploadRef);

builder.queryFields((t) => ({
  uploads: t.field({
    type: UploadPage,
    description: "The team's uploads, newest first",
    args: pageArgs(t),
    resolve: (_r, args, ctx) => services(ctx).uploads.list(principalOf(ctx), pageQuery(args)),
  }),
  upload: t.field({
    type: UploadRef,
    nullable: true,
    args: { id: t.arg.id({ required: true }) },
    resolve: (_r, { id }, ctx) => notFoundAsNull(() => services(ctx).uploads.get(principalOf(ctx), String(id))),
  }),
}));

builder.mutationFields((t) => ({
  createPresignedUpload: t.field({
    type: PresignedUploadRef,
    errors: errorTypes,
    description: 'S3 storage only (validation_error on disk storage): a link to PUT the file to, then completeUpload',
    args: { contentType: t.arg.string({ required: true }), size: t.arg.int({ required: true }), idempotencyKey: t.arg.string() },
    resolve: async (_r, { contentType, size, idempotencyKey }, ctx) =>
      unwrapOutcome<PresignedUpload>(
        await services(ctx).uploads.presign(principalOf(ctx), { content_type: contentType, size }, idempotencyFor('createPresignedUpload', idempotencyKey)),
      ),
  }),
  completeUpload: t.field({
    type: UploadRef,
    errors: errorTypes,
    description: "Checks a presigned upload's bytes (size and type); a mismatch deletes it (validation_error)",
    args: { id: t.arg.id({ required: true }) },
    resolve: (_r, { id }, ctx) => services(ctx).uploads.complete(principalOf(ctx), String(id)),
  }),
}));
