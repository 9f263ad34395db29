import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeServer, listenOnLoopback } from '../support/http-fake.ts';

// The published sources as a maintainer's refresh reads them, served from loopback.
const THEN = { openapi: '3.1.0', components: { schemas: { In: { type: 'object', required: ['prompt'], properties: { prompt: { type: 'string', description: 'what to make' }, seconds: { $ref: '#/components/schemas/Sec' } } }, Sec: { enum: ['4', '8'] } } } };
const NOW = structuredClone(THEN);
NOW.components.schemas.Sec.enum = ['4', '8', '12'];
const PAGE = '<h1>Create</h1><p>start_image_url: the first frame. duration: seconds.</p>';

let server: http.Server;
let base: string;
let dir: string;
let refresh: typeof import('../contracts/refresh.ts').refreshContracts;

const contract = (name: string, c: Record<string, unknown>) => fs.writeFile(path.join(dir, 'acme', `${name}.json`), JSON.stringify(c));

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const body: Record<string, string> = {
      '/acme/api/abc123/openapi.yaml': JSON.stringify(THEN),
      '/acme/api/HEAD/openapi.yaml': JSON.stringify(NOW),
      '/acme/api/abc123/same.json': JSON.stringify(THEN),
      '/acme/api/HEAD/same.json': JSON.stringify({ ...THEN, info: { version: '2' } }),
      '/fal/openapi.json': JSON.stringify(THEN),
      '/docs/page': PAGE,
    };
    const b = body[req.url ?? ''];
    res.writeHead(b ? 200 : 404).end(b ?? 'not found');
  });
  base = await listenOnLoopback(server);
  process.env.CONTRACTS_RAW_BASE = base;
  ({ refreshContracts: refresh } = await import('../contracts/refresh.ts'));
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'adforge-contracts-'));
  await fs.mkdir(path.join(dir, 'acme'));
  const src = (refresh: Record<string, unknown>) => ({ url: 'x', retrieved: '2026-11-26', commit: 'abc123', refresh });
  await contract('a-changed-spec', { provider: 'acme', call: 'POST /v', source: src({ github: 'acme/api', path: 'openapi.yaml', pointer: '/components/schemas/In' }), request: {} });
  await contract('b-same-part', { provider: 'acme', call: 'POST /v', source: src({ github: 'acme/api', path: 'same.json', pointer: '/components/schemas/In' }), request: {} });
  const stored = { type: 'object', additionalProperties: false, required: ['prompt'], properties: { prompt: { type: 'string', 'x-source': 'p' }, seconds: { enum: ['4', '8'] } } };
  await contract('c-endpoint-schema', { provider: 'acme', call: 'POST /v', source: src({ url: `${base}/fal/openapi.json`, pointer: '/components/schemas/In', compare: 'body' }), request: { body: stored } });
  const answer = { type: 'object', required: ['prompt'], properties: { prompt: { type: 'string' }, seconds: { enum: ['4'] } } };
  await contract('f-endpoint-answer', { provider: 'acme', call: 'GET /v', source: src({ url: `${base}/fal/openapi.json`, pointer: '/components/schemas/In', compare: 'response' }), request: {}, responses: { '200': answer } });
  const page = { type: 'object', properties: { start_image_url: { type: 'string' }, image_url: { type: 'string' }, duration: { type: 'string' } } };
  await contract('d-page', { provider: 'acme', call: 'POST /v', source: src({ url: `${base}/docs/page`, page: true }), request: { body: page } });
  await contract('e-gone', { provider: 'acme', call: 'POST /v', source: src({ url: `${base}/docs/moved`, page: true }), request: {} });
});
afterAll(async () => {
  await closeServer(server);
  await fs.rm(dir, { recursive: true, force: true });
});

describe('contracts:refresh', () => {
  it('diffs a repository source at its commit against HEAD, cut at the pointer with its $refs inlined', async () => {
    const f = await refresh({ dir });
    const by = Object.fromEntries(f.map((x) => [x.contract, x]));
    expect(by['acme/a-changed-spec']!.state).toBe('changed');
    expect(by['acme/a-changed-spec']!.text).toMatch(/\+\s+"12"/);
    // A change elsewhere in the document is not this call's.
    expect(by['acme/b-same-part']).toMatchObject({ state: 'unchanged' });
  });

  it("compares an endpoint's published schema with the stored body, annotations aside; a page by the field names it still shows", async () => {
    const by = Object.fromEntries((await refresh({ dir })).map((x) => [x.contract, x]));
    expect(by['acme/c-endpoint-schema']).toMatchObject({ state: 'unchanged' });
    expect(by['acme/d-page']).toMatchObject({ state: 'changed' });
    expect(by['acme/d-page']!.text).toBe(`${base}/docs/page no longer names: image_url; read the page again`);
    // An answer (a result's output) against the published schema of the documented status.
    expect(by['acme/f-endpoint-answer']).toMatchObject({ state: 'changed' });
    expect(by['acme/f-endpoint-answer']!.text).toMatch(/\+\s+"8"/);
    expect(by['acme/e-gone']).toMatchObject({ state: 'unreadable', text: `${base}/docs/moved answered 404` });
  });
});
