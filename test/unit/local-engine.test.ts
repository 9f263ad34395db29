import { describe, expect, it } from 'vitest';
import { splitPhrases, timeCues } from '../../src/adapters/engines/local/captions.ts';
import { evenSize } from '../../src/adapters/engines/local/encode.ts';
import { languageName } from '../../src/adapters/engines/local/localize.ts';
import { paletteFor, parseHex } from '../../src/adapters/engines/local/palette.ts';
import { displayText, escapeXml, fitText, wrapText } from '../../src/adapters/engines/local/text.ts';
import { captionStyle } from '../../src/adapters/engines/local/video-edit.ts';

describe('local engine text', () => {
  it('wraps at word boundaries and ellipsizes what does not fit', () => {
    expect(wrapText('one two three four five', 9, 5)).toEqual(['one two', 'three', 'four five']);
    expect(wrapText('one two three four five', 9, 2)).toEqual(['one two', 'three…']);
    expect(wrapText('abcdefghijkl', 5, 5)).toEqual(['abcde', 'fghij', 'kl']);
  });

  it('shrinks the font until the text fits the box', () => {
    const long = 'word '.repeat(80);
    const fitted = fitText(long, 1000, 400, 120, 10);
    expect(fitted.fontSize).toBeLessThan(120);
    expect(fitted.lines.join(' ')).not.toContain('…');
    expect(fitText('Hi', 1000, 400, 120, 10)).toEqual({ fontSize: 120, lines: ['Hi'] });
  });

  it('keeps markup, control characters and test markers out of the picture', () => {
    expect(escapeXml(`<b>"A" & 'B'</b>`)).not.toMatch(/[<>"']|&(?!#)/);
    expect(displayText('a\u0000b\n c [[fail]] [[flaky]]')).toBe('a b c');
  });
});

describe('local engine palette', () => {
  it('accepts only hex colours', () => {
    expect(parseHex('#ABC')).toBe('#aabbcc');
    expect(parseHex('#123456')).toBe('#123456');
    expect(parseHex('red" onload="x')).toBeNull();
    expect(parseHex(42)).toBeNull();
  });

  it('keeps brand colours for the first variant and changes them for the others', () => {
    const first = paletteFor('#112233', '#ffeedd', 0);
    expect([first.from, first.to]).toEqual(['#112233', '#ffeedd']);
    const second = paletteFor('#112233', '#ffeedd', 1);
    expect(second).not.toEqual(first);
    expect(paletteFor(null, null, 0).from).toMatch(/^#[0-9a-f]{6}$/);
  });
});

describe('local engine captions and voice', () => {
  it('splits a script into short phrases at punctuation', () => {
    const phrases = splitPhrases('Hello there, friend. This is a rather long sentence that needs to be split up nicely!');
    expect(phrases[0]).toBe('Hello there,');
    expect(phrases[1]).toBe('friend.');
    expect(phrases[2]).toBe('This is a rather long sentence');
    for (const p of phrases) expect(p.split(' ').length).toBeLessThanOrEqual(6);
    expect(phrases.join(' ')).toBe('Hello there, friend. This is a rather long sentence that needs to be split up nicely!');
  });

  it('spreads cues over the duration in order, without overlap', () => {
    const cues = timeCues(['a short one', 'a much much longer phrase here', 'end'], 10);
    expect(cues[0]!.start).toBeCloseTo(0.2);
    expect(cues.at(-1)!.end).toBeCloseTo(9.8);
    for (let i = 1; i < cues.length; i++) expect(cues[i]!.start).toBeCloseTo(cues[i - 1]!.end);
    expect(cues[1]!.end - cues[1]!.start).toBeGreaterThan(cues[0]!.end - cues[0]!.start);
  });

});

describe('local engine video helpers', () => {
  it('reads the caption template fields it knows', () => {
    const style = captionStyle({ font_size: 108, color: '#FF0000', uppercase: true, position: 'middle', background_color: 'none' }, 1080, 1920);
    expect(style).toMatchObject({ fontSize: 108, color: '#ff0000', uppercase: true, position: 'center', box: null, stroke: '#000000' });
    expect(captionStyle(undefined, 1080, 1920).position).toBe('bottom');
  });

  it('names languages and rounds frame sizes to even numbers', () => {
    expect(languageName('es')).toBe('Spanish (ES)');
    expect(languageName('')).toBe('another language');
    expect(evenSize(721)).toBe(720);
    expect(evenSize(720)).toBe(720);
  });
});
