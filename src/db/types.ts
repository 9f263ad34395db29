import type { ColumnType, Generated, Selectable } from 'kysely';
import type { GenerationKind, GenerationOperation, GenerationStatus, GenerationType } from '../domain/generation-types.ts';

type CreatedAt = ColumnType<Date, Date | string | undefined, never>;

export interface TeamsTable {
  id: Generated<string>;
  name: string;
  tier: 'free' | 'starter' | 'pro' | 'business';
  credits_limit: number;
  credits_used: Generated<number>;
  period_started_at: Generated<Date>;
  created_at: CreatedAt;
  /** The owner's retention in days, never longer than the operator's RETENTION_DAYS; null = the operator's. */
  retention_days: Generated<number | null>;
}

export interface ApiKeysTable {
  id: Generated<string>;
  team_id: string;
  key_digest: Buffer;
  key_hint: string;
  webhook_url: string | null;
  webhook_secret: string;
  created_at: CreatedAt;
  revoked_at: Date | null;
  /** The key's own token bucket; null = its tier's. */
  rate_per_minute: Generated<number | null>;
  rate_burst: Generated<number | null>;
  name: Generated<string>;
  last_used_at: Generated<Date | null>;
  created_by: Generated<string | null>;
}

export interface UsersTable {
  id: Generated<string>;
  team_id: string;
  email: string;
  role: 'owner' | 'member';
  password_hash: string | null;
  created_at: CreatedAt;
}

export interface SessionsTable {
  id_digest: Buffer;
  user_id: string;
  created_at: CreatedAt;
  last_seen_at: Generated<Date>;
  expires_at: Date;
}

export interface SignInLinksTable {
  token_digest: Buffer;
  user_id: string;
  purpose: 'sign_in' | 'invite';
  created_by: string | null;
  created_at: CreatedAt;
  expires_at: Date;
  used_at: Date | null;
}

export interface SignInFailuresTable {
  id: Generated<string>;
  email: string;
  ip: string;
  at: CreatedAt;
}

export interface CreditLedgerTable {
  id: Generated<number>;
  team_id: string;
  kind: 'debit' | 'refund' | 'period_reset' | 'limit_set';
  amount: number;
  subject_type: string | null;
  subject_id: string | null;
  note: string | null;
  created_at: CreatedAt;
}

export interface CreditHoldsTable {
  id: string;
  team_id: string;
  credits: number;
  expires_at: ColumnType<Date, Date | string, Date | string>;
}

export interface CreditTopUpsTable {
  id: Generated<string>;
  team_id: string;
  user_id: string | null;
  credits: number;
  at: CreatedAt;
}

export interface ProductsTable {
  id: Generated<string>;
  team_id: string;
  name: string;
  description: string;
  category: string;
  image_key: string;
  /** Bytes of the stored image (0 for a row written before migration 0021 until `adforge storage recount`). */
  image_bytes: Generated<number>;
  image_source_url: string;
  price: number | null;
  currency: Generated<string>;
  link: string | null;
  created_at: CreatedAt;
}

export interface BrandsTable {
  id: Generated<string>;
  team_id: string;
  name: string;
  description: Generated<string>;
  industry: Generated<string>;
  website_url: string | null;
  brand_voice: string | null;
  target_audience: string | null;
  brand_color_primary: string | null;
  brand_color_accent: string | null;
  logo_url: string | null;
  reference_image_url: string | null;
  created_at: CreatedAt;
}

export interface AvatarsTable {
  id: Generated<string>;
  team_id: string | null;
  avatar_type: 'platform' | 'custom';
  name: string;
  description: string | null;
  gender: 'male' | 'female' | null;
  age_group: string | null;
  image_key: string;
  image_bytes: Generated<number>;
  image_source_url: string | null;
  created_at: CreatedAt;
}

export interface SettingsTable {
  name: string;
  value: string;
  created_at: CreatedAt;
}

export interface StyleTemplatesTable {
  id: string;
  name: string;
  description: string;
  prompt: string;
  background: string;
  accent: string;
  created_at: CreatedAt;
}

