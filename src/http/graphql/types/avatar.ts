import type { CustomAvatar, PlatformAvatar } from '../../../services/avatars.ts';
import { builder } from '../builder.ts';
import { principalOf, servicesFor } from '../request-context.ts';
import { errorTypes } from './errors.ts';
import { idempotencyFor, unwrapOutcome } from './idempotency.ts';
import { Deleted } from './product.ts';

const services = servicesFor('avatars');

type AnyAvatar = PlatformAvatar | CustomAvatar;

export const AvatarRef = builder.objectRef<AnyAvatar>('Avatar').implement({
  description: 'A platform avatar (visible to all) or one of the team\'s custom avatars',
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    thumbnail_url: t.exposeString('thumbnail_url'),
    gender: t.exposeString('gender', { nullable: true }),
    age_group: t.exposeString('age_group', { nullable: true }),
    avatar_type: t.exposeString('avatar_type'),
    description: t.string({ nullable: true, resolve: (a) => ('description' in a ? a.description : null) }),
    created_at: t.field({ type: 'DateTime', nullable: true, resolve: (a) => ('created_at' in a ? a.created_at : null) }),
  }),
});

const CustomAvatarInput = builder.inputType('CustomAvatarInput', {
  fields: (t) => ({
    name: t.string({ required: true }),
    image_url: t.string({ required: true }),
    description: t.string(),
    gender: t.string(),
    age_group: t.string(),
  }),
});

builder.queryFields((t) => ({
  avatars: t.field({
    type: [AvatarRef],
    description: 'The platform avatars',
    resolve: async (_r, _a, ctx) => {
      principalOf(ctx);
      return (await services(ctx).avatars.listPlatform()).data;
    },
  }),
  customAvatars: t.field({
    type: [AvatarRef],
    resolve: async (_r, _a, ctx) => (await services(ctx).avatars.listCustom(principalOf(ctx))).data,
  }),
}));

builder.mutationFields((t) => ({
  createCustomAvatar: t.field({
    type: AvatarRef,
    errors: errorTypes,
    args: { input: t.arg({ type: CustomAvatarInput, required: true }), idempotencyKey: t.arg.string() },
    resolve: async (_r, { input, idempotencyKey }, ctx) =>
      unwrapOutcome<CustomAvatar>(
        await services(ctx).avatars.createCustom(principalOf(ctx), input, idempotencyFor('createCustomAvatar', idempotencyKey)),
      ),
  }),
  deleteCustomAvatar: t.field({
    type: Deleted,
    errors: errorTypes,
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_r, { id }, ctx) => {
      await services(ctx).avatars.removeCustom(principalOf(ctx), String(id));
      return { id: String(id) };
    },
  }),
}));
