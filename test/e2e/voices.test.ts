import fs from 'node:fs/promises';
import path from 'node:path';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VOICES, type CatalogueVoice } from '../../src/domain/catalogue/voices.ts';
import { probeMedia } from '../../src/adapters/engines/ffmpeg.ts';
import { startTestService, type TestService } from '../support/app.ts';

let svc: TestService;
let key: string;

beforeAll(async () => {
  svc = await startTestService();
  key = (await svc.team()).key;
});
afterAll(async () => {
  await svc?.close();
});

const list = (query = '') => svc.api('GET', `/api/v1/voices${query}`, { key });
const ids = (res: { body: { data: { id: string }[] } }) => res.body.data.map((v) => v.id);

const SPEC = {
  gender: ['male', 'female', 'other'],
  age_group: ['kid', 'young_adult', 'adult', 'senior'],
  accent: ['american', 'british', 'french', 'danish', 'swedish', 'german', 'norwegian', 'spanish', 'neutral'],
  style: ['professional', 'casual', 'energetic', 'whisper', 'speaker'],
} as const;
type Filter = keyof typeof SPEC;
const FILTERS = Object.keys(SPEC) as Filter[];

const matching = (filters: Partial<Record<Filter, string>>) =>
  VOICES.filter((v) => Object.entries(filters).every(([k, value]) => v[k as Filter] === value)).map((v) => v.id).sort();

