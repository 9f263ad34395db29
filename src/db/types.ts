import type { ColumnType, Generated, Selectable } from 'kysely';

type CreatedAt = ColumnType<Date, Date | string | undefined, never>;

export interface TeamsTable {
  id: Generated<string>;
  name: string;
  tier: 'free' | 'starter' | 'pro' | 'business';
  credits_limit: number;
  credits_used: Generated<number>;
  period_started_at: Generated<Date>;
  created_at: CreatedAt;
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

export interface ProductsTable {
  id: Generated<string>;
  team_id: string;
  name: string;
  description: string;
  category: string;
  image_key: string;
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
  image_source_url: string | null;
  created_at: CreatedAt;
}

export interface SettingsTable {
  name: string;
  value: string;
  created_at: CreatedAt;
}

export interface Database {
  teams: TeamsTable;
  api_keys: ApiKeysTable;
  credit_ledger: CreditLedgerTable;
  products: ProductsTable;
  brands: BrandsTable;
  avatars: AvatarsTable;
  settings: SettingsTable;
}

export type Team = Selectable<TeamsTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type ProductRow = Selectable<ProductsTable>;
export type BrandRow = Selectable<BrandsTable>;
export type AvatarRow = Selectable<AvatarsTable>;
