import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/app.ts';
import { graphqlClient } from '../support/graphql-client.ts';

let svc: TestService;
let gql: Awaited<ReturnType<typeof graphqlClient>>;

beforeAll(async () => {
  // A small row cap to reach; renders slow enough to catch generations still processing.
  svc = await startTestService({ CAMPAIGN_MAX_ROWS: '5', LOCAL_ENGINE_DELAY_MS: '1500' }, { worker: true });
  gql = await graphqlClient(svc);
});
afterAll(async () => {
  await gql?.close();
  await svc?.close();
});

const COUNTS = 'counts { total pending submitted processing completed failed credits_estimate credits_spent }';
const call = async (key: string, query: string, variables: Record<string, unknown> = {}) => {
  const res = await gql.gql(query, variables, key);
  if (res.body.errors) throw new Error(JSON.stringify(res.body.errors));
  return res.body.data;
};
const image = (n: number, prompt = `row ${n}`) => ({ row_number: n, cells: { type: 'text-to-image', prompt, model: 'fast', aspect_ratio: '1:1' } });
const ADD = `mutation ($id: ID!, $rows: [CampaignRowInput!]!) { addCampaignRows(campaign_id: $id, rows: $rows) { __typename ... on MutationAddCampaignRowsSuccess { data { stored kept } } ... on AppError { code message } } }`;

async function open(key: string, name: string): Promise<string> {
  const { openCampaign } = await call(key, `mutation ($name: String!) { openCampaign(name: $name) { ... on MutationOpenCampaignSuccess { data { id } } } }`, { name });
  return openCampaign.data.id;
}

/** What the counts were before counters: one pass over the rows and their generations. */
async function aggregate(campaignId: string) {
  const { rows } = await sql<Record<string, number>>`
    select
      count(*)::int as total,
      count(*) filter (where r.state = 'pending')::int as pending,
      count(*) filter (where r.state <> 'pending')::int as submitted,
      count(*) filter (where r.state = 'submitted' and g.status = 'processing')::int as processing,
      count(*) filter (where r.state = 'submitted' and (g.status = 'completed' or r.voiceover_id is not null))::int as completed,
      count(*) filter (where r.state = 'failed' or g.status = 'failed')::int as failed,
      coalesce(sum(r.credits), 0)::int as credits_estimate,
      coalesce(sum(case when g.status in ('processing', 'completed') then g.credits
                        when r.state = 'submitted' and r.voiceover_id is not null then r.credits end), 0)::int as credits_spent
    from campaign_rows r
    left join generations g on g.id = r.generation_id
    where r.campaign_id = ${campaignId}`.execute(svc.app.db);
  return rows[0]!;
}

const countsOf = async (key: string, id: string) => (await call(key, `query ($id: ID!) { campaign(id: $id) { finished ${COUNTS} } }`, { id })).campaign;

describe('a campaign holds at most CAMPAIGN_MAX_ROWS rows (issue 26, finding 4)', () => {
  it('rows past the cap are refused with a 400 naming the limit, and nothing of the call is stored', async () => {
    const t = await svc.team({ credits: 1000 });
    const id = await open(t.key, 'capped');
    const first = await call(t.key, ADD, { id, rows: [1, 2, 3, 4].map((n) => image(n)) });
    expect(first.addCampaignRows.data).toEqual({ stored: 4, kept: 0 });
    const over = await call(t.key, ADD, { id, rows: [3, 4, 5, 6].map((n) => image(n)) });
    expect(over.addCampaignRows).toEqual({
      __typename: 'AppError',
      code: 'validation_error',
      message: 'rows: a campaign holds at most 5 rows (CAMPAIGN_MAX_ROWS); this call would make it 6',
    });
    expect((await countsOf(t.key, id)).counts.total).toBe(4);
    // Rows already stored are written again without counting twice: up to the cap still fits.
    const fits = await call(t.key, ADD, { id, rows: [1, 2, 3, 4, 5].map((n) => image(n, 'again')) });
    expect(fits.addCampaignRows.data).toEqual({ stored: 5, kept: 0 });
    // One call alone over the cap, in an empty campaign.
    const other = await open(t.key, 'capped at once');
    const many = await call(t.key, ADD, { id: other, rows: [1, 2, 3, 4, 5, 6].map((n) => image(n)) });
    expect(many.addCampaignRows.code).toBe('validation_error');
    expect(many.addCampaignRows.message).toContain('CAMPAIGN_MAX_ROWS');
    expect((await countsOf(t.key, other)).counts.total).toBe(0);
  });
});

