import fs from 'node:fs/promises';
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { openApiDocument, printedOpenApi } from '../../src/http/rest/openapi.ts';
import { REST_V1_ROUTES } from '../../src/http/rest/v1/index.ts';

describe('the OpenAPI document of /api/v1', () => {
  it('schema/openapi.json is what the code prints (run `npm run schema` after a change)', async () => {
    const committed = await fs.readFile(new URL('../../schema/openapi.json', import.meta.url), 'utf8');
    expect(committed).toBe(printedOpenApi());
  });

  it('clients/typescript/schema.d.ts is what openapi-typescript makes of it (run `npm run schema`)', async () => {
    const { clientTypes } = await import('../../src/cli/client-types.ts');
    const committed = await fs.readFile(new URL('../../clients/typescript/schema.d.ts', import.meta.url), 'utf8');
    expect(committed).toBe(await clientTypes());
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();
    const result = await validator.validate(openApiDocument());
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('has every mounted route once, each with a unique operationId, its errors and its Idempotency-Key', () => {
    const doc = openApiDocument() as any;
    const operations = Object.entries(doc.paths).flatMap(([path, ops]: [string, any]) => Object.entries(ops).map(([method, op]: [string, any]) => ({ path, method, op })));
    expect(operations).toHaveLength(REST_V1_ROUTES.length);
    expect(new Set(operations.map((o) => o.op.operationId)).size).toBe(operations.length);
    const create = doc.paths['/videos/talking-avatar'].post;
    expect(Object.keys(create.responses)).toEqual(['202', '400', '401', '402', '403', '404', '409', '429', '500', '503']);
    expect(create.parameters).toContainEqual({ $ref: '#/components/parameters/IdempotencyKey' });
    expect(create.requestBody.content['application/json'].schema.properties).toHaveProperty('script');
    expect(doc.paths['/generations/{id}'].get.parameters[0]).toMatchObject({ name: 'id', in: 'path', required: true });
    expect(doc.components.schemas.Error.properties.error.properties.code.enum).toContain('insufficient_credits');
  });
});

describe('the e2e suite checks every /api/v1 answer against it', () => {
  it('refuses a status the operation does not list and a body that does not match, and leaves other paths alone', async () => {
    const { checkAnswer } = await import('../support/openapi-check.ts');
    const balance = { credits_used: 3, credits_limit: 10, credits_remaining: 7 };
    expect(() => checkAnswer('GET', '/api/v1/account/credits', 200, balance)).not.toThrow();
    expect(() => checkAnswer('GET', '/api/v1/account/credits', 200, { ...balance, credits_used: '3' })).toThrow(/does not match/);
    expect(() => checkAnswer('GET', '/api/v1/account/credits', 200, { ...balance, extra: 1 })).toThrow(/does not match/);
    expect(() => checkAnswer('GET', '/api/v1/account/credits', 202, balance)).toThrow(/does not list/);
    expect(() => checkAnswer('DELETE', '/api/v1/products/abc', 204, undefined)).not.toThrow();
    expect(() => checkAnswer('GET', '/api/v1/avatars/custom', 200, { data: [{ id: 'x' }] })).toThrow(/does not match/);
    expect(() => checkAnswer('GET', '/api/v1/no-such-route', 404, { error: { code: 'not_found', message: 'x' } })).not.toThrow();
    expect(() => checkAnswer('GET', '/healthz', 200, { status: 'ok' })).not.toThrow();
  });
});

describe('the examples in it', () => {
  it('every request example is a body its route accepts (the route\'s own schema)', () => {
    const withExamples = REST_V1_ROUTES.filter((r) => r.example !== undefined);
    expect(withExamples.length).toBeGreaterThanOrEqual(20);
    for (const r of withExamples) {
      const parsed = r.body!.safeParse(r.example);
      expect(parsed.success, `${r.method} ${r.path}: ${JSON.stringify(parsed.error?.issues)}`).toBe(true);
    }
  });
});
