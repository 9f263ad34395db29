import type { z } from 'zod';

/**
 * The fields of a request schema as a client sends them, read off the zod schema itself, so that
 * every door built from it (GraphQL input types, CSV campaign columns) gains a field the moment
 * the schema does. Only the input side counts: transforms and refinements run after it.
 */
export interface InputField {
  name: string;
  type: 'string' | 'id' | 'int' | 'float' | 'boolean' | 'object';
  list: boolean;
  required: boolean;
  /** The allowed values of an enum field. */
  values?: readonly string[];
  /** The fields of an object field. */
  fields?: InputField[];
}

// zod 4's public `def`: the wrappers a schema of ours is built from, each with the schema it wraps.
type Def = {
  type: string;
  in?: Node;
  out?: Node;
  innerType?: Node;
  schema?: Node;
  element?: Node;
  options?: Node[];
  shape?: Record<string, Node>;
  entries?: Record<string, string>;
  format?: string;
  checks?: { _zod: { def: { format?: string } } }[];
};
type Node = { def: Def };

const OPTIONAL_WRAPPERS = new Set(['optional', 'nullable', 'default', 'prefault']);

/** The schema a wrapper wraps, following the input side of a pipe (what the client sends). */
function inner(def: Def): Node | undefined {
  return def.in ?? def.innerType ?? def.schema ?? (def.type === 'union' ? def.options?.[0] : undefined);
}

/** Whether a uuid string is anywhere in the schema (the output side of a pipe included): such a field is an ID. */
function holdsUuid(node: Node | undefined, depth = 0): boolean {
  if (!node || depth > 16) return false;
  const d = node.def;
  if (d.type === 'string' && d.format === 'uuid') return true;
  return [d.in, d.out, d.innerType, d.schema, d.element, ...(d.type === 'union' ? (d.options ?? []) : [])].some((n) => holdsUuid(n, depth + 1));
}

export function objectShape(schema: z.ZodType): Record<string, z.ZodType> {
  for (let cur: Node | undefined = schema as unknown as Node; cur; cur = inner(cur.def)) {
    if (cur.def.type === 'object' && cur.def.shape) return cur.def.shape as unknown as Record<string, z.ZodType>;
  }
  throw new Error('the schema has no object shape');
}

function describe(name: string, schema: z.ZodType): InputField {
  let required = true;
  let list = false;
  const uuid = holdsUuid(schema as unknown as Node);
  for (let cur: Node | undefined = schema as unknown as Node, i = 0; cur && i < 16; i++) {
    const d: Def = cur.def;
    if (OPTIONAL_WRAPPERS.has(d.type)) required = false;
    switch (d.type) {
      case 'array':
        list = true;
        cur = d.element;
        continue;
      case 'string':
        return { name, type: uuid ? 'id' : 'string', list, required };
      case 'enum':
        return { name, type: 'string', list, required, values: Object.values(d.entries ?? {}) };
      case 'number': {
        const int = (d.checks ?? []).some((c: { _zod: { def: { format?: string } } }) => c._zod.def.format === 'safeint' || c._zod.def.format === 'int32');
        return { name, type: int ? 'int' : 'float', list, required };
      }
      case 'boolean':
        return { name, type: 'boolean', list, required };
      case 'object':
        return { name, type: 'object', list, required, fields: inputFieldsOf(cur as unknown as z.ZodType) };
    }
    cur = inner(d);
  }
  return { name, type: uuid ? 'id' : 'string', list, required };
}

/** The fields of an object schema (possibly wrapped in transforms and pipes), in the schema's order. */
export function inputFieldsOf(schema: z.ZodType): InputField[] {
  return Object.entries(objectShape(schema)).map(([name, field]) => describe(name, field));
}
