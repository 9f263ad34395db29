import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operatorActor, recordAudit } from '../../src/services/audit.ts';
import { startTestService, type TestService } from '../support/app.ts';
import { runCli, stdoutJson } from '../support/cli-run.ts';
import { cookieOf, signedInUser, type DashboardSession } from '../support/dashboard-session.ts';

// No worker: generations are ended here by the lifecycle, as the runner would.
let svc: TestService;
type Team = Awaited<ReturnType<TestService['team']>>;
let team: Team;
let owner: DashboardSession;

beforeAll(async () => {
  svc = await startTestService({ OWNER_TOP_UP: 'true', OWNER_TOP_UP_MAX_PER_PERIOD: '1000' });
  team = await svc.team({ credits: 500 });
  owner = await signedInUser(svc, team.teamId, 'owner');
});
afterAll(async () => {
  await svc?.close();
});

interface Line {
  id: string;
  action: string;
  detail: Record<string, any>;
  actor_kind: string;
  actor_user_id: string | null;
  actor_email: string | null;
  actor_key_id: string | null;
  actor_key_hint: string | null;
  actor_key_name: string | null;
  actor_name: string | null;
  ip: string | null;
  user_agent: string | null;
}

const linesOf = async (teamId: string, action?: string): Promise<Line[]> =>
  (
    await sql<Line>`select id::text, action, detail, actor_kind, actor_user_id, actor_email, actor_key_id, actor_key_hint, actor_key_name, actor_name, ip, user_agent
      from audit_log where team_id = ${teamId}::uuid ${action ? sql`and action = ${action}` : sql``} order by audit_log.id`.execute(svc.app.db)
  ).rows;

/** What a change wrote: the lines after `before` (a count of the team's lines). */
async function linesSince(teamId: string, before: number): Promise<Line[]> {
  return (await linesOf(teamId)).slice(before);
}
const count = async (teamId: string) => (await linesOf(teamId)).length;

const ok = async (session: DashboardSession, query: string, variables: Record<string, unknown> = {}) => {
  const res = await session.gql(query, variables);
  expect(res.body.errors, JSON.stringify(res.body.errors)).toBeUndefined();
  return res.body.data;
};

const asUser = (s: DashboardSession, userId: string) => ({ actor_kind: 'user', actor_user_id: userId, actor_email: s.email, actor_key_id: null, actor_name: null });
const userIdOf = async (s: DashboardSession) => (await ok(s, '{ viewer { user_id } }')).viewer.user_id as string;

const CREATE_KEY = `mutation($name: String) { createApiKey(name: $name) { ... on MutationCreateApiKeySuccess { data { key api_key { id hint } } } ... on AppError { code message } } }`;

async function newKey(name: string): Promise<{ id: string; key: string; hint: string }> {
  const d = (await ok(owner, CREATE_KEY, { name })).createApiKey.data;
  return { id: d.api_key.id, key: d.key, hint: d.api_key.hint };
}

async function endedGeneration(t: Team): Promise<string> {
  const res = await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: { model: 'fast', prompt: 'a shoe', aspect_ratio: '1:1' } });
  expect(res.status, res.text).toBe(202);
  expect(await svc.app.services.lifecycle.fail(res.body.generation_id, 'test: ended')).toBeTruthy();
  return res.body.generation_id;
}

