import { z } from 'zod';
import { errorStatus, type ErrorCode } from '../../domain/errors.ts';
import { REST_V1_ROUTES } from './v1/index.ts';
import { errorSchema } from './v1/responses.ts';
import type { RouteDoc } from './v1/route.ts';

// The OpenAPI 3.1 document of /api/v1, built from the route definitions the server mounts and the
// zod schemas its services parse with (request bodies and queries) and answer in (responses), so
// the document cannot say what the code does not do. `npm run schema` prints it to
// schema/openapi.json; GET /api/v1/openapi.json serves it.

type JsonSchema = Record<string, unknown>;

/** Errors every route with a key can answer: no key or a bad one, a tier without access, its token bucket empty, a fault of ours, the database away. */
const EVERY_ROUTE: ErrorCode[] = ['unauthorized', 'forbidden', 'rate_limited', 'internal_error', 'service_unavailable'];

const ERROR_WORDS: Record<ErrorCode, string> = {
  validation_error: 'Bad input: the message names the field',
  unauthorized: 'Missing, malformed, unknown or revoked API key',
  insufficient_credits: 'Not enough credits: the message states needed and available',
  forbidden: 'The team’s tier has no API access',
  not_found: 'No such resource of the team (or a referenced id is not found)',
  conflict: 'In use, or a request with this Idempotency-Key is still in progress',
  rate_limited: 'Too many requests: retry after `Retry-After` seconds',
  internal_error: 'A fault of the service; the message carries the request id it is logged under',
  external_service_error: 'A provider failed',
  service_unavailable: 'The database is unreachable for now: retry after `Retry-After` seconds',
};

/** Collects every schema's named parts (`.meta({ id })`) as components, referenced by name. */
class Components {
  readonly schemas: Record<string, JsonSchema> = {};

  of(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
    const json = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any', reused: 'inline' }) as JsonSchema;
    const { $defs, ...rest } = json as { $defs?: Record<string, JsonSchema> } & JsonSchema;
    for (const [name, def] of Object.entries($defs ?? {})) this.schemas[name] = this.relink(def);
    const own = this.relink(rest);
    delete own.$schema;
    // A named schema at the top comes back as itself with its id: refer to it instead.
    const id = (own as { id?: string }).id;
    if (typeof id === 'string') {
      delete own.id;
      this.schemas[id] = own;
      return { $ref: `#/components/schemas/${id}` };
    }
    return own;
  }

  private relink<T>(v: T): T {
    return withIntegerFormats(JSON.parse(JSON.stringify(v).replaceAll('"#/$defs/', '"#/components/schemas/')) as T);
  }
}

const INT32 = 2 ** 31;

/** zod states an integer's bounds but not its width: int32 where the bounds fit in 32 bits, else int64. */
function withIntegerFormats<T>(v: T): T {
  if (Array.isArray(v)) v.forEach(withIntegerFormats);
  else if (v && typeof v === 'object') {
    const o = v as JsonSchema;
    if (o.type === 'integer' && o.format === undefined) {
      const fits = (n: unknown) => typeof n === 'number' && n >= -INT32 && n < INT32;
      o.format = fits(o.minimum ?? o.exclusiveMinimum) && fits(o.maximum ?? o.exclusiveMaximum) ? 'int32' : 'int64';
    }
    Object.values(o).forEach(withIntegerFormats);
  }
  return v;
}

const openApiPath = (path: string) => path.replace(/:([A-Za-z_]+)/g, '{$1}');

function parameters(r: RouteDoc, c: Components) {
  const out: JsonSchema[] = [];
  const fromObject = (schema: z.ZodType, where: 'path' | 'query') => {
    const json = c.of(schema, 'input') as { properties?: Record<string, JsonSchema>; required?: string[] };
    for (const [name, s] of Object.entries(json.properties ?? {})) {
      const { description, ...rest } = s as { description?: string } & JsonSchema;
      out.push({ name, in: where, required: where === 'path' || (json.required ?? []).includes(name), ...(description ? { description } : {}), schema: rest });
    }
  };
  if (r.params) fromObject(r.params, 'path');
  if (r.query) fromObject(r.query, 'query');
  if (r.idempotent) out.push({ $ref: '#/components/parameters/IdempotencyKey' });
  return out;
}

/** The key's token bucket after this request (src/domain/rate-limit.ts), on every answer given after the draw. */
const RATE_LIMIT_HEADERS = {
  'RateLimit-Limit': { $ref: '#/components/headers/RateLimitLimit' },
  'RateLimit-Remaining': { $ref: '#/components/headers/RateLimitRemaining' },
  'RateLimit-Reset': { $ref: '#/components/headers/RateLimitReset' },
  'RateLimit-Policy': { $ref: '#/components/headers/RateLimitPolicy' },
};