export interface CaptionTemplatesTable {
  id: string;
  name: string;
  description: string;
  font_size: number;
  color: string;
  highlight_color: string;
  position: 'top' | 'center' | 'bottom';
  uppercase: boolean;
  created_at: CreatedAt;
}

export interface GenerationsTable {
  id: Generated<string>;
  team_id: string;
  api_key_id: string | null;
  operation: GenerationOperation;
  type: GenerationType;
  kind: GenerationKind;
  status: Generated<GenerationStatus>;
  params: ColumnType<Record<string, unknown>, string, string>;
  credits: number;
  result_keys: Generated<string[]>;
  result_meta: ColumnType<Record<string, unknown>, string | undefined, string>;
  error: string | null;
  source_generation_id: string | null;
  created_at: CreatedAt;
  completed_at: Date | null;
  deadline_at: ColumnType<Date, Date | string, Date | string>;
  /** When the retention job removed its stored files (result_keys is empty from then). */
  files_expired_at: Generated<Date | null>;
  /** Bytes of the stored results, and of the input copy kept for this generation alone (storage usage). */
  output_bytes: Generated<number>;
  input_bytes: Generated<number>;
  /** Live progress while processing (0 to 1, null when unknown), its stage in words, and when it was last written (migration 0022). */
  progress: Generated<number | null>;
  stage: Generated<string | null>;
  progress_at: Generated<Date | null>;
}

export interface GenerationProductsTable {
  generation_id: string;
  product_id: string;
}

export interface GenerationAvatarsTable {
  generation_id: string;
  avatar_id: string;
}