describe('the three changes the issue names write exactly one line each', () => {
  it('a key revoked in the dashboard: one api_key.revoked line naming the owner, their address and browser', async () => {
    const k = await newKey('to revoke');
    const ownerId = await userIdOf(owner);
    const before = await count(team.teamId);
    const res = await svc.api('POST', '/graphql', {
      headers: { cookie: owner.cookie, 'x-csrf-token': owner.csrf, 'user-agent': 'Mozilla/5.0 (audit test)' },
      body: { query: `mutation($id: ID!) { revokeApiKey(id: $id) { ... on MutationRevokeApiKeySuccess { data { revoked_at } } } }`, variables: { id: k.id } },
    });
    expect(res.body.data.revokeApiKey.data.revoked_at).not.toBeNull();
    const lines = await linesSince(team.teamId, before);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ action: 'api_key.revoked', ...asUser(owner, ownerId), detail: { key_id: k.id, key_hint: k.hint, key_name: 'to revoke' } });
    expect(lines[0]!.ip).toMatch(/127\.0\.0\.1|::1/);
    expect(lines[0]!.user_agent).toBe('Mozilla/5.0 (audit test)');
    // Revoking it again changes nothing and writes nothing.
    await owner.gql(`mutation($id: ID!) { revokeApiKey(id: $id) { __typename } }`, { id: k.id });
    expect(await count(team.teamId)).toBe(before + 1);
  });

  it('a top-up by an owner: one credits.topped_up line; a refused one writes none', async () => {
    const ownerId = await userIdOf(owner);
    const before = await count(team.teamId);
    const res = await ok(owner, `mutation { topUpCredits(credits: 40) { ... on MutationTopUpCreditsSuccess { data { credits_limit } } ... on AppError { code message } } }`);
    expect(res.topUpCredits.data.credits_limit).toBe(540);
    const lines = await linesSince(team.teamId, before);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ action: 'credits.topped_up', ...asUser(owner, ownerId), detail: { credits: 40, limit_before: 500, limit_after: 540 } });
    const refused = await ok(owner, `mutation { topUpCredits(credits: 100000) { ... on AppError { code } } }`);
    expect(refused.topUpCredits.code).toBe('validation_error');
    expect(await count(team.teamId)).toBe(before + 1);
  });

  it('a bulk delete with an API key: one generations.bulk_deleted line naming the key, by ids and by filter', async () => {
    const t = await svc.team({ credits: 100 });
    const ids = [await endedGeneration(t), await endedGeneration(t)];
    const before = await count(t.teamId);
    const res = await svc.api('POST', '/graphql', {
      key: t.key,
      headers: { 'user-agent': 'audit-test/1.0' },
      body: { query: `mutation($ids: [ID!]) { deleteGenerations(ids: $ids) { ... on MutationDeleteGenerationsSuccess { data { deleted } } } }`, variables: { ids } },
    });
    expect(res.body.data.deleteGenerations.data.deleted).toBe(2);
    const lines = await linesSince(t.teamId, before);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ action: 'generations.bulk_deleted', actor_kind: 'api_key', actor_key_id: t.keyId, actor_user_id: null, user_agent: 'audit-test/1.0', detail: { deleted: 2, skipped: 0, not_found: 0 } });
    expect(lines[0]!.actor_key_hint).toMatch(/^service_sk_/);
    expect([...lines[0]!.detail.ids].sort()).toEqual([...ids].sort());

    // 150 by filter: two transactions inside, still one line.
    for (let i = 0; i < 3; i++) await endedGeneration(t);
    const mid = await count(t.teamId);
    const byFilter = await svc.api('POST', '/graphql', { key: t.key, body: { query: `mutation { deleteGenerations(filter: { status: failed }) { ... on MutationDeleteGenerationsSuccess { data { deleted } } } }` } });
    expect(byFilter.body.data.deleteGenerations.data.deleted).toBe(3);
    const filtered = await linesSince(t.teamId, mid);
    expect(filtered).toHaveLength(1);
    expect(filtered[0]).toMatchObject({ action: 'generations.bulk_deleted', actor_kind: 'api_key', detail: { deleted: 3, filter: { status: 'failed' } } });

    // A call that deletes nothing changes nothing, and writes nothing.
    await svc.api('POST', '/graphql', { key: t.key, body: { query: `mutation { deleteGenerations(filter: { status: failed }) { __typename } }` } });
    expect(await count(t.teamId)).toBe(mid + 1);
  });

  it('a single delete is not a line (the issue names the bulk form)', async () => {
    const t = await svc.team({ credits: 100 });
    const id = await endedGeneration(t);
    const before = await count(t.teamId);
    expect((await svc.api('DELETE', `/api/v1/generations/${id}`, { key: t.key })).status).toBe(204);
    expect(await count(t.teamId)).toBe(before);
  });
});

