import { isImageOperation } from '../../../domain/generation-types.ts';
import type { ProductRow } from '../../../db/types.ts';
import { deliveryView, type WebhookDelivery as WebhookDeliveryView } from '../../../services/webhooks.ts';
import { avatarView } from '../../../services/avatars.ts';
import { brandView } from '../../../services/brands.ts';
import { LIVE_PROGRESS, type GenerationDetail, type UpstreamAttempt } from '../../../services/generations/views.ts';
import { productView } from '../../../services/products.ts';
import { voiceoverView } from '../../../services/voiceovers.ts';
import { builder } from '../builder.ts';
import { ownerOf, principalOf, servicesFor, type GraphQLContext } from '../request-context.ts';
import { AvatarRef } from './avatar.ts';
import { BrandRef } from './brand.ts';
import { pageArgs, pageOf, pageQuery } from './page-type.ts';
import { ProductRef } from './product.ts';
import { notFoundAsNull } from './visibility.ts';
import { VoiceoverRef } from './voice.ts';

const services = servicesFor('storage', 'generationReader');

type Details = Record<string, unknown> & { __type: string; __kind: string };

const str = (t: any, key: string) => t.string({ nullable: true, resolve: (d: Details) => (d[key] === undefined || d[key] === null ? null : String(d[key])) });
const num = (t: any, key: string) => t.float({ nullable: true, resolve: (d: Details) => (typeof d[key] === 'number' ? d[key] : null) });
const int = (t: any, key: string) => t.int({ nullable: true, resolve: (d: Details) => (typeof d[key] === 'number' ? d[key] : null) });
const all = (t: any) => t.field({ type: 'JSON', description: 'Every stored detail, as REST shows them', resolve: (d: Details) => strip(d) });
const strip = ({ __type: _t, __kind: _k, ...rest }: Details) => rest;

const TalkingAvatarDetails = builder.objectRef<Details>('TalkingAvatarDetails').implement({
  fields: (t) => ({
    avatar_id: str(t, 'avatar_id'),
    avatar_type: str(t, 'avatar_type'),
    script: str(t, 'script'),
    voice_id: str(t, 'voice_id'),
    voiceover_id: str(t, 'voiceover_id'),
    voiceover: t.field({
      type: VoiceoverRef,
      nullable: true,
      description: 'The voiceover the avatar speaks, when made with voiceover_id; null when absent or gone',
      resolve: async (d: Details, _a: unknown, ctx: GraphQLContext) => {
        const id = d.voiceover_id;
        if (typeof id !== 'string') return null;
        const row = await ctx.loaders.voiceover.load(id);
        return row && voiceoverView(services(ctx).storage, row);
      },
    }),
    template: str(t, 'template'),
    duration: num(t, 'duration'),
    all: all(t),
  }),
});
const AiVideoDetails = builder.objectRef<Details>('AiVideoDetails').implement({
  fields: (t) => ({ prompt: str(t, 'prompt'), model: str(t, 'model'), duration: num(t, 'duration'), aspect_ratio: str(t, 'aspect_ratio'), resolution: str(t, 'resolution'), all: all(t) }),
});
const ImageDetails = builder.objectRef<Details>('ImageDetails').implement({
  fields: (t) => ({ prompt: str(t, 'prompt'), model: str(t, 'model'), aspect_ratio: str(t, 'aspect_ratio'), resolution: str(t, 'resolution'), quantity: int(t, 'quantity'), all: all(t) }),
});
const SwapAvatarDetails = builder.objectRef<Details>('SwapAvatarDetails').implement({
  fields: (t) => ({ video_url: str(t, 'video_url'), mode: str(t, 'mode'), duration: num(t, 'duration'), width: int(t, 'width'), height: int(t, 'height'), avatar_id: str(t, 'avatar_id'), image_url: str(t, 'image_url'), all: all(t) }),
});
const LocalizeDetails = builder.objectRef<Details>('LocalizeDetails').implement({
  fields: (t) => ({ video_url: str(t, 'video_url'), mode: str(t, 'mode'), output_language: str(t, 'output_language'), duration: num(t, 'duration'), all: all(t) }),
});
const VideoEditDetails = builder.objectRef<Details>('VideoEditDetails').implement({
  fields: (t) => ({ template_id: str(t, 'template_id'), video_url: str(t, 'video_url'), generation_id: str(t, 'generation_id'), language: str(t, 'language'), all: all(t) }),
});

