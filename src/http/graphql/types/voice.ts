import type { Voiceover } from '../../../services/voiceovers.ts';
import type { Voice } from '../../../services/voices.ts';
import { graphqlQuoteName, OPERATION_TABLE } from '../../../domain/operations.ts';
import { builder } from '../builder.ts';
import { quoteField } from './quote.ts';
import { principalOf, servicesFor } from '../request-context.ts';
import { errorTypes } from './errors.ts';
import { idempotencyFor, unwrapOutcome } from './idempotency.ts';
import { pageArgs, pageOf, pageQuery } from './page-type.ts';
import { notFoundAsNull } from './visibility.ts';
import { enumNamesAcross, inputTypeFromZod } from './zod-inputs.ts';

const services = servicesFor('voices', 'voiceovers');
// The voiceovers' mutation, input and quote names are their entries in the operation table.
const tts = OPERATION_TABLE['text-to-speech'];
const sts = OPERATION_TABLE['speech-to-speech'];

export const VoiceRef = builder.objectRef<Voice>('Voice').implement({
  description: 'A catalogue voice; its id is the `voice_id` of voiceovers and talking avatars',
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    gender: t.exposeString('gender'),
    age_group: t.exposeString('age_group'),
    accent: t.exposeString('accent'),
    style: t.exposeString('style'),
    preview_audio_url: t.exposeString('preview_audio_url'),
  }),
});

export const VoiceoverRef = builder.objectRef<Voiceover>('Voiceover').implement({
  description: 'A finished voiceover; its id can be passed as `voiceover_id` to a talking avatar',
  fields: (t) => ({
    id: t.exposeID('id'),
    status: t.exposeString('status', { description: 'Always `completed`' }),
    duration: t.exposeFloat('duration', { description: 'Seconds' }),
    audio_url: t.exposeString('audio_url', { description: 'Signed link to the MP3, valid 1 hour' }),
  }),
});

const VoicePage = pageOf<Voice>('VoicePage', VoiceRef);

// The REST request schemas themselves, so both doors take the same fields.
const voiceInputs = [
  { name: tts.graphql.input, schema: tts.schema },
  { name: sts.graphql.input, schema: sts.schema },
];
const enumNames = enumNamesAcross(voiceInputs);
const [TextToSpeechInput, SpeechToSpeechInput] = voiceInputs.map(({ name, schema }) =>
  inputTypeFromZod(name, schema, { enumName: enumNames(name), objectName: () => 'VoiceSettingsInput' }),
);

/** An explicit GraphQL `null` counts as absent, as in REST; the service's zod rules judge the rest. */
function compact(input: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(input)) {
    if (v === null || v === undefined) continue;
    out[k] = typeof v === 'object' && !Array.isArray(v) ? compact(v as Record<string, unknown>) : v;
  }
  return out;
}

const FILTERS = ['gender', 'age_group', 'accent', 'style'] as const;

builder.queryFields((t) => ({
  voices: t.field({
    type: VoicePage,
    description: 'The voice catalogue; filters take the Voice values, checked like REST GET /voices',
    args: {
      ...pageArgs(t),
      gender: t.arg.string(),
      age_group: t.arg.string(),
      accent: t.arg.string(),
      style: t.arg.string(),
    },
    resolve: (_r, args, ctx) => {
      principalOf(ctx);
      const query: Record<string, string> = pageQuery(args);
      for (const f of FILTERS) if (typeof args[f] === 'string') query[f] = args[f];
      return services(ctx).voices.list(query);
    },
  }),
  voiceover: t.field({
    type: VoiceoverRef,
    nullable: true,
    args: { id: t.arg.id({ required: true }) },
    resolve: (_r, { id }, ctx) => notFoundAsNull(() => services(ctx).voiceovers.get(principalOf(ctx), String(id))),
  }),
}));

quoteField(graphqlQuoteName(tts), 'text-to-speech', TextToSpeechInput, (i) => compact(i as Record<string, unknown>));
quoteField(graphqlQuoteName(sts), 'speech-to-speech', SpeechToSpeechInput, (i) => compact(i as Record<string, unknown>));

builder.mutationFields((t) => ({
  [tts.graphql.mutation]: t.field({
    type: VoiceoverRef,
    errors: errorTypes,
    args: { input: t.arg({ type: TextToSpeechInput as never, required: true }), idempotencyKey: t.arg.string() },
    resolve: async (_r, { input, idempotencyKey }, ctx) =>
      unwrapOutcome<Voiceover>(
        await services(ctx).voiceovers.textToSpeech(principalOf(ctx), compact(input), idempotencyFor(tts.graphql.mutation, idempotencyKey)),
      ),
  }),
  [sts.graphql.mutation]: t.field({
    type: VoiceoverRef,
    errors: errorTypes,
    args: { input: t.arg({ type: SpeechToSpeechInput as never, required: true }), idempotencyKey: t.arg.string() },
    resolve: async (_r, { input, idempotencyKey }, ctx) =>
      unwrapOutcome<Voiceover>(
        await services(ctx).voiceovers.speechToSpeech(principalOf(ctx), compact(input), idempotencyFor(sts.graphql.mutation, idempotencyKey)),
      ),
  }),
}));