describe('every other recorded change', () => {
  it('keys and webhooks in the dashboard: created, renamed, webhook URL set and cleared, secret rotated', async () => {
    const ownerId = await userIdOf(owner);
    const before = await count(team.teamId);
    const k = await newKey('hooks');
    await ok(owner, `mutation($id: ID!) { renameApiKey(id: $id, name: "hooks prod") { __typename } }`, { id: k.id });
    await ok(owner, `mutation($id: ID!) { setApiKeyWebhook(id: $id, url: "https://example.com/hook") { __typename } }`, { id: k.id });
    await ok(owner, `mutation($id: ID!) { setApiKeyWebhook(id: $id, url: null) { __typename } }`, { id: k.id });
    const rotated = await ok(owner, `mutation($id: ID!) { rotateApiKeyWebhookSecret(id: $id) { ... on MutationRotateApiKeyWebhookSecretSuccess { data { webhook_secret } } } }`, { id: k.id });
    const lines = await linesSince(team.teamId, before);
    expect(lines.map((l) => l.action)).toEqual(['api_key.created', 'api_key.renamed', 'webhook.url_changed', 'webhook.url_changed', 'webhook.secret_rotated']);
    for (const l of lines) expect(l).toMatchObject(asUser(owner, ownerId));
    expect(lines[0]!.detail).toMatchObject({ key_id: k.id, key_name: 'hooks' });
    expect(lines[1]!.detail).toMatchObject({ key_id: k.id, name_before: 'hooks', name_after: 'hooks prod' });
    expect(lines[2]!.detail).toMatchObject({ key_id: k.id, url_before: null, url_after: 'https://example.com/hook' });
    expect(lines[3]!.detail).toMatchObject({ url_before: 'https://example.com/hook', url_after: null });
    // No secret in any line.
    const all = JSON.stringify(lines);
    expect(all).not.toContain(k.key);
    expect(all).not.toContain(rotated.rotateApiKeyWebhookSecret.data.webhook_secret);
    expect(all).not.toMatch(/whsec_|service_sk_[0-9A-Za-z]{38}/);
  });

  it('members: invited, role changed, removed (by an owner); signed in and signed out (the person themself)', async () => {
    const ownerId = await userIdOf(owner);
    const before = await count(team.teamId);
    const invited = await ok(owner, `mutation { inviteMember(email: "dana@example.com", role: member) { ... on MutationInviteMemberSuccess { data { member { id } url } } } }`);
    const danaId = invited.inviteMember.data.member.id;
    await ok(owner, `mutation($id: ID!) { setMemberRole(id: $id, role: owner) { __typename } }`, { id: danaId });
    await ok(owner, `mutation($id: ID!) { removeMember(id: $id) { __typename } }`, { id: danaId });
    const lines = await linesSince(team.teamId, before);
    expect(lines.map((l) => l.action)).toEqual(['member.invited', 'member.role_changed', 'member.removed']);
    for (const l of lines) expect(l).toMatchObject(asUser(owner, ownerId));
    expect(lines[0]!.detail).toEqual({ user_id: danaId, email: 'dana@example.com', role: 'member' });
    expect(lines[1]!.detail).toEqual({ user_id: danaId, email: 'dana@example.com', role_before: 'member', role_after: 'owner' });
    expect(lines[2]!.detail).toEqual({ user_id: danaId, email: 'dana@example.com', role: 'owner' });
    expect(JSON.stringify(lines)).not.toContain(new URL(invited.inviteMember.data.url).hash.slice(1));

    // Signing in (password), out, and in again through a one-time link.
    const mid = await count(team.teamId);
    const signIn = await svc.api('POST', '/auth/sign-in', { body: { email: owner.email, password: owner.password }, headers: { 'user-agent': 'Browser/1' } });
    expect(signIn.status).toBe(200);
    const cookie = cookieOf(signIn.headers['set-cookie']);
    // A wrong password is not a line (failed sign-ins are counted by the sign-in limits instead, see docs/dashboard.md).
    expect((await svc.api('POST', '/auth/sign-in', { body: { email: owner.email, password: 'wrong password!' } })).status).toBe(401);
    expect((await svc.api('POST', '/auth/sign-out', { headers: { cookie, 'x-csrf-token': signIn.body.csrf_token, 'user-agent': 'Browser/1' } })).status).toBe(204);
    const other = await signedInUser(svc, team.teamId, 'member');
    const otherId = await userIdOf(other);
    const session = await linesSince(team.teamId, mid);
    // The operator's `user create` for the new member, then their first sign-in through its link.
    expect(session.map((l) => l.action)).toEqual(['session.signed_in', 'session.signed_out', 'member.invited', 'session.signed_in']);
    expect(session[0]).toMatchObject({ ...asUser(owner, ownerId), user_agent: 'Browser/1', detail: { method: 'password' } });
    expect(session[1]).toMatchObject({ ...asUser(owner, ownerId), user_agent: 'Browser/1' });
    expect(session[2]).toMatchObject({ actor_kind: 'operator', detail: { user_id: otherId, role: 'member' } });
    expect(session[3]).toMatchObject({ ...asUser(other, otherId), detail: { method: 'link' } });
  });

  it('signing out everywhere is one line naming how many sessions it ended', async () => {
    const person = await signedInUser(svc, team.teamId, 'member');
    const personId = await userIdOf(person);
    const second = await svc.api('POST', '/auth/sign-in', { body: { email: person.email, password: person.password } });
    expect(second.status).toBe(200);
    const before = await count(team.teamId);
    const res = await svc.api('POST', '/auth/sign-out-everywhere', { headers: { cookie: person.cookie, 'x-csrf-token': person.csrf } });
    expect(res.body).toEqual({ sessions_ended: 2 });
    const lines = await linesSince(team.teamId, before);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ action: 'session.signed_out', ...asUser(person, personId), detail: { everywhere: true, sessions_ended: 2 } });
  });

  it("the operator's CLI side: key created, revoked, webhook set, rate limit set; credits set and reset; a member created and a new link", async () => {
    const t = await svc.team({ credits: 100 });
    const before = await count(t.teamId);
    const k = await svc.app.services.teams.createKey(t.teamId);
    await svc.app.services.teams.setWebhook(k.id, 'https://example.com/ops');
    await svc.app.services.teams.setRateLimit(k.id, { per_minute: 60, burst: 10 });
    await svc.app.services.teams.revokeKey(k.id);
    await svc.app.services.credits.setLimit(t.teamId, 300);
    await svc.app.services.credits.resetPeriod(t.teamId);
    await svc.app.services.members.createUser(t.teamId, { email: 'ops-made@example.com', role: 'owner' });
    await svc.app.services.members.newSignInLink({ email: 'ops-made@example.com' });
    const lines = await linesSince(t.teamId, before);
    expect(lines.map((l) => l.action)).toEqual([
      'api_key.created',
      'webhook.url_changed',
      'api_key.rate_limit_set',
      'api_key.revoked',
      'credits.limit_set',
      'credits.period_reset',
      'member.invited',
      'member.link_issued',
    ]);
    for (const l of lines) expect(l).toMatchObject({ actor_kind: 'operator', actor_user_id: null, actor_key_id: null, ip: null });
    expect(lines[0]!.actor_name).toMatch(/^adforge CLI/);
    expect(lines[2]!.detail).toMatchObject({ key_id: k.id, per_minute: 60, burst: 10 });
    expect(lines[4]!.detail).toMatchObject({ limit_before: 100, limit_after: 300 });
    expect(JSON.stringify(lines)).not.toContain(k.key);
  });

  it('recordAudit is the one call for the features built beside it (retention, export, team deletion)', async () => {
    const t = await svc.team();
    await svc.app.db.transaction().execute((trx) => recordAudit(trx, t.teamId, operatorActor(), 'team.export_started', { out: 'team.tar', secret: 'never kept' }));
    const [line] = await linesOf(t.teamId, 'team.export_started');
    expect(line!.detail).toEqual({ out: 'team.tar' });
    // A line that is not in the list is refused by the database as well as by the type.
    await expect(recordAudit(svc.app.db, t.teamId, operatorActor(), 'made.up' as never)).rejects.toThrow();
  });

  it('a change that fails writes no line: the line is in the change\'s transaction', async () => {
    const before = await count(team.teamId);
    // The last owner cannot become a member: refused, nothing changed, nothing written.
    const ownerId = await userIdOf(owner);
    const owners = (await ok(owner, '{ members { id role } }')).members.filter((m: any) => m.role === 'owner');
    for (const m of owners) if (m.id !== ownerId) await ok(owner, `mutation($id: ID!) { removeMember(id: $id) { __typename } }`, { id: m.id });
    const mid = await count(team.teamId);
    const refused = await ok(owner, `mutation($id: ID!) { setMemberRole(id: $id, role: member) { ... on AppError { code } } }`, { id: ownerId });
    expect(refused.setMemberRole.code).toBe('conflict');
    expect(await count(team.teamId)).toBe(mid);
    expect(mid).toBeGreaterThanOrEqual(before);
  });
});