export interface IdempotencyKeysTable {
  team_id: string;
  method: string;
  path: string;
  key: string;
  request_hash: Buffer;
  response_status: number;
  response_body: ColumnType<unknown, string | null, string | null>;
  /** Renewed when an expired key is used again. */
  created_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

export interface WebhookDeliveriesTable {
  id: Generated<string>;
  /** Null for a test event. */
  generation_id: string | null;
  api_key_id: string | null;
  event: string;
  url: string;
  ok: boolean;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
  attempted_at: CreatedAt;
  /** Null on attempts recorded before bodies were kept. */
  event_id: string | null;
  body: string | null;
  redelivery_of: string | null;
}

export interface WorkerHeartbeatsTable {
  worker_id: string;
  seen_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

export interface VoicesTable {
  id: string;
  name: string;
  gender: 'male' | 'female' | 'other';
  age_group: 'kid' | 'young_adult' | 'adult' | 'senior';
  accent: string;
  style: string;
  engine_voice: ColumnType<Record<string, unknown>, string, string>;
  created_at: CreatedAt;
}

export interface VoiceoversTable {
  id: Generated<string>;
  team_id: string;
  api_key_id: string | null;
  kind: 'text-to-speech' | 'speech-to-speech';
  voice_id: string;
  text: string | null;
  source_url: string | null;
  source_duration_seconds: number | null;
  model: string | null;
  voice_settings: ColumnType<Record<string, unknown> | null, string | null, string | null>;
  duration_seconds: number;
  audio_key: string;
  audio_bytes: Generated<number>;
  credits: number;
  created_at: CreatedAt;
}

export interface AdLibraryBrandsTable {
  id: Generated<string>;
  meta_page_id: string;
  name: string;
  page_url: string;
  about: Generated<string>;
  profile_picture_source_url: string | null;
  profile_picture_key: string | null;
  page_categories: Generated<string[]>;
  page_like_count: ColumnType<number, number | undefined, number>;
  scraped_at: Date | null;
  created_at: CreatedAt;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
  /** When the retention job removed our copy of the profile picture (a later scrape copies it again). */
  profile_picture_expired_at: Generated<Date | null>;
}

export interface AdLibraryMediaItem {
  type: 'image' | 'video';
  url: string;
  key: string | null;
}

export interface AdLibraryAdsTable {
  id: Generated<string>;
  brand_id: string;
  ad_archive_id: string;
  is_active: boolean;
  start_date: ColumnType<Date, Date | string, Date | string>;
  end_date: ColumnType<Date | null, Date | string | null, Date | string | null>;
  body_text: string;
  title: string;
  cta_text: string;
  cta_type: string;
  link_url: string;
  display_format: string;
  publisher_platforms: string[];
  media: ColumnType<AdLibraryMediaItem[], string, string>;
  thumbnail_url: string;
  eu_total_reach: number;
  created_at: CreatedAt;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
  /** When the retention job removed our copies of its media (a later scrape copies them again). */
  media_expired_at: Generated<Date | null>;
}

export interface AdLibraryScrapeJobsTable {
  id: Generated<string>;
  team_id: string;
  api_key_id: string | null;
  meta_page_id: string;
  page_url: string;
  status: Generated<'processing' | 'completed' | 'failed'>;
  credits: number;
  brand_id: string | null;
  ads_count: Generated<number>;
  error: string | null;
  created_at: CreatedAt;
  completed_at: Date | null;
  /** A page of results was asked of the source and its answer is not yet kept. */
  source_asking: Generated<boolean>;
  /** A page's answer kept until its ads are stored (with the brand, for the first page). */
  source_page: ColumnType<unknown, string | null | undefined, string | null>;
  /** The cursor of the next page of results to ask the source (null: the first, or none left once brand_id is set). */
  source_cursor: Generated<string | null>;
}

export interface RateLimitHitsTable {
  team_id: string;
  scope: string;
  at: ColumnType<Date, Date | string | undefined, never>;
}

export interface CampaignsTable {
  id: Generated<string>;
  team_id: string;
  api_key_id: string | null;
  name: string;
  status: Generated<'draft' | 'running' | 'submitted'>;
  created_at: CreatedAt;
  started_at: Date | null;
  submitted_at: Date | null;
}

export interface CampaignRowsTable {
  campaign_id: string;
  row_number: number;
  row_key: string | null;
  type: string;
  body: ColumnType<Record<string, unknown>, string, string>;
  credits: number;
  state: Generated<'pending' | 'submitted' | 'failed'>;
  generation_id: string | null;
  voiceover_id: string | null;
  error: string | null;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

export type UpstreamJobState = 'submitting' | 'submitted' | 'succeeded' | 'failed' | 'cancelled';

export interface EngineBreakersTable {
  provider: string;
  consecutive_failures: Generated<number>;
  open_until: Date | null;
  last_error: string | null;
  updated_at: Generated<Date>;
}

export interface UpstreamJobsTable {
  id: Generated<string>;
  generation_id: string;
  provider: string;
  state: ColumnType<UpstreamJobState, UpstreamJobState | undefined, UpstreamJobState>;
  provider_job_id: string | null;
  handle: ColumnType<Record<string, unknown>, string | undefined, string>;
  cost: number | null;
  error: string | null;
  polls: ColumnType<number, number | undefined, number>;
  refetches: ColumnType<number, number | undefined, number>;
  refused_reads: ColumnType<number, number | undefined, number>;
  created_at: ColumnType<Date, Date | string | undefined, never>;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

/** An output made and stored while its generation makes the rest (migration 0026). */
export interface KeptOutputsTable {
  generation_id: string;
  position: number;
  key: string;
  bytes: ColumnType<number, number, number>;
  upstream_job_id: string | null;
  created_at: ColumnType<Date, Date | string | undefined, never>;
}

export interface UpstreamPollBudgetsTable {
  provider: string;
  next_at: ColumnType<Date, Date | string | undefined, Date | string>;
  last_read_at: ColumnType<Date, Date | string | undefined, Date | string>;
  paused_until: ColumnType<Date, Date | string | undefined, Date | string>;
}

export interface UpstreamEarlyHooksTable {
  provider: string;
  job_ref: string;
  received_at: ColumnType<Date, Date | string | undefined, never>;
}

export interface UpstreamJobEventsTable {
  id: Generated<number>;
  upstream_job_id: string;
  state: string;
  detail: string | null;
  at: ColumnType<Date, Date | string | undefined, never>;
}

export interface RateBucketsTable {
  bucket: string;
  tokens: number;
  at_ms: number;
  allowed: boolean;
  full_at_ms: number;
}

export interface UploadsTable {
  id: string;
  team_id: string;
  status: 'pending' | 'ready';
  storage_key: string;
  content_type: string | null;
  kind: 'image' | 'video' | 'audio' | null;
  size: number;
  declared_content_type: string | null;
  created_at: CreatedAt;
  expires_at: Date;
}

/** Per-team storage counters, kept by triggers (migration 0021): never written by the service. */
export interface TeamStorageTable {
  team_id: string;
  outputs_bytes: number;
  inputs_bytes: number;
  uploads_bytes: number;
}

export interface Database {
  team_storage: TeamStorageTable;
  uploads: UploadsTable;
  teams: TeamsTable;
  api_keys: ApiKeysTable;
  users: UsersTable;
  sessions: SessionsTable;
  sign_in_links: SignInLinksTable;
  sign_in_failures: SignInFailuresTable;
  credit_ledger: CreditLedgerTable;
  credit_holds: CreditHoldsTable;
  credit_top_ups: CreditTopUpsTable;
  products: ProductsTable;
  brands: BrandsTable;
  avatars: AvatarsTable;
  settings: SettingsTable;
  style_templates: StyleTemplatesTable;
  caption_templates: CaptionTemplatesTable;
  generations: GenerationsTable;
  generation_products: GenerationProductsTable;
  generation_avatars: GenerationAvatarsTable;
  idempotency_keys: IdempotencyKeysTable;
  webhook_deliveries: WebhookDeliveriesTable;
  worker_heartbeats: WorkerHeartbeatsTable;
  voices: VoicesTable;
  voiceovers: VoiceoversTable;
  ad_library_brands: AdLibraryBrandsTable;
  ad_library_ads: AdLibraryAdsTable;
  ad_library_scrape_jobs: AdLibraryScrapeJobsTable;
  rate_limit_hits: RateLimitHitsTable;
  rate_buckets: RateBucketsTable;
  campaigns: CampaignsTable;
  campaign_rows: CampaignRowsTable;
  upstream_jobs: UpstreamJobsTable;
  kept_outputs: KeptOutputsTable;
  upstream_poll_budgets: UpstreamPollBudgetsTable;
  upstream_early_hooks: UpstreamEarlyHooksTable;
  engine_breakers: EngineBreakersTable;
  upstream_job_events: UpstreamJobEventsTable;
}

export type Team = Selectable<TeamsTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type UserRow = Selectable<UsersTable>;
export type ProductRow = Selectable<ProductsTable>;
export type BrandRow = Selectable<BrandsTable>;
export type AvatarRow = Selectable<AvatarsTable>;
export type GenerationRow = Selectable<GenerationsTable>;
export type StyleTemplateRow = Selectable<StyleTemplatesTable>;
export type CaptionTemplateRow = Selectable<CaptionTemplatesTable>;
export type AdLibraryBrandRow = Selectable<AdLibraryBrandsTable>;
export type AdLibraryAdRow = Selectable<AdLibraryAdsTable>;
export type ScrapeJobRow = Selectable<AdLibraryScrapeJobsTable>;
export type CampaignRow = Selectable<CampaignsTable>;
export type CampaignRowRow = Selectable<CampaignRowsTable>;
export type VoiceRow = Selectable<VoicesTable>;
export type VoiceoverRow = Selectable<VoiceoversTable>;
export type WebhookDeliveryRow = Selectable<WebhookDeliveriesTable>;
export type UpstreamJobRow = Selectable<UpstreamJobsTable>;
export type EngineBreakerRow = Selectable<EngineBreakersTable>;
export type UpstreamJobEventRow = Selectable<UpstreamJobEventsTable>;