/**
 * The headers an answer carries: RateLimit-* on all but 401 and 403 (answered before the key's
 * bucket is drawn) and 5xx, Retry-After on 429 and 503, Idempotent-Replayed where a key replays.
 */
function headersOf(status: number, idempotent: boolean | undefined): JsonSchema | undefined {
  const headers: JsonSchema = {
    ...(status < 500 && status !== 401 && status !== 403 ? RATE_LIMIT_HEADERS : {}),
    ...(status === 429 || status === 503 ? { 'Retry-After': { $ref: '#/components/headers/RetryAfter' } } : {}),
    ...(idempotent && status < 500 && status !== 401 && status !== 403 && status !== 429 ? { 'Idempotent-Replayed': { $ref: '#/components/headers/IdempotentReplayed' } } : {}),
  };
  return Object.keys(headers).length > 0 ? headers : undefined;
}

function operation(r: RouteDoc, c: Components) {
  const responses: Record<string, JsonSchema> = {};
  for (const [status, res] of Object.entries(r.responses)) {
    const headers = headersOf(Number(status), r.idempotent);
    responses[status] = {
      description: res.description,
      ...(headers ? { headers } : {}),
      ...(res.schema ? { content: { 'application/json': { schema: c.of(res.schema, 'output') } } } : {}),
    };
  }
  const errors = new Set<ErrorCode>([...EVERY_ROUTE, ...r.errors]);
  for (const code of [...errors].sort((a, b) => errorStatus[a] - errorStatus[b])) {
    const headers = headersOf(errorStatus[code], r.idempotent);
    responses[String(errorStatus[code])] = {
      description: `\`${code}\`: ${ERROR_WORDS[code]}`,
      ...(headers ? { headers } : {}),
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    };
  }
  return {
    operationId: r.operationId,
    tags: [r.tag],
    summary: r.summary,
    ...(r.description ? { description: r.description } : {}),
    parameters: parameters(r, c),
    ...(r.body || r.otherBodies
      ? {
          requestBody: {
            required: true,
            content: {
              ...r.otherBodies,
              ...(r.body ? { 'application/json': { schema: c.of(r.body, 'input'), ...(r.example ? { example: r.example } : {}) } } : {}),
            },
          },
        }
      : {}),
    responses,
  };
}

export function openApiDocument(routes: readonly RouteDoc[] = REST_V1_ROUTES) {
  const c = new Components();
  c.of(errorSchema, 'output');
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const p = (paths[openApiPath(r.path)] ??= {});
    p[r.method.toLowerCase()] = operation(r, c);
  }
  return {
    openapi: '3.1.1',
    info: {
      title: 'adforge API',
      version: '1',
      description:
        'Advertising media made with AI: videos, images, voiceovers, a competitor ad library. Every request carries `Authorization: Bearer service_sk_...`; every error is `{error:{code,message}}`.',
    },
    servers: [{ url: '/api/v1', 'x-internal': false }],
    security: [{ apiKey: [] }],
    tags: [...new Set(routes.map((r) => r.tag))].map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'An API key: service_sk_ followed by 38 characters' } },
      parameters: {
        IdempotencyKey: {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description: 'Repeats with the same key and body within 24 hours answer the first outcome again (202, 402, 404, 409) and charge nothing.',
          schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7e]+$' },
        },
      },
      headers: {
        IdempotentReplayed: { description: '`true` on an answer replayed under an Idempotency-Key', schema: { type: 'string', enum: ['true'] } },
        RateLimitLimit: { description: 'The key\'s burst: the most tokens its bucket holds', schema: { type: 'integer', format: 'int32', minimum: 0, maximum: 9_999_999 } },
        RateLimitRemaining: { description: 'Tokens left in the key\'s bucket after this request (a read takes 1, a write 5)', schema: { type: 'integer', format: 'int32', minimum: 0, maximum: 9_999_999 } },
        RateLimitReset: { description: 'Seconds until the bucket is full again', schema: { type: 'integer', format: 'int32', minimum: 0, maximum: 600_000_000 } },
        RateLimitPolicy: { description: '`<burst>;w=<seconds to refill>`', schema: { type: 'string', maxLength: 64, pattern: '^\\d+;w=\\d+$' } },
        RetryAfter: { description: 'Seconds to wait before retrying', schema: { type: 'integer', format: 'int32', minimum: 0, maximum: 600_000_000 } },
      },
      schemas: Object.fromEntries(Object.entries(c.schemas).sort(([a], [b]) => a.localeCompare(b))),
    },
  };
}

/** The document as `npm run schema` writes it and the server serves it. */
export const printedOpenApi = () => `${JSON.stringify(openApiDocument(), null, 2)}\n`;