const AUDIT = `query($action: String, $actor_kind: String, $actor_id: ID, $since: String, $until: String, $limit: Int, $offset: Int) {
  auditLog(action: $action, actor_kind: $actor_kind, actor_id: $actor_id, since: $since, until: $until, limit: $limit, offset: $offset) {
    totalCount limit offset items { id action detail actor { kind user_id email key_id key_hint key_name name } ip user_agent created_at }
  } }`;

describe('reading it', () => {
  it('owners read their own team\'s lines over GraphQL, newest first, filtered and paged', async () => {
    const all = (await ok(owner, AUDIT)).auditLog;
    expect(all.totalCount).toBe(await count(team.teamId));
    expect(all.items.length).toBe(Math.min(20, all.totalCount));
    const times = all.items.map((i: any) => Date.parse(i.created_at));
    expect([...times].sort((a, b) => b - a)).toEqual(times);

    const revoked = (await ok(owner, AUDIT, { action: 'api_key.revoked' })).auditLog;
    expect(revoked.totalCount).toBe(1);
    expect(revoked.items[0]).toMatchObject({ action: 'api_key.revoked', actor: { kind: 'user', email: owner.email, key_id: null } });

    const ownerId = await userIdOf(owner);
    const byOwner = (await ok(owner, AUDIT, { actor_id: ownerId, limit: 100 })).auditLog;
    expect(byOwner.totalCount).toBeGreaterThan(5);
    expect(byOwner.items.every((i: any) => i.actor.user_id === ownerId)).toBe(true);
    const byOperator = (await ok(owner, AUDIT, { actor_kind: 'operator', limit: 100 })).auditLog;
    expect(byOperator.items.every((i: any) => i.actor.kind === 'operator')).toBe(true);
    expect(byOperator.totalCount).toBeGreaterThan(0);

    const paged = (await ok(owner, AUDIT, { limit: 2, offset: 1 })).auditLog;
    expect(paged).toMatchObject({ limit: 2, offset: 1, totalCount: all.totalCount });
    expect(paged.items.map((i: any) => i.id)).toEqual(all.items.slice(1, 3).map((i: any) => i.id));

    const future = (await ok(owner, AUDIT, { since: new Date(Date.now() + 3_600_000).toISOString() })).auditLog;
    expect(future.totalCount).toBe(0);
    const past = (await ok(owner, AUDIT, { until: '2000-01-01T00:00:00Z' })).auditLog;
    expect(past.totalCount).toBe(0);
  });

  it('bad filters are validation errors', async () => {
    for (const [vars, message] of [
      [{ action: 'key.stolen' }, /^action: must be one of api_key\.created/],
      [{ actor_kind: 'robot' }, /^actor_kind: must be user, api_key or operator/],
      [{ since: 'yesterday' }, /^since: must be an ISO 8601 date-time/],
      [{ limit: 500 }, /^limit: /],
    ] as const) {
      const res = await owner.gql(AUDIT, vars);
      expect(res.body.errors?.[0]?.extensions?.code, JSON.stringify(res.body)).toBe('validation_error');
      expect(res.body.errors[0].message).toMatch(message);
    }
  });

  it('a member, an API key and another team\'s owner never read it', async () => {
    const member = await signedInUser(svc, team.teamId, 'member');
    const m = await member.gql(AUDIT);
    expect(m.body.errors?.[0]?.extensions?.code).toBe('forbidden');
    expect(m.body.data?.auditLog ?? null).toBeNull();

    const byKey = await svc.api('POST', '/graphql', { key: team.key, body: { query: AUDIT } });
    expect(byKey.body.errors?.[0]?.extensions?.code).toBe('forbidden');

    const other = await svc.team();
    const otherOwner = await signedInUser(svc, other.teamId, 'owner');
    const theirs = (await ok(otherOwner, AUDIT, { limit: 100 })).auditLog;
    const ours = new Set((await linesOf(team.teamId)).map((l) => l.id));
    expect(theirs.items.length).toBeGreaterThan(0);
    expect(theirs.items.some((i: any) => ours.has(i.id))).toBe(false);
    expect(theirs.totalCount).toBe(await count(other.teamId));
    // Not even by naming our owner as the actor.
    expect((await ok(otherOwner, AUDIT, { actor_id: await userIdOf(owner) })).auditLog.totalCount).toBe(0);
  });

  it('operators: adforge audit --team ID prints the lines, filtered, as JSON or as text', async () => {
    const env = { DATABASE_URL: svc.databaseUrl, DATA_DIR: svc.dataDir, LOG_LEVEL: 'silent' };
    const json = await runCli(['audit', '--team', team.teamId, '--action', 'api_key.revoked', '--json'], env);
    expect(json.code, json.stderr).toBe(0);
    const out = stdoutJson(json);
    expect(out.pagination.total).toBe(1);
    expect(out.data[0]).toMatchObject({ action: 'api_key.revoked', actor: { kind: 'user', email: owner.email } });

    const text = await runCli(['audit', '--team', team.teamId, '--since', '2000-01-01T00:00:00Z'], env);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('api_key.revoked');
    expect(text.stdout).toContain(owner.email);
    expect(text.stdout).toContain('credits.topped_up');

    const bad = await runCli(['audit', '--team', team.teamId, '--action', 'nope'], env);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/action: must be one of/);
    const missing = await runCli(['audit', '--team', '00000000-0000-4000-8000-000000000000'], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/Team not found/);
  });
});