const GenerationDetailsUnion = builder.unionType('GenerationDetails', {
  types: [TalkingAvatarDetails, AiVideoDetails, ImageDetails, SwapAvatarDetails, LocalizeDetails, VideoEditDetails],
  resolveType: (d) => {
    if (d.__kind === 'image') return ImageDetails;
    switch (d.__type) {
      case 'talking-avatar':
        return TalkingAvatarDetails;
      case 'ai-video':
        return AiVideoDetails;
      case 'swap-avatar':
        return SwapAvatarDetails;
      case 'localize':
        return LocalizeDetails;
      default:
        return VideoEditDetails;
    }
  },
});

export const GenerationStatusEnum = builder.enumType('GenerationStatus', { values: ['processing', 'completed', 'failed'] as const });
export const GenerationTypeFilter = builder.enumType('GenerationTypeFilter', {
  values: { talking_avatar: { value: 'talking-avatar' }, ai_video: { value: 'ai-video' }, image: { value: 'image' } } as const,
});

const kindOf = (g: GenerationDetail) => (isImageOperation(g.type) || (g.type === 'edit' && 'prompt' in g.details) ? 'image' : 'video');

export const WebhookDeliveryRef = builder.objectRef<WebhookDeliveryView>('WebhookDelivery').implement({
  description: 'One attempt to notify the webhook URL of a key: what was sent, where, and what the receiver said',
  fields: (t) => ({
    id: t.exposeID('id'),
    event: t.exposeString('event'),
    event_id: t.exposeString('event_id', { nullable: true }),
    generation_id: t.exposeID('generation_id', { nullable: true }),
    url: t.exposeString('url'),
    ok: t.exposeBoolean('ok'),
    status_code: t.exposeInt('status_code', { nullable: true }),
    latency_ms: t.exposeInt('latency_ms'),
    error: t.exposeString('error', { nullable: true }),
    attempted_at: t.field({ type: 'DateTime', resolve: (d) => d.attempted_at }),
    body: t.exposeString('body', { nullable: true, description: 'The exact JSON text sent' }),
    redelivery_of: t.exposeID('redelivery_of', { nullable: true }),
  }),
});

const UpstreamEvent = builder.objectRef<UpstreamAttempt['events'][number]>('UpstreamEvent').implement({
  fields: (t) => ({
    state: t.exposeString('state'),
    detail: t.exposeString('detail', { nullable: true }),
    at: t.field({ type: 'DateTime', resolve: (e) => e.at }),
  }),
});

const UpstreamAttemptRef = builder.objectRef<UpstreamAttempt>('UpstreamAttempt').implement({
  description: 'One attempt at an upstream provider: its job id, state changes, and cost where the provider reports one',
  fields: (t) => ({
    attempt_id: t.exposeID('attempt_id'),
    provider: t.exposeString('provider'),
    provider_job_id: t.exposeString('provider_job_id', { nullable: true }),
    state: t.exposeString('state'),
    cost: t.exposeFloat('cost', { nullable: true }),
    error: t.exposeString('error', { nullable: true }),
    polls: t.exposeInt('polls'),
    result_refetches: t.exposeInt('result_refetches'),
    created_at: t.field({ type: 'DateTime', resolve: (a) => a.created_at }),
    updated_at: t.field({ type: 'DateTime', resolve: (a) => a.updated_at }),
    events: t.field({ type: [UpstreamEvent], resolve: (a) => a.events }),
  }),
});

