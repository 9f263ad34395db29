import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VOICES } from '../../src/domain/catalogue/voices.ts';
import { startTestService, type TestService } from '../support/app.ts';
import { graphqlClient } from '../support/graphql-client.ts';

let svc: TestService;
let gql: Awaited<ReturnType<typeof graphqlClient>>;
let avatarId: string;
const voice = VOICES[0]!.id;

beforeAll(async () => {
  svc = await startTestService({}, { worker: true });
  gql = await graphqlClient(svc);
  const t = await svc.team();
  avatarId = (await svc.api('GET', '/api/v1/avatars', { key: t.key })).body.data[0].id;
});
afterAll(async () => {
  await gql?.close();
  await svc?.close();
});

const CAMPAIGN = `id name status finished counts { total pending submitted processing completed failed credits_estimate credits_spent }`;
const call = async (key: string, query: string, variables: Record<string, unknown> = {}) => {
  const res = await gql.gql(query, variables, key);
  if (res.body.errors) throw new Error(JSON.stringify(res.body.errors));
  return res.body.data;
};

const rows = () => [
  { row_number: 1, cells: { type: 'text-to-image', row_key: 'hero', prompt: 'a red sneaker', model: 'fast', aspect_ratio: '1:1', quantity: '2' } },
  { row_number: 2, cells: { type: 'talking-avatar', avatar_id: avatarId, avatar_type: 'platform', script: 'Hi there, meet our shoe.', voice_id: voice } },
  { row_number: 3, cells: { type: 'text-to-speech', text: 'Big sale today.', voice_id: voice, 'voice_settings.stability': '0.5' } },
];

async function waitFinished(key: string, id: string): Promise<any> {
  const until = Date.now() + 60_000;
  for (;;) {
    const { campaign } = await call(key, `query ($id: ID!) { campaign(id: $id) { ${CAMPAIGN} } }`, { id });
    if (campaign.finished) return campaign;
    if (Date.now() > until) throw new Error(`campaign not finished: ${JSON.stringify(campaign)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('campaigns through GraphQL', () => {
  it('checks and prices rows without storing or charging anything', async () => {
    const t = await svc.team({ credits: 100 });
    const bad = [...rows(), { row_number: 4, cells: { type: 'text-to-image', prompt: 'x', model: 'nope', aspect_ratio: '1:1', colour: 'red' } }];
    const { checkCampaignRows } = await call(t.key, `query ($rows: [CampaignRowInput!]!) { checkCampaignRows(rows: $rows) { row_number ok type row_key credits problems { field message } } }`, { rows: bad });
    expect(checkCampaignRows.map((r: any) => [r.row_number, r.ok, r.credits])).toEqual([[1, true, 2], [2, true, 20], [3, true, 1], [4, false, null]]);
    expect(checkCampaignRows[3].problems.map((p: any) => p.field)).toEqual(['colour']);
    const n = await sql<{ n: number }>`select count(*)::int as n from campaign_rows`.execute(svc.app.db);
    expect(n.rows[0]!.n).toBe(0);
  });

  it('runs a mixed campaign: every row created once, counts and rows with results', async () => {
    const t = await svc.team({ credits: 100 });
    const { openCampaign } = await call(t.key, `mutation { openCampaign(name: "spring") { ... on MutationOpenCampaignSuccess { data { ${CAMPAIGN} } } } }`);
    const id = openCampaign.data.id;
    const added = await call(t.key, `mutation ($id: ID!, $rows: [CampaignRowInput!]!) { addCampaignRows(campaign_id: $id, rows: $rows) { ... on MutationAddCampaignRowsSuccess { data { stored kept } } ... on AppError { code message } } }`, { id, rows: rows() });
    expect(added.addCampaignRows.data).toEqual({ stored: 3, kept: 0 });
    const started = await call(t.key, `mutation ($id: ID!) { startCampaign(id: $id) { ... on MutationStartCampaignSuccess { data { ${CAMPAIGN} } } ... on AppError { code message } } }`, { id });
    expect(started.startCampaign.data.status).toBe('running');
    const done = await waitFinished(t.key, id);
    expect(done.counts).toMatchObject({ total: 3, pending: 0, submitted: 3, processing: 0, completed: 3, failed: 0, credits_estimate: 23, credits_spent: 23 });
    const used = await svc.app.db.selectFrom('teams').select('credits_used').where('id', '=', t.teamId).executeTakeFirstOrThrow();
    expect(used.credits_used).toBe(23);
    const { campaign } = await call(t.key, `query ($id: ID!) { campaign(id: $id) { rows(limit: 10) { totalCount items { row_number row_key type status credits generation_id voiceover_id result_url error } } } }`, { id });
    expect(campaign.rows.items.map((r: any) => [r.row_number, r.status, r.credits])).toEqual([[1, 'completed', 2], [2, 'completed', 20], [3, 'completed', 1]]);
    for (const r of campaign.rows.items) expect((await svc.fetchUrl(r.result_url)).status).toBe(200);
    // The same name continues the same campaign: nothing new to submit, nothing charged again.
    const again = await call(t.key, `mutation { openCampaign(name: "spring") { ... on MutationOpenCampaignSuccess { data { id } } } }`);
    expect(again.openCampaign.data.id).toBe(id);
    const re = await call(t.key, `mutation ($id: ID!, $rows: [CampaignRowInput!]!) { addCampaignRows(campaign_id: $id, rows: $rows) { ... on MutationAddCampaignRowsSuccess { data { stored kept changed } } } }`, { id, rows: rows() });
    expect(re.addCampaignRows.data).toEqual({ stored: 0, kept: 3, changed: 0 });
    // Another file under the same name: its submitted rows are kept, and the change is reported.
    const other = rows().map((r) => (r.row_number === 1 ? { ...r, cells: { ...r.cells, prompt: 'a blue sneaker' } } : r));
    const diff = await call(t.key, `mutation ($id: ID!, $rows: [CampaignRowInput!]!) { addCampaignRows(campaign_id: $id, rows: $rows) { ... on MutationAddCampaignRowsSuccess { data { stored kept changed } } } }`, { id, rows: other });
    expect(diff.addCampaignRows.data).toEqual({ stored: 0, kept: 3, changed: 1 });
    await call(t.key, `mutation ($id: ID!) { startCampaign(id: $id) { __typename } }`, { id });
    expect((await svc.app.db.selectFrom('teams').select('credits_used').where('id', '=', t.teamId).executeTakeFirstOrThrow()).credits_used).toBe(23);
  }, 90_000);

  it('refuses to start when the credits cannot pay for every row, before anything is submitted', async () => {
    const t = await svc.team({ credits: 10 });
    const { openCampaign } = await call(t.key, `mutation { openCampaign(name: "too big") { ... on MutationOpenCampaignSuccess { data { id } } } }`);
    const id = openCampaign.data.id;
    await call(t.key, `mutation ($id: ID!, $rows: [CampaignRowInput!]!) { addCampaignRows(campaign_id: $id, rows: $rows) { __typename } }`, { id, rows: rows() });
    const res = await call(t.key, `mutation ($id: ID!) { startCampaign(id: $id) { ... on AppError { code message } } }`, { id });
    expect(res.startCampaign).toEqual({ code: 'insufficient_credits', message: expect.stringMatching(/need 23 credits and 10 are available/) });
    const g = await sql<{ n: number }>`select count(*)::int as n from generations where team_id = ${t.teamId}`.execute(svc.app.db);
    expect(g.rows[0]!.n).toBe(0);
  });
});
