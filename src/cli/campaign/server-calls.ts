import { unwrap, type ApiClient } from './api.ts';

/** What the server needs of a row: its spreadsheet number and its cells by column name. */
export interface RowInput {
  row_number: number;
  cells: Record<string, string>;
}

export interface CheckedRow {
  row_number: number;
  ok: boolean;
  type: string | null;
  row_key: string | null;
  credits: number | null;
  problems: { field: string; message: string }[];
}

// The server's own shape of the counts, as the campaign query answers them.
export type { CampaignCounts } from '../../repositories/campaigns.ts';
import type { CampaignCounts } from '../../repositories/campaigns.ts';

export interface CampaignState {
  id: string;
  name: string;
  status: string;
  finished: boolean;
  counts: CampaignCounts;
}

export interface CampaignRowResult {
  row_number: number;
  row_key: string | null;
  type: string;
  status: string;
  credits: number;
  generation_id: string | null;
  voiceover_id: string | null;
  result_url: string | null;
  error: string | null;
}

export interface Balance {
  credits_limit: number;
  credits_used: number;
  credits_remaining: number;
}

export const CAMPAIGN_FIELDS = 'id name status finished counts { total pending submitted processing completed failed credits_estimate credits_spent }';
const ROW_FIELDS = 'row_number row_key type status credits generation_id voiceover_id result_url error';
/** Rows per `campaign.rows` page: the server's largest page. */
export const ROWS_PAGE = 100;

type Union<T> = { __typename: string; data?: T; code?: string; message?: string };

export async function checkRows(api: ApiClient, rows: RowInput[]): Promise<CheckedRow[]> {
  const r = await api.gql<{ checkCampaignRows: CheckedRow[] }>(
    `query CheckCampaignRows($rows: [CampaignRowInput!]!) { checkCampaignRows(rows: $rows) { row_number ok type row_key credits problems { field message } } }`,
    { rows },
  );
  return r.checkCampaignRows;
}

export async function balance(api: ApiClient): Promise<Balance> {
  return (await api.gql<{ credits: Balance }>(`query Credits { credits { credits_limit credits_used credits_remaining } }`)).credits;
}

export async function openCampaign(api: ApiClient, name: string): Promise<CampaignState> {
  const r = await api.gql<{ openCampaign: Union<CampaignState> }>(
    `mutation OpenCampaign($name: String!) { openCampaign(name: $name) { __typename ... on MutationOpenCampaignSuccess { data { ${CAMPAIGN_FIELDS} } } ... on AppError { code message } } }`,
    { name },
  );
  return unwrap(r.openCampaign);
}

export async function addRows(api: ApiClient, campaignId: string, rows: RowInput[]): Promise<{ stored: number; kept: number; changed: number }> {
  const r = await api.gql<{ addCampaignRows: Union<{ stored: number; kept: number; changed: number }> }>(
    `mutation AddCampaignRows($id: ID!, $rows: [CampaignRowInput!]!) { addCampaignRows(campaign_id: $id, rows: $rows) { __typename ... on MutationAddCampaignRowsSuccess { data { stored kept changed } } ... on AppError { code message } } }`,
    { id: campaignId, rows },
  );
  return unwrap(r.addCampaignRows);
}

export async function startCampaign(api: ApiClient, campaignId: string): Promise<CampaignState> {
  const r = await api.gql<{ startCampaign: Union<CampaignState> }>(
    `mutation StartCampaign($id: ID!) { startCampaign(id: $id) { __typename ... on MutationStartCampaignSuccess { data { ${CAMPAIGN_FIELDS} } } ... on AppError { code message } } }`,
    { id: campaignId },
  );
  return unwrap(r.startCampaign);
}

export async function getCampaign(api: ApiClient, campaignId: string): Promise<CampaignState | null> {
  return (await api.gql<{ campaign: CampaignState | null }>(`query Campaign($id: ID!) { campaign(id: $id) { ${CAMPAIGN_FIELDS} } }`, { id: campaignId })).campaign;
}

export async function rowsPage(api: ApiClient, campaignId: string, offset: number): Promise<{ totalCount: number; items: CampaignRowResult[] }> {
  const r = await api.gql<{ campaign: { rows: { totalCount: number; items: CampaignRowResult[] } } | null }>(
    `query CampaignRows($id: ID!, $offset: Int!) { campaign(id: $id) { rows(limit: ${ROWS_PAGE}, offset: $offset) { totalCount items { ${ROW_FIELDS} } } } }`,
    { id: campaignId, offset },
  );
  if (!r.campaign) throw new Error(`campaign ${campaignId} is gone`);
  return r.campaign.rows;
}

export const CAMPAIGN_SUBSCRIPTION = `subscription CampaignUpdated($id: ID!) { campaignUpdated(id: $id) { ${CAMPAIGN_FIELDS} } }`;
