/** Where the headline and the media cards go on a poster; the variant moves them around. */

export interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
}

export function rotate<T>(items: T[], by: number): T[] {
  if (items.length < 2) return items;
  const k = by % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

export function split(c: Box, hasMedia: boolean, landscape: boolean, variant: number, hero: boolean, m: number) {
  const gap = Math.round(m * 0.6);
  if (!hasMedia) {
    // Text alone: a band whose position (top, middle, bottom) depends on the variant.
    const h = Math.round(c.h * 0.5);
    const y = c.y + Math.round(((c.h - h) / 2) * (variant % 3));
    return { textBox: { x: c.x, y, w: c.w, h }, mediaBox: null };
  }
  if (landscape) {
    const tw = Math.round((c.w - gap) * (hero ? 0.4 : 0.45));
    const mw = c.w - gap - tw;
    const textLeft = variant % 2 === 0;
    return {
      textBox: { x: textLeft ? c.x : c.x + mw + gap, y: c.y, w: tw, h: c.h },
      mediaBox: { x: textLeft ? c.x + tw + gap : c.x, y: c.y, w: mw, h: c.h },
    };
  }
  const th = Math.round((c.h - gap) * (hero ? 0.28 : 0.34));
  const mh = c.h - gap - th;
  const textTop = variant % 2 === 0;
  return {
    textBox: { x: c.x, y: textTop ? c.y : c.y + mh + gap, w: c.w, h: th },
    mediaBox: { x: c.x, y: textTop ? c.y + th + gap : c.y, w: c.w, h: mh },
  };
}

export function grid(box: Box, n: number, gap: number): Box[] {
  if (n === 0) return [];
  const wide = box.w >= box.h;
  const cols = n === 1 ? 1 : n === 2 ? (wide ? 2 : 1) : 2;
  const rows = Math.ceil(n / cols);
  const cw = Math.floor((box.w - gap * (cols - 1)) / cols);
  const ch = Math.floor((box.h - gap * (rows - 1)) / rows);
  return Array.from({ length: n }, (_, i) => ({
    x: box.x + (i % cols) * (cw + gap),
    y: box.y + Math.floor(i / cols) * (ch + gap),
    w: cw,
    h: ch,
  }));
}