describe('GET /voices', () => {
  it('answers the first 20 of 30 voices with the pagination object', async () => {
    const res = await list();
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['data', 'pagination']);
    expect(res.body.pagination).toEqual({ total: 30, limit: 20, offset: 0 });
    expect(res.body.data).toHaveLength(20);
  });

  it('gives each voice exactly the fields of the spec, with the catalogue values', async () => {
    const res = await list('?limit=100');
    expect(res.body.data).toHaveLength(30);
    for (const v of res.body.data) {
      expect(Object.keys(v).sort()).toEqual(['accent', 'age_group', 'gender', 'id', 'name', 'preview_audio_url', 'style']);
      const c = VOICES.find((x) => x.id === v.id) as CatalogueVoice;
      expect(c, v.id).toBeDefined();
      expect(v).toEqual({ id: c.id, name: c.name, gender: c.gender, age_group: c.age_group, accent: c.accent, style: c.style, preview_audio_url: expect.any(String) });
      expect(SPEC.gender).toContain(v.gender);
      expect(SPEC.age_group).toContain(v.age_group);
      expect(SPEC.accent).toContain(v.accent);
      expect(SPEC.style).toContain(v.style);
      expect(v.preview_audio_url).toBe(`${svc.baseUrl}/voice-previews/${v.id}.mp3`);
    }
    expect(ids(res).sort()).toEqual(VOICES.map((v) => v.id).sort());
  });

  it('has every accent and every style of the spec', async () => {
    const res = await list('?limit=100');
    for (const field of FILTERS) {
      expect(new Set(res.body.data.map((v: Record<Filter, string>) => v[field])), field).toEqual(new Set(SPEC[field]));
    }
  });

  it('pages through all 30 voices exactly once, in a stable order', async () => {
    const all = ids(await list('?limit=100'));
    for (const size of [1, 7, 20]) {
      const seen: string[] = [];
      for (let offset = 0; offset < 30; offset += size) {
        const res = await list(`?limit=${size}&offset=${offset}`);
        expect(res.body.pagination).toEqual({ total: 30, limit: size, offset });
        expect(res.body.data).toHaveLength(Math.min(size, 30 - offset));
        seen.push(...ids(res));
      }
      expect(seen, `pages of ${size}`).toEqual(all);
    }
    const past = await list('?offset=30');
    expect(past.body).toEqual({ data: [], pagination: { total: 30, limit: 20, offset: 30 } });
  });

  for (const field of FILTERS) {
    it(`filters by each ${field} of the spec, with the right total`, async () => {
      await Promise.all(
        SPEC[field].map(async (value) => {
          const res = await list(`?${field}=${value}&limit=100`);
          expect(res.status).toBe(200);
          const expected = matching({ [field]: value });
          expect(expected.length, `${field}=${value} has voices`).toBeGreaterThan(0);
          expect(res.body.pagination.total, `${field}=${value}`).toBe(expected.length);
          expect(ids(res).sort()).toEqual(expected);
          expect(res.body.data.every((v: Record<Filter, string>) => v[field] === value)).toBe(true);
        }),
      );
    });
  }

  it('combines filters (all must match) and pages within the filtered set', async () => {
    const cases: Partial<Record<Filter, string>>[] = [
      { gender: 'female', accent: 'british' },
      { gender: 'male', age_group: 'adult' },
      { accent: 'neutral', style: 'whisper' },
      { gender: 'male', age_group: 'senior', accent: 'british', style: 'professional' },
      { gender: 'other', style: 'speaker' },
      { age_group: 'kid', accent: 'french' }, // none
      { gender: 'female', age_group: 'kid', accent: 'american', style: 'casual' },
    ];
    for (const filters of cases) {
      const q = new URLSearchParams({ ...filters, limit: '100' } as Record<string, string>);
      const res = await list(`?${q}`);
      expect(res.status).toBe(200);
      const expected = matching(filters);
      expect(res.body.pagination, JSON.stringify(filters)).toEqual({ total: expected.length, limit: 100, offset: 0 });
      expect(ids(res).sort()).toEqual(expected);
    }
    // A filtered list pages like the whole one: total counts the matches, not the catalogue.
    const males = matching({ gender: 'male' });
    const first = await list('?gender=male&limit=5');
    const rest = await list('?gender=male&limit=100&offset=5');
    expect(first.body.pagination).toEqual({ total: males.length, limit: 5, offset: 0 });
    expect(rest.body.pagination).toEqual({ total: males.length, limit: 100, offset: 5 });
    expect([...ids(first), ...ids(rest)].sort()).toEqual(males);
    expect(new Set([...ids(first), ...ids(rest)]).size).toBe(males.length);
  });

  const refusals: [string, Filter | 'limit' | 'offset'][] = [
    ['gender=robot', 'gender'],
    ['gender=Male', 'gender'],
    ['gender=', 'gender'],
    ['gender=male&gender=female', 'gender'],
    ['age_group=teen', 'age_group'],
    ['age_group=young-adult', 'age_group'],
    ['accent=australian', 'accent'],
    ['accent=British', 'accent'],
    ['style=angry', 'style'],
    ['style=whispering', 'style'],
    ['gender=female&accent=klingon', 'accent'],
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['limit=x', 'limit'],
    ['offset=-1', 'offset'],
  ];
  for (const [q, field] of refusals) {
    it(`refuses ?${q} with 400 validation_error naming ${field}`, async () => {
      const res = await list(`?${q}`);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_error');
      expect(res.body.error.message).toMatch(new RegExp(`^${field}: `));
    });
  }

  it('accepts limit=1 and limit=100', async () => {
    expect((await list('?limit=1')).body.data).toHaveLength(1);
    expect((await list('?limit=100')).body.data).toHaveLength(30);
  });

  it('needs an API key: 401 without one or with a bad one', async () => {
    const none = await svc.api('GET', '/api/v1/voices');
    expect(none.status).toBe(401);
    expect(none.body.error.code).toBe('unauthorized');
    const bad = await svc.api('GET', '/api/v1/voices', { key: 'service_sk_not-a-real-key' });
    expect(bad.status).toBe(401);
  });

  it('is the same catalogue for every team', async () => {
    const other = await svc.team({ name: 'Other team' });
    const a = await list('?limit=100');
    const b = await svc.api('GET', '/api/v1/voices?limit=100', { key: other.key });
    expect(b.body).toEqual(a.body);
  });
});

