import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VOICES } from '../../src/domain/catalogue/voices.ts';
import { spawnWorker, startTestService, type TestService } from '../support/app.ts';
import { waitUntil, type LongRunning } from '../support/cli-run.ts';
import { graphqlClient } from '../support/graphql-client.ts';
import { createCampaignRunner } from '../../src/services/campaigns/campaign-runner.ts';

let svc: TestService;
let gql: Awaited<ReturnType<typeof graphqlClient>>;
const children: LongRunning[] = [];

beforeAll(async () => {
  svc = await startTestService();
  gql = await graphqlClient(svc);
});
afterAll(async () => {
  for (const c of children) if (c.running()) c.child.kill('SIGKILL');
  await gql?.close();
  await svc?.close();
});

function worker() {
  const c = spawnWorker(svc);
  children.push(c);
  return c;
}

const call = async (key: string, query: string, variables: Record<string, unknown> = {}) => {
  const res = await gql.gql(query, variables, key);
  if (res.body.errors) throw new Error(JSON.stringify(res.body.errors));
  return res.body.data;
};

async function submitted(campaignId: string): Promise<number> {
  const r = await sql<{ n: number }>`select count(*)::int as n from campaign_rows where campaign_id = ${campaignId} and state <> 'pending'`.execute(svc.app.db);
  return r.rows[0]!.n;
}

describe('a worker killed with SIGKILL while it submits a campaign', () => {
  it('leaves a campaign that another worker finishes, every row created and charged exactly once', async () => {
    const t = await svc.team({ credits: 1000 });
    const ROWS = 40;
    const rows = Array.from({ length: ROWS }, (_, i) => ({
      row_number: i + 2,
      cells:
        i % 2
          ? { type: 'text-to-speech', text: `Row ${i}: our spring sale starts today, with free delivery on every order.`, voice_id: VOICES[i % VOICES.length]!.id }
          : { type: 'text-to-image', prompt: `poster ${i}`, model: 'fast', aspect_ratio: '1:1' },
    }));
    const open = await call(t.key, `mutation { openCampaign(name: "crash") { ... on MutationOpenCampaignSuccess { data { id } } } }`);
    const id = open.openCampaign.data.id as string;
    await call(t.key, `mutation ($id: ID!, $rows: [CampaignRowInput!]!) { addCampaignRows(campaign_id: $id, rows: $rows) { __typename } }`, { id, rows });
    await call(t.key, `mutation ($id: ID!) { startCampaign(id: $id) { __typename } }`, { id });

    const first = worker();
    await waitUntil(async () => (await submitted(id)) >= 6, 60_000, 'the first worker to submit some rows');
    first.child.kill('SIGKILL');
    await first.exited;
    const before = await submitted(id);
    expect(before).toBeLessThan(ROWS);

    const second = worker();
    await waitUntil(
      async () => (await call(t.key, `query ($id: ID!) { campaign(id: $id) { finished } }`, { id })).campaign.finished,
      90_000,
      'the second worker to finish the campaign',
    );
    const { campaign } = await call(t.key, `query ($id: ID!) { campaign(id: $id) { counts { total completed failed credits_spent credits_estimate } } }`, { id });
    expect(campaign.counts).toEqual({ total: ROWS, completed: ROWS, failed: 0, credits_spent: ROWS, credits_estimate: ROWS });
    const made = await sql<{ g: number; v: number; debits: number; debited: number }>`
      select (select count(*)::int from generations where team_id = ${t.teamId}) as g,
             (select count(*)::int from voiceovers where team_id = ${t.teamId}) as v,
             (select count(*)::int from credit_ledger where team_id = ${t.teamId} and kind = 'debit') as debits,
             (select coalesce(sum(amount), 0)::int from credit_ledger where team_id = ${t.teamId} and kind = 'debit') as debited`.execute(svc.app.db);
    expect(made.rows[0]).toEqual({ g: ROWS / 2, v: ROWS / 2, debits: ROWS, debited: ROWS });
    const team = await svc.app.db.selectFrom('teams').select('credits_used').where('id', '=', t.teamId).executeTakeFirstOrThrow();
    expect(team.credits_used).toBe(ROWS);
    second.child.kill('SIGTERM');
    await second.waitForExit(10_000);
  }, 180_000);
});

