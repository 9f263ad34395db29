import { GraphQLEnumType, GraphQLInputObjectType, GraphQLList, GraphQLNonNull, getNamedType, type GraphQLInputType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { inputFieldsOf, type InputField } from '../../src/domain/input-fields.ts';
import { speechToSpeechInput, textToSpeechInput } from '../../src/domain/voiceover-inputs.ts';
import { graphqlSchema } from '../../src/http/graphql/schema.ts';
import { OPERATIONS } from '../../src/services/generations/operations.ts';

// Every GraphQL create input is the REST request schema: same fields, types, required fields, enums.
const INPUTS: Record<string, z.ZodType> = {
  TalkingAvatarInput: OPERATIONS['talking-avatar'].schema,
  AiVideoInput: OPERATIONS['ai-video'].schema,
  SwapAvatarInput: OPERATIONS['swap-avatar'].schema,
  LocalizeInput: OPERATIONS.localize.schema,
  VideoEditInput: OPERATIONS['video-edit'].schema,
  TextToImageInput: OPERATIONS['text-to-image'].schema,
  ProductShotsInput: OPERATIONS['product-shots'].schema,
  ImageEditInput: OPERATIONS['image-edit'].schema,
  TextToSpeechInput: textToSpeechInput,
  SpeechToSpeechInput: speechToSpeechInput,
};

const SCALAR = { string: 'String', id: 'ID', int: 'Int', float: 'Float', boolean: 'Boolean' } as const;

function expectSameField(f: InputField, type: GraphQLInputType, where: string) {
  expect(type instanceof GraphQLNonNull, `${where} required`).toBe(f.required);
  const inner = type instanceof GraphQLNonNull ? type.ofType : type;
  expect(inner instanceof GraphQLList, `${where} list`).toBe(f.list);
  const named = getNamedType(type);
  if (f.values && f.values.every((v) => /^[_A-Za-z][_0-9A-Za-z]*$/.test(v))) {
    expect(named, `${where} enum`).toBeInstanceOf(GraphQLEnumType);
    expect((named as GraphQLEnumType).getValues().map((v) => v.value).sort(), where).toEqual([...f.values].sort());
  } else if (f.type === 'object') {
    expect(named, where).toBeInstanceOf(GraphQLInputObjectType);
    const fields = (named as GraphQLInputObjectType).getFields();
    expect(Object.keys(fields).sort(), where).toEqual(f.fields!.map((x) => x.name).sort());
    for (const sub of f.fields!) expectSameField(sub, fields[sub.name]!.type, `${where}.${sub.name}`);
  } else {
    expect(named.name, where).toBe(SCALAR[f.type as keyof typeof SCALAR]);
  }
}

describe('GraphQL create inputs are the REST request schemas', () => {
  for (const [name, schema] of Object.entries(INPUTS)) {
    it(`${name}: every field of the zod schema, with its type, list-ness, requiredness and enum values`, () => {
      const input = graphqlSchema().getType(name);
      expect(input).toBeInstanceOf(GraphQLInputObjectType);
      const fields = (input as GraphQLInputObjectType).getFields();
      const expected = inputFieldsOf(schema);
      expect(Object.keys(fields).sort()).toEqual(expected.map((f) => f.name).sort());
      for (const f of expected) expectSameField(f, fields[f.name]!.type, `${name}.${f.name}`);
    });
  }

  it('enums whose values are GraphQL names are real enums; the others stay strings of the same words', () => {
    const s = graphqlSchema();
    expect((s.getType('AvatarType') as GraphQLEnumType).getValues().map((v) => v.name).sort()).toEqual(['custom', 'platform', 'product']);
    expect((s.getType('LocalizeMode') as GraphQLEnumType).getValues().map((v) => v.name).sort()).toEqual(['precision', 'speed']);
    expect((s.getType('SwapAvatarMode') as GraphQLEnumType).getValues().map((v) => v.name).sort()).toEqual(['pro', 'standard']);
    expect(getNamedType((s.getType('AiVideoInput') as GraphQLInputObjectType).getFields().model!.type).name).toBe('String');
  });

  it('reads any schema the same way, so a field added to a REST schema appears in the input built from it', () => {
    const extended = z.object({ a: z.string(), b: z.enum(['x', 'y']).nullish(), c: z.array(z.uuid()).optional(), d: z.number().int() });
    expect(inputFieldsOf(extended)).toEqual([
      { name: 'a', type: 'string', list: false, required: true },
      { name: 'b', type: 'string', list: false, required: false, values: ['x', 'y'] },
      { name: 'c', type: 'id', list: true, required: false },
      { name: 'd', type: 'int', list: false, required: true },
    ]);
  });
});