describe('append-only, kept AUDIT_RETENTION_DAYS', () => {
  it('the database refuses UPDATE, DELETE and TRUNCATE of audit_log outside the purge', async () => {
    const [line] = await linesOf(team.teamId);
    await expect(sql`update audit_log set action = 'api_key.created' where id = ${line!.id}::bigint`.execute(svc.app.db)).rejects.toThrow(/append-only/);
    await expect(sql`delete from audit_log where id = ${line!.id}::bigint`.execute(svc.app.db)).rejects.toThrow(/append-only/);
    await expect(sql`truncate audit_log`.execute(svc.app.db)).rejects.toThrow(/append-only/);
    expect((await linesOf(team.teamId))[0]).toEqual(line);
  });

  it('the daily purge removes only the lines older than the retention (400 days by default)', async () => {
    const t = await svc.team();
    const day = 86_400_000;
    for (const age of [401, 399, 10]) {
      await sql`insert into audit_log (team_id, action, actor_kind, actor_name, created_at) values (${t.teamId}::uuid, 'credits.limit_set', 'operator', ${`age ${age}`}, ${new Date(Date.now() - age * day)})`.execute(svc.app.db);
    }
    expect(svc.app.config.auditRetentionDays).toBe(400);
    const purged = await svc.app.services.audit.purge();
    expect(purged).toBeGreaterThanOrEqual(1);
    const names = (await linesOf(t.teamId)).map((l) => l.actor_name);
    expect(names).not.toContain('age 401');
    expect(names).toEqual(expect.arrayContaining(['age 399', 'age 10']));
    // And the job that runs it is in the worker's crontab, daily.
    const { CRONS } = await import('../../tasks/index.ts');
    expect(CRONS.find((c) => c.name === 'purge_audit_log')?.schedule).toMatch(/^\d+ \d+ \* \* \*$/);
    // The guard is back on once the purge's transaction ends.
    await expect(sql`delete from audit_log where team_id = ${t.teamId}::uuid`.execute(svc.app.db)).rejects.toThrow(/append-only/);
  });
});

describe('from where, behind a proxy', () => {
  it('with TRUST_PROXY=1 a line names the client the proxy forwarded, not the proxy', async () => {
    const proxied = await startTestService({ TRUST_PROXY: '1' });
    try {
      const t = await proxied.team();
      const person = await signedInUser(proxied, t.teamId, 'owner');
      const res = await proxied.api('POST', '/auth/sign-in', { body: { email: person.email, password: person.password }, headers: { 'x-forwarded-for': '198.51.100.23' } });
      expect(res.status).toBe(200);
      const [line] = (
        await sql<{ ip: string }>`select ip from audit_log where team_id = ${t.teamId}::uuid and action = 'session.signed_in' order by audit_log.id desc limit 1`.execute(proxied.app.db)
      ).rows;
      expect(line!.ip).toBe('198.51.100.23');
    } finally {
      await proxied.close();
    }
  });
});
