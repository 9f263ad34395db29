export const DEFAULT_PRIMARY = '#3b2f8f';
export const DEFAULT_ACCENT = '#e4572e';

/** Only `#rgb` / `#rrggbb` are accepted: anything else could break out of an SVG attribute. */
export function parseHex(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const v = value.trim().toLowerCase();
  if (/^#[0-9a-f]{6}$/.test(v)) return v;
  if (/^#[0-9a-f]{3}$/.test(v)) return `#${[...v.slice(1)].map((c) => c + c).join('')}`;
  return null;
}

type Rgb = [number, number, number];

function toRgb(hex: string): Rgb {
  const n = Number.parseInt(hex.slice(1), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

function toHex([r, g, b]: Rgb): string {
  return `#${[r, g, b].map((c) => Math.round(Math.min(255, Math.max(0, c))).toString(16).padStart(2, '0')).join('')}`;
}

/** Relative luminance 0..1 (sRGB weights, no gamma: enough to pick black or white text). */
export function luminance(hex: string): number {
  const [r, g, b] = toRgb(hex);
  return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
}

export function mix(a: string, b: string, t: number): string {
  const x = toRgb(a);
  const y = toRgb(b);
  return toHex([x[0] + (y[0] - x[0]) * t, x[1] + (y[1] - x[1]) * t, x[2] + (y[2] - x[2]) * t]);
}

/** Rotates the hue by `degrees` (YIQ rotation: cheap, keeps brightness roughly). */
export function rotateHue(hex: string, degrees: number): string {
  const [r, g, b] = toRgb(hex);
  const y = 0.299 * r + 0.587 * g + 0.114 * b;
  const i = 0.596 * r - 0.274 * g - 0.322 * b;
  const q = 0.211 * r - 0.523 * g + 0.312 * b;
  const a = (degrees * Math.PI) / 180;
  const i2 = i * Math.cos(a) - q * Math.sin(a);
  const q2 = i * Math.sin(a) + q * Math.cos(a);
  return toHex([y + 0.956 * i2 + 0.621 * q2, y - 0.272 * i2 - 0.647 * q2, y - 1.106 * i2 + 1.703 * q2]);
}

export interface Palette {
  from: string;
  to: string;
  /** Headline colour chosen for contrast with the gradient. */
  ink: string;
}

export function paletteFor(primary: string | null | undefined, accent: string | null | undefined, variant: number): Palette {
  const p = parseHex(primary) ?? DEFAULT_PRIMARY;
  const a = parseHex(accent) ?? DEFAULT_ACCENT;
  // Variant 0 is the brand as given; later ones swap and nudge the hues so each image reads differently.
  const shift = variant === 0 ? 0 : ((variant % 2 === 0 ? 1 : -1) * (12 + 9 * variant)) % 60;
  const [from, to] = variant % 2 === 1 ? [a, p] : [p, a];
  const f = rotateHue(from, shift);
  const t = rotateHue(to, -shift);
  const ink = luminance(mix(f, t, 0.5)) > 0.62 ? '#141414' : '#ffffff';
  return { from: f, to: t, ink };
}

/** Small deterministic PRNG (mulberry32): the same job renders the same picture. */
export function seededRandom(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function hashString(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
}