describe('a crash between a row\'s create and its recording', () => {
  it('replays the first create on the next run: the row gets that generation, nothing is made or charged twice', async () => {
    const t = await svc.team({ credits: 100 });
    const p = { teamId: t.teamId, keyId: t.keyId };
    const c = await svc.app.services.campaigns.open(p, 'replay');
    const rows = [2, 3, 4].map((n) => ({ row_number: n, cells: { type: 'text-to-image', prompt: `p${n}`, model: 'fast', aspect_ratio: '1:1' } }));
    await svc.app.services.campaigns.addRows(p, c.id, rows);
    await svc.app.services.campaigns.start(p, c.id);
    // What the runner had done for row 3 when it died: the create, under the row's key, but not the row update.
    const early = await svc.app.services.generationCreator.create(p, 'text-to-image', { prompt: 'p3', model: 'fast', aspect_ratio: '1:1' }, { key: `campaign:${c.id}:3`, method: 'POST', path: 'campaign:text-to-image' });
    const runner = createCampaignRunner(svc.app, svc.app.services.generationCreator, svc.app.services.voiceovers);
    await runner.run(c.id);
    const stored = await svc.app.db.selectFrom('campaign_rows').select(['row_number', 'generation_id', 'state']).where('campaign_id', '=', c.id).orderBy('row_number').execute();
    expect(stored.map((r) => r.state)).toEqual(['submitted', 'submitted', 'submitted']);
    expect(stored[1]!.generation_id).toBe((early.body as { generation_id: string }).generation_id);
    const g = await sql<{ n: number }>`select count(*)::int as n from generations where team_id = ${t.teamId}`.execute(svc.app.db);
    expect(g.rows[0]!.n).toBe(3);
    const team = await svc.app.db.selectFrom('teams').select('credits_used').where('id', '=', t.teamId).executeTakeFirstOrThrow();
    expect(team.credits_used).toBe(3);
  });
});

describe('refusals inside a batch', () => {
  it('fail only their own row: the rest of the batch commits, each refusal recorded with its reason', async () => {
    const t = await svc.team({ credits: 5 });
    const p = { teamId: t.teamId, keyId: t.keyId };
    const c = await svc.app.services.campaigns.open(p, 'refusals');
    const image = (n: number) => ({ row_number: n, cells: { type: 'text-to-image', prompt: `p${n}`, model: 'fast', aspect_ratio: '1:1' } });
    await svc.app.services.campaigns.addRows(p, c.id, [image(2), image(3), image(4)]);
    await svc.app.services.campaigns.start(p, c.id);
    // Meanwhile the team spends 3 of its 5 credits elsewhere: only two rows can still be paid for.
    for (const prompt of ['x', 'y', 'z']) {
      expect((await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: { prompt, model: 'fast', aspect_ratio: '1:1' } })).status).toBe(202);
    }
    const runner = createCampaignRunner(svc.app, svc.app.services.generationCreator, svc.app.services.voiceovers);
    await runner.run(c.id);
    const rows = await svc.app.db.selectFrom('campaign_rows').select(['row_number', 'state', 'error']).where('campaign_id', '=', c.id).orderBy('row_number').execute();
    expect(rows.map((r) => r.state)).toEqual(['submitted', 'submitted', 'failed']);
    expect(rows[2]!.error).toMatch(/Not enough credits: this generation needs 1 credits and 0 are available/);
    const team = await svc.app.db.selectFrom('teams').select('credits_used').where('id', '=', t.teamId).executeTakeFirstOrThrow();
    expect(team.credits_used).toBe(5);
    const campaign = await svc.app.services.campaigns.get(p, c.id);
    expect(campaign.counts).toMatchObject({ total: 3, submitted: 3, failed: 1, pending: 0 });
  });
});