export const GenerationRef = builder.objectRef<GenerationDetail>('Generation').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    type: t.exposeString('type'),
    status: t.field({ type: GenerationStatusEnum, resolve: (g) => g.status as 'processing' }),
    created_at: t.field({ type: 'DateTime', resolve: (g) => g.created_at }),
    completed_at: t.field({ type: 'DateTime', nullable: true, resolve: (g) => g.completed_at }),
    result_url: t.exposeString('result_url', { nullable: true, description: 'The first output, signed on this read, valid 1 hour' }),
    result_urls: t.exposeStringList('result_urls', { description: 'Every output, signed on this read, valid 1 hour' }),
    error: t.exposeString('error', { nullable: true }),
    files_expired_at: t.field({
      type: 'DateTime',
      nullable: true,
      description: "When the team's retention period removed the stored files: result_url is then null and result_urls empty, while status, error and details stay; null while the files are kept",
      resolve: (g) => g.files_expired_at,
    }),
    credits: t.exposeInt('credits'),
    progress: t.float({
      nullable: true,
      description:
        'How far the generation is, from 0 to 1, as its engine reports it: null while the engine has not said (a stage alone); 1 once completed; a failed generation keeps the value it reached. Updated a few times a second at most (generationUpdated carries each change)',
      resolve: (g) => g[LIVE_PROGRESS]?.progress ?? null,
    }),
    stage: t.string({
      nullable: true,
      description:
        'What the generation is doing, in words ("queued at position 2", "running step 12 of 30", "copying the result"); null before its engine said anything and once completed; a failed generation keeps the stage it failed in',
      resolve: (g) => g[LIVE_PROGRESS]?.stage ?? null,
    }),
    details: t.field({ type: GenerationDetailsUnion, resolve: (g) => ({ ...g.details, __type: g.type, __kind: kindOf(g) }) }),
    avatar: t.field({
      type: AvatarRef,
      nullable: true,
      resolve: async (g, _a, ctx) => {
        const id = g.details.avatar_id;
        if (typeof id !== 'string' || g.details.avatar_type === 'product') return null;
        const row = await ctx.loaders.avatar.load(id);
        return row ? avatarView(services(ctx).storage, row) : null;
      },
    }),
    products: t.field({
      type: [ProductRef],
      resolve: async (g, _a, ctx) => {
        const ids = await ctx.loaders.productIdsOfGeneration.load(g.id);
        const rows = await ctx.loaders.product.loadMany(ids);
        return Promise.all(rows.filter((r) => r && !(r instanceof Error)).map((r) => productView(services(ctx).storage, r as ProductRow)));
      },
    }),
    webhook_deliveries: t.field({
      type: [WebhookDeliveryRef],
      description: "Attempts to report the generation to a key's webhook (URL, answer, error): an API key sees its own webhook's; a dashboard session only an owner's, as only owners list the keys",
      resolve: async (g, _a, ctx) => {
        const p = principalOf(ctx);
        // Check who asks before any row is read: a member's question is refused whole.
        if (!p.keyId) ownerOf(ctx);
        const rows = await ctx.loaders.webhookDeliveriesOfGeneration.load(g.id);
        return (p.keyId ? rows.filter((r) => r.api_key_id === p.keyId) : rows).map(deliveryView);
      },
    }),
    upstream_attempts: t.field({
      type: [UpstreamAttemptRef],
      description: 'Where the generation ran upstream (empty on the local engine), oldest attempt first',
      resolve: (g, _a, ctx) => ctx.loaders.upstreamAttemptsOfGeneration.load(g.id),
    }),
    brand: t.field({
      type: BrandRef,
      nullable: true,
      resolve: async (g, _a, ctx) => {
        const id = g.details.brand_id;
        if (typeof id !== 'string') return null;
        const row = await ctx.loaders.brand.load(id);
        return row ? brandView(row) : null;
      },
    }),
  }),
});

const GenerationPage = pageOf<GenerationDetail>('GenerationPage', GenerationRef);

builder.queryFields((t) => ({
  generations: t.field({
    type: GenerationPage,
    args: { ...pageArgs(t), type: t.arg({ type: GenerationTypeFilter }), status: t.arg({ type: GenerationStatusEnum }) },
    resolve: (_r, args, ctx) =>
      services(ctx).generationReader.listDetailed(principalOf(ctx), {
        ...pageQuery(args),
        ...(args.type ? { type: args.type } : {}),
        ...(args.status ? { status: args.status } : {}),
      }),
  }),
  generation: t.field({
    type: GenerationRef,
    nullable: true,
    args: { id: t.arg.id({ required: true }) },
    resolve: (_r, { id }, ctx) => notFoundAsNull(() => services(ctx).generationReader.get(principalOf(ctx), String(id))),
  }),
}));
