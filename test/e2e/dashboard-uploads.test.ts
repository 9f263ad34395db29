import fs from 'node:fs/promises';
import path from 'node:path';
import { sql } from 'kysely';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/app.ts';
import { signedInUser, type DashboardSession } from '../support/dashboard-session.ts';
import { paddedPng, pngBytes } from '../support/image-host.ts';

// The dashboard's upload: the session cookie with its CSRF token, from our own origin only; the
// same upload service as POST /api/v1/uploads behind it.

let svc: TestService;
let agent: Agent;
let team: Awaited<ReturnType<TestService['team']>>;
let owner: DashboardSession;
let member: DashboardSession;
let png: Buffer;

beforeAll(async () => {
  svc = await startTestService();
  agent = new Agent({ connect: { ca: await fs.readFile(path.join(svc.dataDir, 'tls', 'self-signed-cert.pem'), 'utf8') } });
  team = await svc.team({ credits: 100 });
  owner = await signedInUser(svc, team.teamId, 'owner');
  member = await signedInUser(svc, team.teamId, 'member');
  png = await pngBytes(64, 48, '#3366cc');
});
afterAll(async () => {
  await agent?.close();
  await svc?.close();
});

async function post(body: Buffer | string, headers: Record<string, string>) {
  const res = await request(`${svc.baseUrl}/auth/uploads`, { method: 'POST', dispatcher: agent, headers, body });
  const text = await res.body.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.statusCode, body: json };
}

const uploadCount = async () => Number((await sql<{ n: string }>`select count(*) as n from uploads where team_id = ${team.teamId}`.execute(svc.app.db)).rows[0]!.n);
const asUser = (s: DashboardSession, extra: Record<string, string> = {}) => ({ cookie: s.cookie, 'x-csrf-token': s.csrf, origin: svc.baseUrl, 'sec-fetch-site': 'same-origin', ...extra });

describe('POST /auth/uploads', () => {
  it('an owner and a member upload with their session: the same answer as the API, usable by the team', async () => {
    for (const who of [owner, member]) {
      const res = await post(png, asUser(who, { 'content-type': 'image/png' }));
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ url: `upload:${res.body.id}`, content_type: 'image/png', size: png.length });
      const read = await svc.api('GET', `/api/v1/uploads/${res.body.id}`, { key: team.key });
      expect(read.status).toBe(200);
    }
    // A multipart form, as a browser's FormData sends it.
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(png)], { type: 'image/png' }), 'shot.png');
    const encoded = new Response(form);
    const res = await post(Buffer.from(await encoded.arrayBuffer()), asUser(owner, { 'content-type': encoded.headers.get('content-type')! }));
    expect(res.status).toBe(201);
    expect(res.body.content_type).toBe('image/png');
  });

  it('refuses a wrong kind in words and stores nothing', async () => {
    const before = await uploadCount();
    const res = await post('just some text, named .png', asUser(owner, { 'content-type': 'image/png' }));
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_error');
    expect(res.body.error.message).toMatch(/^file: the bytes are not/);
    expect(await uploadCount()).toBe(before);
  });

  it('refuses an image over 10 MB in words and stores nothing', async () => {
    const before = await uploadCount();
    const res = await post(await paddedPng(10 * 1024 * 1024 + 1), asUser(member, { 'content-type': 'image/png' }));
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/^file: an image upload takes at most 10 MB/);
    expect(await uploadCount()).toBe(before);
  });

  it('a forged cross-site upload is refused: another Origin, another site, no CSRF token, no session', async () => {
    const before = await uploadCount();
    const cases: [Record<string, string>, number, string][] = [
      [asUser(owner, { origin: 'https://evil.example' }), 403, 'forbidden'],
      [asUser(owner, { 'sec-fetch-site': 'cross-site' }), 403, 'forbidden'],
      // A form of another site: the cookie rides along, the token cannot, and neither header says where it came from.
      [{ cookie: owner.cookie, 'content-type': 'multipart/form-data; boundary=x' }, 403, 'forbidden'],
      [asUser(owner, { 'x-csrf-token': 'not-the-token' }), 403, 'forbidden'],
      [{ origin: svc.baseUrl, 'x-csrf-token': owner.csrf }, 401, 'unauthorized'],
    ];
    for (const [headers, status, code] of cases) {
      const res = await post(png, headers);
      expect(res.status, JSON.stringify(headers)).toBe(status);
      expect(res.body.error.code).toBe(code);
    }
    expect(await uploadCount()).toBe(before);
  });

  it('an API key is not a session here', async () => {
    const res = await post(png, { authorization: `Bearer ${team.key}`, origin: svc.baseUrl, 'content-type': 'image/png' });
    expect(res.status).toBe(401);
  });
});
