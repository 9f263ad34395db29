import { TIERS, type Tier } from './tiers.ts';

const UNITS: Record<string, number> = { B: 1, KB: 1024, MB: 1024 ** 2, GB: 1024 ** 3, TB: 1024 ** 4 };

/**
 * `STORAGE_QUOTA_TIERS`: `tier=size` pairs, comma-separated, the size a whole number with a unit of
 * B, KB, MB, GB or TB (powers of 1024), e.g. `free=100MB,starter=10GB`. A tier not named has no quota.
 */
export function parseStorageQuotas(raw: string | undefined): Partial<Record<Tier, number>> {
  const out: Partial<Record<Tier, number>> = {};
  if (!raw?.trim()) return out;
  for (const part of raw.split(',')) {
    const m = /^\s*([a-z]+)\s*=\s*(\d{1,15})\s*(B|KB|MB|GB|TB)\s*$/i.exec(part);
    if (!m || !(TIERS as readonly string[]).includes(m[1]!)) {
      throw new Error(`STORAGE_QUOTA_TIERS: "${part.trim()}" is not tier=size (a whole number and B, KB, MB, GB or TB) with a tier of ${TIERS.join(', ')}`);
    }
    const bytes = Number(m[2]) * UNITS[m[3]!.toUpperCase()]!;
    if (!Number.isSafeInteger(bytes) || bytes < 1) throw new Error(`STORAGE_QUOTA_TIERS: "${part.trim()}" is out of range`);
    out[m[1] as Tier] = bytes;
  }
  return out;
}

/** A size as people read it: the largest unit it is a whole number of, else MB with one decimal. */
export function formatBytes(bytes: number): string {
  for (const unit of ['TB', 'GB', 'MB', 'KB'] as const) {
    if (bytes >= UNITS[unit]! && bytes % UNITS[unit]! === 0) return `${bytes / UNITS[unit]!} ${unit}`;
  }
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 ** 2) return `${(bytes / 1024).toFixed(1)} KB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 ** 2).toFixed(1)} MB`;
  return `${(bytes / 1024 ** 3).toFixed(2)} GB`;
}