describe('voice previews', () => {
  const previewOf = (v: CatalogueVoice) => `${svc.baseUrl}/voice-previews/${v.id}.mp3`;

  it('plays without an API key: audio/mpeg, an MP3 of more than a second, kept in storage', async () => {
    const res = await list('?limit=1');
    const url: string = res.body.data[0].preview_audio_url;
    const first = await svc.fetchUrl(url); // no Authorization header
    expect(first.status).toBe(200);
    expect(first.headers['content-type']).toBe('audio/mpeg');
    const info = await probeMedia(first.bytes);
    expect(info.audioCodec).toBe('mp3');
    expect(info.durationSeconds).toBeGreaterThan(1);
    expect(info.durationSeconds).toBeLessThan(15);
    const stored = await svc.app.storage.get(`voice-previews/${res.body.data[0].id}.mp3`);
    expect(stored?.bytes.equals(first.bytes)).toBe(true);
    const second = await svc.fetchUrl(url);
    expect(second.status).toBe(200);
    expect(second.bytes.equals(first.bytes)).toBe(true);
  });

  it('serves a byte range, as a Safari <audio> asks for one before it plays', async () => {
    const url = previewOf(VOICES[0]!);
    const whole = await svc.fetchUrl(url);
    expect(whole.headers['accept-ranges']).toBe('bytes');
    const agent = new Agent({ connect: { ca: await fs.readFile(path.join(svc.dataDir, 'tls', 'self-signed-cert.pem'), 'utf8') } });
    const res = await request(url, { headers: { range: 'bytes=0-1' }, dispatcher: agent });
    const part = Buffer.from(await res.body.arrayBuffer());
    expect(res.statusCode).toBe(206);
    expect(res.headers['content-range']).toBe(`bytes 0-1/${whole.bytes.length}`);
    expect(part.equals(whole.bytes.subarray(0, 2))).toBe(true);
    const past = await request(url, { headers: { range: `bytes=${whole.bytes.length}-` }, dispatcher: agent });
    await past.body.dump();
    await agent.close();
    expect(past.statusCode).toBe(416);
    expect(past.headers['content-range']).toBe(`bytes */${whole.bytes.length}`);
  });

  it('serves a stored preview from storage rather than rendering it again', async () => {
    const [a, b] = [VOICES[0]!, VOICES[1]!];
    const rendered = await svc.fetchUrl(previewOf(a));
    expect(rendered.status).toBe(200);
    // Plant voice A's audio where voice B's preview is kept: if B's preview comes back as A's bytes,
    // it was read from storage, not made afresh.
    await svc.app.storage.put(`voice-previews/${b.id}.mp3`, rendered.bytes, 'audio/mpeg');
    const fromStore = await svc.fetchUrl(previewOf(b));
    expect(fromStore.status).toBe(200);
    expect(fromStore.bytes.equals(rendered.bytes)).toBe(true);
  });

  it('renders once for concurrent listeners', async () => {
    const v = VOICES.find((x) => x.name === 'Chloé')!;
    const results = await Promise.all(Array.from({ length: 5 }, () => svc.fetchUrl(previewOf(v))));
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect(results.every((r) => r.bytes.equals(results[0]!.bytes))).toBe(true);
  });

  it('speaks every catalogue voice: each preview is a playable MP3, and voices differ', async () => {
    const pending = VOICES.filter((v) => v.name !== 'Emma' && v.name !== 'James' && v.name !== 'Chloé');
    const bytesById = new Map<string, Buffer>();
    // Six at a time: each one is an eSpeak run.
    for (let i = 0; i < pending.length; i += 6) {
      await Promise.all(
        pending.slice(i, i + 6).map(async (v) => {
          const res = await svc.fetchUrl(previewOf(v));
          expect(res.status, v.name).toBe(200);
          const info = await probeMedia(res.bytes);
          expect(info.audioCodec, v.name).toBe('mp3');
          expect(info.durationSeconds, v.name).toBeGreaterThan(1);
          bytesById.set(v.id, res.bytes);
        }),
      );
    }
    const distinct = new Set([...bytesById.values()].map((b) => b.toString('base64')));
    expect(distinct.size).toBe(bytesById.size);
  }, 120_000);

  it('answers 404 with a JSON error for a voice that does not exist', async () => {
    for (const file of ['00000000-0000-4000-8000-000000000000.mp3', 'nobody.mp3', `${VOICES[0]!.id.slice(0, -1)}z.mp3`]) {
      const res = await svc.fetchUrl(`${svc.baseUrl}/voice-previews/${file}`);
      expect(res.status, file).toBe(404);
      expect(String(res.headers['content-type'])).toMatch(/^application\/json/);
      const body = JSON.parse(res.bytes.toString('utf8'));
      expect(body.error.code).toBe('not_found');
      expect(typeof body.error.message).toBe('string');
    }
  });
});
