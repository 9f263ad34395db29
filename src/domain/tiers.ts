export const TIERS = ['free', 'starter', 'pro', 'business'] as const;
export type Tier = (typeof TIERS)[number];

export function hasApiAccess(tier: Tier): boolean {
  return TIERS.indexOf(tier) >= TIERS.indexOf('starter');
}

/** Used when a team is created without an explicit limit; our choice, the spec names no tier allowances. */
export const DEFAULT_CREDITS: Record<Tier, number> = {
  free: 0,
  starter: 1000,
  pro: 5000,
  business: 25000,
};
