import { describe, expect, it } from 'vitest';
import { newestOnly } from '../../web/src/components/newest-only.ts';

function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

describe('a list page keeps only the newest answer', () => {
  it('an earlier question answered last does not replace the newer answer (the unfiltered page after the filtered one)', async () => {
    const track = newestOnly();
    const shown: string[] = [];
    const unfiltered = deferred<string>();
    const filtered = deferred<string>();
    const first = track(unfiltered.promise, (v) => shown.push(v), () => shown.push('error'));
    const second = track(filtered.promise, (v) => shown.push(v), () => shown.push('error'));
    filtered.resolve('revocations only');
    await second;
    unfiltered.resolve('every line');
    await first;
    expect(shown).toEqual(['revocations only']);
  });

  it("an earlier question's failure is dropped too; the newest one's answer or failure is used", async () => {
    const track = newestOnly();
    const shown: string[] = [];
    const a = deferred<string>();
    const b = deferred<string>();
    const first = track(a.promise, (v) => shown.push(v), () => shown.push('error a'));
    const second = track(b.promise, (v) => shown.push(v), (e) => shown.push(`error ${String(e)}`));
    a.reject(new Error('late'));
    await first;
    b.reject('b');
    await second;
    expect(shown).toEqual(['error b']);
    // A later call becomes the newest and is used.
    await track(Promise.resolve('again'), (v) => shown.push(v), () => {});
    expect(shown).toEqual(['error b', 'again']);
  });
});
