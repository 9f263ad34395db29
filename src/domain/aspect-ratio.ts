/** Both sides bounded so a ratio stays meaningful to upstream models and sizes stay sane. */
export const MAX_RATIO_TERM = 100;

export type Ratio = { readonly width: number; readonly height: number };

// No leading zeros, no spaces, no decimals: '16:9' and '4:5' pass, '016:9', '1.5:1' and '16 : 9' do not.
const RATIO = /^([1-9]\d{0,2}):([1-9]\d{0,2})$/;

/** `W:H` with whole numbers 1-100 on both sides, else null. 'auto' is not a ratio: callers decide. */
export function parseAspectRatio(text: string): Ratio | null {
  const m = RATIO.exec(text);
  if (!m) return null;
  const width = Number(m[1]);
  const height = Number(m[2]);
  if (width > MAX_RATIO_TERM || height > MAX_RATIO_TERM) return null;
  return { width, height };
}

export const ANY_RATIO = `a ratio W:H of whole numbers from 1 to ${MAX_RATIO_TERM}, e.g. 16:9 or 4:5`;
