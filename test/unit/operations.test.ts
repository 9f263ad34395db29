import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { CAMPAIGN_SCHEMAS, CAMPAIGN_TYPES } from '../../src/domain/campaign-rows.ts';
import { GENERATION_OPERATIONS, GENERATION_TYPES, OPERATION_KINDS, isImageOperation } from '../../src/domain/generation-types.ts';
import {
  CAMPAIGN_OPERATIONS,
  GENERATION_OPERATION_TABLE,
  graphqlQuoteName,
  isVoiceOperation,
  OPERATION_TABLE,
  OPERATIONS,
  priceOf,
  restDescription,
  restName,
  restTag,
  VOICE_OPERATIONS,
  type CampaignType,
  type FormOperation,
} from '../../src/domain/operations.ts';
import {
  flatPriceText,
  SWAP_AVATAR_CREDITS_PER_SECOND,
  swapAvatarCredits,
  swapAvatarPriceText,
  TALKING_AVATAR_PRICING,
  talkingAvatarCredits,
  talkingAvatarPriceText,
  VIDEO_EDIT_CREDITS,
} from '../../src/domain/pricing.ts';
import { printedSchema } from '../../src/http/graphql/schema.ts';
import { printedOpenApi } from '../../src/http/rest/openapi.ts';
import { OPERATIONS as RESOLVED_OPERATIONS } from '../../src/services/generations/operations.ts';

const entries = OPERATIONS.map((o) => [o, OPERATION_TABLE[o]] as const);
const generations = GENERATION_OPERATIONS.map((o) => [o, GENERATION_OPERATION_TABLE[o]] as const);

describe('the operation table', () => {
  it('holds every generation operation in the order of their names, then the two voiceovers', () => {
    expect(OPERATIONS).toEqual([...GENERATION_OPERATIONS, ...VOICE_OPERATIONS]);
    expect(OPERATIONS).toEqual([
      'talking-avatar',
      'ai-video',
      'swap-avatar',
      'localize',
      'video-edit',
      'text-to-image',
      'product-shots',
      'image-edit',
      'text-to-speech',
      'speech-to-speech',
    ]);
  });

  it.each(entries)('%s has every field every operation has', (_op, e) => {
    expect(['video', 'image', 'voice']).toContain(e.kind);
    expect(e.schema).toBeInstanceOf(z.ZodType);
    expect(typeof e.price).toBe('function');
    expect(e.path).toMatch(/^\/(videos|images|voiceovers)\/[a-z-]+$/);
    expect(e.operationId).toMatch(/^create[A-Z][A-Za-z]+$/);
    expect(e.graphql.mutation).toMatch(/^create[A-Z][A-Za-z]+$/);
    expect(e.graphql.input).toMatch(/^[A-Z][A-Za-z]+Input$/);
    expect(typeof e.campaign).toBe('boolean');
    if (e.form !== null) {
      expect(e.form.tab).toMatch(/^[a-z-]+$/);
      expect(e.form.label.length).toBeGreaterThan(0);
    }
  });

  it.each(generations)('%s, a generation, also has its type rule, OpenAPI text, example and kind from the names list', (op, e) => {
    expect(e.kind).toBe(OPERATION_KINDS[op]);
    expect(isImageOperation(op)).toBe(e.kind === 'image');
    expect(GENERATION_TYPES).toContain(e.type(0));
    expect(GENERATION_TYPES).toContain(e.type(3));
    expect(e.openapi.summary.length).toBeGreaterThan(0);
    expect(e.openapi.spec).toMatch(/\.$/);
    expect(e.priceText === null || e.priceText.startsWith('Credit cost: ')).toBe(true);
    // The example is a valid body of the create.
    expect(e.schema.safeParse(e.openapi.example).success).toBe(true);
    expect(e.form).not.toBeNull();
    expect(e.campaign).toBe(true);
    expect(e.path.startsWith(e.kind === 'video' ? '/videos/' : '/images/')).toBe(true);
    expect(restTag(e)).toBe(e.kind === 'video' ? 'Videos' : 'Images');
  });

  it('the voiceovers are of kind voice and not generations', () => {
    expect(OPERATIONS.filter(isVoiceOperation)).toEqual([...VOICE_OPERATIONS]);
    for (const op of VOICE_OPERATIONS) {
      expect(OPERATION_TABLE[op].kind).toBe('voice');
      expect(isImageOperation(op)).toBe(false);
      expect((GENERATION_OPERATIONS as readonly string[]).includes(op)).toBe(false);
    }
  });

  it('every path, REST operationId, GraphQL mutation, input, quote name and dashboard tab is unique', () => {
    const unique = (values: string[]) => expect(new Set(values).size).toBe(values.length);
    const all = entries.map(([, e]) => e);
    unique(all.map((e) => e.path));
    unique(all.map((e) => e.operationId));
    unique(all.map((e) => restName(e)));
    unique(all.map((e) => e.graphql.mutation));
    unique(all.map((e) => graphqlQuoteName(e)));
    unique(all.map((e) => e.graphql.input));
    const forms = all.flatMap((e) => (e.form ? [e.form] : []));
    unique(forms.map((f) => f.tab));
    unique(forms.map((f) => f.label));
  });

  it('derives the quote names from the create names', () => {
    expect(restName(OPERATION_TABLE['talking-avatar'])).toBe('TalkingAvatar');
    expect(graphqlQuoteName(OPERATION_TABLE['talking-avatar'])).toBe('quoteTalkingAvatarVideo');
    expect(graphqlQuoteName(OPERATION_TABLE['text-to-speech'])).toBe('quoteTextToSpeech');
  });

  it('the resolvers of the service are the table entries with a resolve step, one per operation', () => {
    expect(Object.keys(RESOLVED_OPERATIONS)).toEqual([...GENERATION_OPERATIONS]);
    for (const op of GENERATION_OPERATIONS) {
      expect(RESOLVED_OPERATIONS[op].operation).toBe(op);
      expect(RESOLVED_OPERATIONS[op].schema).toBe(GENERATION_OPERATION_TABLE[op].schema);
      expect(RESOLVED_OPERATIONS[op].kind).toBe(GENERATION_OPERATION_TABLE[op].kind);
      expect(typeof RESOLVED_OPERATIONS[op].resolve).toBe('function');
    }
  });
});

