import type { z } from 'zod';
import { inputFieldsOf, type InputField } from '../../../domain/input-fields.ts';
import { builder } from '../builder.ts';

// GraphQL enum values must be names: a zod enum whose values all are (`platform`, `speed`) becomes
// a GraphQL enum of the same words; one with values like `sora-2` or `1k` stays a String checked by
// the schema, so both doors take the very same words.
const GRAPHQL_NAME = /^[_A-Za-z][_0-9A-Za-z]*$/;

const pascal = (s: string) => s.replace(/(^|[_-])([a-z0-9])/g, (_m, _sep, c: string) => c.toUpperCase());

const enums = new Map<string, { values: string; ref: unknown }>();
const objects = new Map<string, unknown>();

function enumRef(name: string, values: readonly string[]) {
  const key = values.join('|');
  const known = enums.get(name);
  if (known) {
    if (known.values !== key) throw new Error(`GraphQL enum ${name} is asked for with two sets of values (${known.values} and ${key})`);
    return known.ref;
  }
  const ref = builder.enumType(name, { values: Object.fromEntries(values.map((v) => [v, { value: v }])) });
  enums.set(name, { values: key, ref });
  return ref;
}

export interface ZodInputNames {
  /** The GraphQL name of an enum field's type. */
  enumName: (field: InputField) => string;
  /** The GraphQL name of an object field's input type. */
  objectName?: (field: InputField) => string;
}

function fieldType(field: InputField, names: ZodInputNames): unknown {
  if (field.values && field.values.every((v) => GRAPHQL_NAME.test(v))) return enumRef(names.enumName(field), field.values);
  if (field.type === 'object') return objectInput(names.objectName?.(field) ?? `${pascal(field.name)}Input`, field.fields ?? [], names);
  return { string: 'String', id: 'ID', int: 'Int', float: 'Float', boolean: 'Boolean' }[field.type as Exclude<InputField['type'], 'object'>];
}

function objectInput(name: string, fields: InputField[], names: ZodInputNames) {
  const known = objects.get(name);
  if (known) return known;
  const ref = builder.inputType(name, {
    fields: (t) =>
      Object.fromEntries(
        fields.map((f) => {
          const type = fieldType(f, names);
          return [f.name, t.field({ type: (f.list ? [type] : type) as never, required: f.required })];
        }),
      ),
  });
  objects.set(name, ref);
  return ref;
}

/** A GraphQL input type with the fields of a zod request schema: the same names, types, required fields and enums. */
export function inputTypeFromZod(name: string, schema: z.ZodType, names: ZodInputNames) {
  return objectInput(name, inputFieldsOf(schema), names);
}

/**
 * Enum names for a set of inputs: the field's name (`avatar_type` -> AvatarType) where every input
 * gives that field the same values, prefixed with the input's name where they differ (SwapAvatarMode, LocalizeMode).
 */
export function enumNamesAcross(inputs: ReadonlyArray<{ name: string; schema: z.ZodType }>): (input: string) => ZodInputNames['enumName'] {
  const valuesByField = new Map<string, Set<string>>();
  for (const { schema } of inputs) {
    for (const f of inputFieldsOf(schema)) {
      if (!f.values) continue;
      if (!valuesByField.has(f.name)) valuesByField.set(f.name, new Set());
      valuesByField.get(f.name)!.add(f.values.join('|'));
    }
  }
  return (input) => (field) =>
    (valuesByField.get(field.name)?.size ?? 1) > 1 ? `${input.replace(/Input$/, '')}${pascal(field.name)}` : pascal(field.name);
}
