import { describe, expect, it } from 'vitest';
import { FAN_OUT_SLICE, readOnce, takeTurn } from '../../src/http/graphql/fan-out.ts';

describe('readOnce', () => {
  it('reads once per event and team; another team or another event reads anew', async () => {
    const reads: string[] = [];
    const read = (what: string) => () => (reads.push(what), Promise.resolve(what));
    const event = { id: 'g' };
    const answers = await Promise.all([readOnce(event, 'a', read('a1')), readOnce(event, 'a', read('a2')), readOnce(event, 'b', read('b1')), readOnce({ id: 'g' }, 'a', read('a3'))]);
    expect(answers).toEqual(['a1', 'a1', 'b1', 'a3']);
    expect(reads).toEqual(['a1', 'b1', 'a3']);
  });
});

describe('takeTurn', () => {
  it('lets one slice of subscribers through per turn of the event loop, other work going between the slices', async () => {
    const event = {};
    // Counts turns of the event loop while the subscribers wait.
    let turn = 0;
    let ticking = true;
    const tick = () => ticking && (turn++, setImmediate(tick));
    setImmediate(tick);
    const went: Array<{ slice: number; turn: number }> = [];
    const waits = Array.from({ length: FAN_OUT_SLICE * 2 + 5 }, async (_, i) => {
      await takeTurn(event);
      went.push({ slice: Math.floor(i / FAN_OUT_SLICE), turn });
    });
    // Work that arrives while the event is being fanned out runs before the last slices write.
    let otherAt = -1;
    setImmediate(() => (otherAt = went.length));
    await Promise.all(waits);
    ticking = false;
    const turnsOf = (slice: number) => [...new Set(went.filter((w) => w.slice === slice).map((w) => w.turn))];
    expect(turnsOf(0)).toEqual([0]);
    expect(turnsOf(1)).toHaveLength(1);
    expect(turnsOf(2)).toHaveLength(1);
    expect(turnsOf(1)[0]!).toBeGreaterThan(0);
    expect(turnsOf(2)[0]!).toBeGreaterThan(turnsOf(1)[0]!);
    expect(went.filter((w) => w.slice === 0)).toHaveLength(FAN_OUT_SLICE);
    expect(went.filter((w) => w.slice === 2)).toHaveLength(5);
    expect(otherAt).toBe(FAN_OUT_SLICE);
  });
});