describe('the type rule', () => {
  it('most operations answer one type whatever they reference', () => {
    const fixed = Object.fromEntries(generations.filter(([op]) => op !== 'text-to-image').map(([op, e]) => [op, [e.type(0), e.type(2)]]));
    expect(fixed).toEqual({
      'talking-avatar': ['talking-avatar', 'talking-avatar'],
      'ai-video': ['ai-video', 'ai-video'],
      'swap-avatar': ['swap-avatar', 'swap-avatar'],
      localize: ['localize', 'localize'],
      'video-edit': ['edit', 'edit'],
      'product-shots': ['product-shots', 'product-shots'],
      'image-edit': ['edit', 'edit'],
    });
  });

  it('a text-to-image with reference images from the brand or products answers image-edit', () => {
    const rule = OPERATION_TABLE['text-to-image'].type;
    expect(rule(0)).toBe('text-to-image');
    expect(rule(1)).toBe('image-edit');
    expect(rule(5)).toBe('image-edit');
  });
});

describe('the price in the OpenAPI text is written from the price constants', () => {
  // The numbers the text states, in order.
  const numbers = (text: string | null) => (text?.match(/\d+/g) ?? []).map(Number);

  it('talking-avatar: per block, minimum and maximum are what the calculator charges', () => {
    const text = OPERATION_TABLE['talking-avatar'].priceText;
    expect(text).toBe('Credit cost: 20 credits per 250 characters of script, minimum 20, maximum 160.');
    const [perBlock, block, min, max] = numbers(text);
    expect(talkingAvatarCredits(block!)).toBe(perBlock);
    expect(talkingAvatarCredits(block! + 1)).toBe(2 * perBlock!);
    expect(talkingAvatarCredits(0)).toBe(min);
    expect(talkingAvatarCredits(100_000)).toBe(max);
    expect(priceOf('talking-avatar', { scriptLength: block! * 3 })).toBe(3 * perBlock!);
  });

  it('swap-avatar: the per-second price of each mode is what the calculator charges', () => {
    const text = OPERATION_TABLE['swap-avatar'].priceText;
    expect(text).toBe('Credit cost: 1 credit per second in `standard` mode, 2 per second in `pro` mode.');
    const [standard, pro] = numbers(text);
    expect(swapAvatarCredits('standard', 7)).toBe(7 * standard!);
    expect(swapAvatarCredits('pro', 7)).toBe(7 * pro!);
    expect(priceOf('swap-avatar', { mode: 'pro', duration: 3 })).toBe(3 * pro!);
  });

  it('video-edit: the flat price is what it charges', () => {
    const text = OPERATION_TABLE['video-edit'].priceText;
    expect(text).toBe('Credit cost: 2 credits.');
    expect(numbers(text)).toEqual([priceOf('video-edit', {})]);
  });

  it('follows the constants it is given (so a price change changes the text)', () => {
    expect(talkingAvatarPriceText({ ...TALKING_AVATAR_PRICING, creditsPerBlock: 1, max: 80 })).toBe(
      'Credit cost: 1 credit per 250 characters of script, minimum 20, maximum 80.',
    );
    expect(swapAvatarPriceText({ ...SWAP_AVATAR_CREDITS_PER_SECOND, standard: 3 })).toBe('Credit cost: 3 credits per second in `standard` mode, 2 per second in `pro` mode.');
    expect(flatPriceText(1)).toBe('Credit cost: 1 credit.');
    expect(flatPriceText(VIDEO_EDIT_CREDITS)).toBe(OPERATION_TABLE['video-edit'].priceText);
  });

  it('the description is the spec text, then the price, then how the create answers', () => {
    expect(restDescription(OPERATION_TABLE['video-edit'])).toBe(
      'Adds captions and effects using a caption template. Provide `video_url` or `generation_id`. Credit cost: 2 credits. Asynchronous: answers at once with `status: processing`; poll `GET /generations/{id}` or wait for the webhook.',
    );
    expect(restDescription(OPERATION_TABLE.localize)).toBe(
      'Translates and dubs a video; lip movements are adjusted. Asynchronous: answers at once with `status: processing`; poll `GET /generations/{id}` or wait for the webhook.',
    );
  });

  it('the image operations price as the image calculator does', () => {
    const params = { model: 'gpt-2' as const, effort: 'high' as const, resolution: '4k' as const, quantity: 2 };
    for (const op of ['text-to-image', 'product-shots', 'image-edit'] as const) expect(priceOf(op, params)).toBe(14);
    expect(OPERATION_TABLE['text-to-speech'].price({})).toBe(1);
    expect(OPERATION_TABLE['speech-to-speech'].price({ seconds: 31 })).toBe(2);
    expect(OPERATION_TABLE['speech-to-speech'].price({ seconds: 121 })).toBeNull();
  });
});

