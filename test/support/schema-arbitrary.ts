import fc from 'fast-check';

/**
 * fast-check values for a JSON Schema of the OpenAPI document: mostly shaped like the schema (its
 * enums, bounds just inside and just outside, required properties sometimes missing), sometimes
 * any JSON at all. URLs only ever name a closed loopback port or are not URLs: a fuzzed request
 * never reaches past this machine.
 */
type Schema = Record<string, any>;

const DEAD_URLS = ['http://127.0.0.1:9/image.png', 'https://127.0.0.1:9/video.mp4', 'http://[::1]:9/a.wav', 'ftp://127.0.0.1/x', 'not a url', '', 'http://', 'javascript:alert(1)'];

const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.oneof(fc.string({ maxLength: 8 }), fc.integer()), { maxLength: 4 }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.constant(null)), { maxKeys: 4 }),
);

export function schemaArbitrary(schema: Schema, doc: Schema, name = '', depth = 0): fc.Arbitrary<unknown> {
  if (schema.$ref) return schemaArbitrary(resolveRef(doc, schema.$ref), doc, name, depth);
  if (depth > 4) return anyJson;
  return fc.oneof({ weight: 5, arbitrary: shaped(schema, doc, name, depth) }, { weight: 1, arbitrary: anyJson });
}

function shaped(schema: Schema, doc: Schema, name: string, depth: number): fc.Arbitrary<unknown> {
  if (/(^|_)(url|urls|link)$/.test(name)) {
    const url = fc.oneof(fc.constantFrom(...DEAD_URLS), fc.string({ maxLength: 30 }));
    return name.endsWith('urls') ? fc.array(url, { maxLength: 3 }) : url;
  }
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) return fc.oneof(...(alternatives as Schema[]).map((s) => schemaArbitrary(s, doc, name, depth + 1)));
  if (schema.enum) return fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...(schema.enum as unknown[])) }, { weight: 1, arbitrary: fc.string({ maxLength: 12 }) });
  if ('const' in schema) return fc.constant(schema.const);
  const types: string[] = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : ['string', 'number', 'object'];
  return fc.oneof(...types.map((t) => ofType(t, schema, doc, name, depth)));
}

function ofType(type: string, s: Schema, doc: Schema, name: string, depth: number): fc.Arbitrary<unknown> {
  switch (type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
    case 'number': {
      const min = s.minimum ?? s.exclusiveMinimum ?? -1e6;
      const max = s.maximum ?? s.exclusiveMaximum ?? 1e6;
      const edges = [min, max, min - 1, max + 1, 0, -1, 1.5, 1e308, -0].filter((n) => Number.isFinite(n));
      return fc.oneof(fc.constantFrom(...edges), fc.integer({ min: Math.max(-1e9, Math.ceil(min) - 2), max: Math.min(1e9, Math.floor(max) + 2) }), fc.double());
    }
    case 'string': {
      if (s.format === 'uuid' || /(^|_)id$/.test(name)) return fc.oneof(fc.uuid(), fc.string({ maxLength: 40 }));
      if (s.format === 'date-time' || /^(since|until)$/.test(name)) return fc.oneof(fc.date({ noInvalidDate: true }).map((d) => d.toISOString()), fc.string({ maxLength: 30 }));
      const maxLength = Math.min((s.maxLength ?? 60) + 2, 300);
      return fc.oneof(
        fc.string({ minLength: 0, maxLength }),
        fc.string({ unit: 'binary', maxLength: 40 }),
        fc.constantFrom('', ' ', '\u0000', 'a'.repeat(maxLength + 1), '<script>', "'; drop table teams; --", '\ud800'),
      );
    }
    case 'array':
      return fc.array(schemaArbitrary(s.items ?? {}, doc, name.replace(/s$/, ''), depth + 1), { maxLength: Math.min((s.maxItems ?? 3) + 1, 6) });
    case 'object': {
      const props = Object.fromEntries(Object.entries((s.properties ?? {}) as Record<string, Schema>).map(([k, v]) => [k, schemaArbitrary(v, doc, k, depth + 1)]));
      // Every property optional: required ones go missing now and then.
      const record = fc.record(props, { requiredKeys: [] });
      return fc.oneof({ weight: 4, arbitrary: record }, { weight: 1, arbitrary: fc.tuple(record, fc.dictionary(fc.string({ maxLength: 10 }), anyJson, { maxKeys: 2 })).map(([a, b]) => ({ ...b, ...a })) });
    }
    default:
      return anyJson;
  }
}

export function resolveRef(doc: Schema, ref: string): Schema {
  return ref
    .replace(/^#\//, '')
    .split('/')
    .reduce((node: Schema, part) => node[part.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
}

/** A query-string value: the schema's kinds of value, written out, or any text. */
export function queryValueArbitrary(schema: Schema, doc: Schema, name: string): fc.Arbitrary<string> {
  return fc.oneof(
    schemaArbitrary(schema, doc, name).map((v) => (typeof v === 'string' ? v : JSON.stringify(v) ?? '')),
    fc.string({ maxLength: 20 }),
    fc.constantFrom('-1', '0', '1e309', '999999999999999999999', 'NaN', '%', '[]', '{}'),
  );
}