describe("a campaign's progress is kept as counters (issue 26, finding 4)", () => {
  it('the counts read from the counters equal the aggregate over the rows at every step', async () => {
    const t = await svc.team({ credits: 1000 });
    const id = await open(t.key, 'counted');
    const expectAgree = async () => {
      const { counts } = await countsOf(t.key, id);
      expect(counts).toEqual(await aggregate(id));
      return counts;
    };
    await call(t.key, ADD, { id, rows: [1, 2, 3, 4, 5].map((n) => image(n)) });
    expect(await expectAgree()).toMatchObject({ total: 5, pending: 5, credits_estimate: 5 });
    // A pending row rewritten with another price.
    await call(t.key, ADD, { id, rows: [{ row_number: 5, cells: { ...image(5).cells, quantity: '3' } }] });
    expect(await expectAgree()).toMatchObject({ total: 5, credits_estimate: 7 });
    await call(t.key, `mutation ($id: ID!) { startCampaign(id: $id) { __typename } }`, { id });
    // Submitted and still rendering: one of them is failed (and refunded) meanwhile.
    let processing: Array<{ generation_id: string }> = [];
    for (let i = 0; i < 100 && processing.length === 0; i++) {
      processing = (await sql<{ generation_id: string }>`select r.generation_id from campaign_rows r join generations g on g.id = r.generation_id where r.campaign_id = ${id} and g.status = 'processing'`.execute(svc.app.db)).rows;
      if (!processing.length) await new Promise((r) => setTimeout(r, 50));
    }
    expect(processing.length).toBeGreaterThan(0);
    await expectAgree();
    await svc.app.services.lifecycle.fail(processing[0]!.generation_id, 'failed by the test');
    await expectAgree();
    for (let i = 0; i < 200 && !(await countsOf(t.key, id)).finished; i++) await new Promise((r) => setTimeout(r, 100));
    const done = await expectAgree();
    expect(done).toMatchObject({ total: 5, pending: 0, submitted: 5, processing: 0, failed: 1, completed: 4 });
  }, 60_000);

  it('campaignUpdated reads nothing again for team events that are not its own', async () => {
    const t = await svc.team({ credits: 1000 });
    const id = await open(t.key, 'quiet');
    await call(t.key, ADD, { id, rows: [image(1)] });
    const campaigns = svc.app.services.campaigns;
    const get = campaigns.get;
    let reads = 0;
    campaigns.get = (...args: Parameters<typeof get>) => {
      reads++;
      return get(...args);
    };
    const ws = gql.ws(t.key);
    try {
      const seen: unknown[] = [];
      await new Promise<void>((resolve, reject) => {
        ws.subscribe({ query: `subscription ($id: ID!) { campaignUpdated(id: $id) { id ${COUNTS} } }`, variables: { id } }, {
          next: (m: any) => (m.errors ? reject(new Error(JSON.stringify(m.errors))) : (seen.push(m.data), resolve())),
          error: reject,
          complete: () => {},
        });
      });
      const before = reads;
      // Ten generations of the team, none of them the campaign's.
      for (let i = 0; i < 10; i++) {
        const g = await svc.api('POST', '/api/v1/images/text-to-image', { key: t.key, body: { model: 'fast', prompt: `outside ${i}`, aspect_ratio: '1:1' } });
        await svc.app.services.lifecycle.fail(g.body.generation_id, 'ended by the test');
      }
      await new Promise((r) => setTimeout(r, 1000));
      expect(reads - before).toBe(0);
      // Its own change still arrives.
      await call(t.key, ADD, { id, rows: [image(2)] });
      for (let i = 0; i < 30 && seen.length < 2; i++) await new Promise((r) => setTimeout(r, 100));
      expect(seen.length).toBe(2);
      expect((seen[1] as any).campaignUpdated.counts.total).toBe(2);
    } finally {
      campaigns.get = get;
      await ws.dispose();
    }
  });
});