describe('campaigns read the table', () => {
  it('the campaign types are the table operations a row can name: every generation and text-to-speech', () => {
    expect(CAMPAIGN_TYPES).toEqual(CAMPAIGN_OPERATIONS);
    expect(CAMPAIGN_TYPES).toEqual(OPERATIONS.filter((o) => OPERATION_TABLE[o].campaign));
    expect(CAMPAIGN_TYPES).toEqual([...GENERATION_OPERATIONS, 'text-to-speech']);
    expectTypeOf<CampaignType>().toEqualTypeOf<(typeof GENERATION_OPERATIONS)[number] | 'text-to-speech'>();
    expectTypeOf<FormOperation>().toEqualTypeOf<(typeof GENERATION_OPERATIONS)[number] | 'text-to-speech'>();
  });

  it("each campaign type's schema is its operation's", () => {
    for (const t of CAMPAIGN_TYPES) expect(CAMPAIGN_SCHEMAS[t]).toBe(OPERATION_TABLE[t].schema);
    expect(Object.keys(CAMPAIGN_SCHEMAS)).toEqual([...CAMPAIGN_TYPES]);
  });
});

describe('the doors answer with the names of the table', () => {
  const openapi = JSON.parse(printedOpenApi()) as { paths: Record<string, Record<string, { operationId: string; tags: string[]; summary: string; description?: string }>> };
  const sdl = printedSchema();

  it.each(entries)('%s: REST create and quote routes, GraphQL mutation, input and quote query', (_op, e) => {
    const create = openapi.paths[e.path]?.post;
    expect(create?.operationId).toBe(e.operationId);
    expect(openapi.paths[`/quotes${e.path}`]?.post?.operationId).toBe(`quote${restName(e)}`);
    if (e.kind !== 'voice') {
      expect(create?.summary).toBe(e.openapi.summary);
      expect(create?.description).toBe(restDescription(e));
      expect(create?.tags).toEqual([restTag(e)]);
    }
    expect(sdl).toContain(`\n  ${e.graphql.mutation}(idempotencyKey: String, input: ${e.graphql.input}!)`);
    expect(sdl).toContain(`\n  ${graphqlQuoteName(e)}(input: ${e.graphql.input}!)`);
    expect(sdl).toContain(`input ${e.graphql.input} {`);
  });
});
