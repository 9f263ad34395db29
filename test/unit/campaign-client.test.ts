import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { graphqlEndpoint, unwrap, ApiError, type ApiClient } from '../../src/cli/campaign/api.ts';
import { batches } from '../../src/cli/campaign/batches.ts';
import { openCsv } from '../../src/cli/campaign/csv-read.ts';
import { followCampaign } from '../../src/cli/campaign/follow.ts';
import { CliError } from '../../src/cli/campaign/errors.ts';
import type { CampaignCounts } from '../../src/cli/campaign/server-calls.ts';
import { createProgress, progressLine } from '../../src/cli/campaign/progress.ts';
import { campaignRows, checkFile, defaultName, defaultOut } from '../../src/cli/campaign/run.ts';

async function* from<T>(items: T[]): AsyncGenerator<T> {
  yield* items;
}
const collect = async <T>(it: AsyncIterable<T>) => {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
};

describe('batches', () => {
  it('at most maxRows per batch', async () => {
    const got = await collect(batches(from([1, 2, 3, 4, 5, 6, 7]), () => 1, { maxRows: 3 }));
    expect(got).toEqual([[1, 2, 3], [4, 5, 6], [7]]);
  });
  it('at most maxBytes per batch; an item larger than that travels alone', async () => {
    const got = await collect(batches(from([40, 40, 30, 200, 10]), (n) => n, { maxBytes: 100 }));
    expect(got).toEqual([[40, 40], [30], [200], [10]]);
  });
  it('500 rows by default', async () => {
    const got = await collect(batches(from(Array.from({ length: 1201 }, (_, i) => i)), () => 10));
    expect(got.map((b) => b.length)).toEqual([500, 500, 201]);
  });
  it('nothing in, nothing out', async () => {
    expect(await collect(batches(from([]), () => 1))).toEqual([]);
  });
});

describe('--api-url', () => {
  it.each([
    ['https://api.example.com:8443', 'https://api.example.com:8443/graphql'],
    ['https://api.example.com:8443/', 'https://api.example.com:8443/graphql'],
    ['https://api.example.com:8443/graphql', 'https://api.example.com:8443/graphql'],
    ['https://api.example.com/api/v1', 'https://api.example.com/graphql'],
    ['https://example.com/adforge/', 'https://example.com/adforge/graphql'],
    ['https://127.0.0.1:9/graphql/?x=1', 'https://127.0.0.1:9/graphql'],
  ])('%s -> %s', (given, endpoint) => {
    expect(graphqlEndpoint(given).href).toBe(endpoint);
  });
  it.each(['localhost:8443', 'ftp://example.com', ''])('refuses %j with exit status 2', (given) => {
    const e = (() => {
      try {
        graphqlEndpoint(given);
      } catch (err) {
        return err;
      }
    })();
    expect(e).toBeInstanceOf(CliError);
    expect((e as CliError).exitCode).toBe(2);
  });
});

describe('defaults', () => {
  it('the campaign name is the file name without extension; results go beside the input', () => {
    expect(defaultName('/data/spring-sale.csv')).toBe('spring-sale');
    expect(defaultName('q3.launch.csv')).toBe('q3.launch');
    expect(defaultOut('/data/spring-sale.csv')).toBe('/data/spring-sale.results.csv');
    expect(defaultOut('/data/export.txt')).toBe('/data/export.results.csv');
  });
});

describe('mutation results', () => {
  it('unwrap gives the data of a success and throws an AppError as ApiError with its code', () => {
    expect(unwrap({ __typename: 'MutationStartCampaignSuccess', data: { id: 'x' } })).toEqual({ id: 'x' });
    expect(() => unwrap({ __typename: 'AppError', code: 'insufficient_credits', message: 'Not enough credits' })).toThrow(ApiError);
    try {
      unwrap({ __typename: 'AppError', code: 'insufficient_credits', message: 'Not enough credits' });
    } catch (e) {
      expect((e as ApiError).code).toBe('insufficient_credits');
    }
  });
});

describe('progress without a terminal', () => {
  afterEach(() => {
    vi.useRealTimers();
  });
  const counts = (done: number, extra: Partial<CampaignCounts> = {}): CampaignCounts => ({
    total: 10,
    pending: 0,
    submitted: 10,
    processing: 10 - done,
    completed: done,
    failed: 0,
    credits_estimate: 100,
    credits_spent: 100,
    ...extra,
  });

  it('one plain line at once, then at most one every 2 s, and the last one when it stops', () => {
    vi.useFakeTimers();
    const lines: string[] = [];
    const progress = createProgress({ tty: false, stream: { write: (s: string) => lines.push(s) }, now: () => Date.now() });
    progress.update(counts(0));
    progress.update(counts(1));
    progress.update(counts(2));
    expect(lines).toEqual([`${progressLine(counts(0))}\n`]);
    vi.advanceTimersByTime(2000);
    // The latest change shows when the interval ends, even with no further update.
    expect(lines).toEqual([`${progressLine(counts(0))}\n`, `${progressLine(counts(2))}\n`]);
    progress.update(counts(2));
    vi.advanceTimersByTime(5000);
    expect(lines).toHaveLength(2);
    progress.update(counts(9, { failed: 1, processing: 0 }));
    progress.stop();
    expect(lines.at(-1)).toBe('progress: 10/10 done | submitted 10 | processing 0 | completed 9 | failed 1 | credits spent 100\n');
    expect(lines).toHaveLength(3);
  });
});

describe('with a fake API', () => {
  /** An ApiClient whose gql answers by operation name. */
  const fakeApi = (answer: (query: string, variables: any) => unknown): ApiClient =>
    ({
      endpoint: new URL('https://example.test/graphql'),
      gql: async (query: string, variables: any) => answer(query, variables),
      subscribe: () => () => {},
      close: async () => {},
    }) as unknown as ApiClient;

  it('campaign rows are paged 100 at a time until the last page', async () => {
    const offsets: number[] = [];
    const api = fakeApi((_q, v) => {
      offsets.push(v.offset);
      const items = Array.from({ length: Math.max(0, Math.min(100, 250 - v.offset)) }, (_, i) => ({ row_number: v.offset + i + 2 }));
      return { campaign: { rows: { totalCount: 250, items } } };
    });
    const rows = await collect(campaignRows(api, 'c1'));
    expect(offsets).toEqual([0, 100, 200]);
    expect(rows.map((r) => r.row_number)).toEqual(Array.from({ length: 250 }, (_, i) => i + 2));
  });

  it("checkFile sums the server's prices by type and merges the client's own problems with the server's", async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'adforge-check-unit-'));
    try {
      const file = path.join(dir, 'c.csv');
      const lines = ['type,prompt,aspect_ratio'];
      for (let i = 0; i < 1205; i++) lines.push(i === 3 ? 'text-to-image,x,01:01:00 AM,stray' : `text-to-image,p${i},1:1`);
      await fs.writeFile(file, `${lines.join('\n')}\n`);
      const batchSizes: number[] = [];
      const api = fakeApi((_q, v) => {
        batchSizes.push(v.rows.length);
        return {
          checkCampaignRows: v.rows.map((r: any) =>
            r.cells.aspect_ratio === '1:1'
              ? { row_number: r.row_number, ok: true, type: 'text-to-image', row_key: null, credits: 2, problems: [] }
              : { row_number: r.row_number, ok: false, type: 'text-to-image', row_key: null, credits: null, problems: [{ field: 'aspect_ratio', message: 'must be W:H' }] },
          ),
        };
      });
      const s = await checkFile(api, await openCsv(file));
      expect(batchSizes).toEqual([500, 500, 205]);
      expect(s).toMatchObject({ rows: 1205, valid: 1204, invalid: 1, credits: 2408, moreProblems: 0 });
      expect(s.byType.get('text-to-image')).toEqual({ rows: 1204, credits: 2408 });
      expect(s.problems).toEqual([
        { row_number: 5, field: 'column D', message: 'is past the last column of the header row' },
        { row_number: 5, field: 'aspect_ratio', message: expect.stringMatching(/^must be W:H \(the cell holds "01:01:00 AM": the spreadsheet turned the ratio into a time/) },
      ]);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it('checkFile keeps at most 1000 problems and counts the rest', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'adforge-check-unit-'));
    try {
      const file = path.join(dir, 'bad.csv');
      await fs.writeFile(file, `type\n${'nope\n'.repeat(1500)}`);
      const api = fakeApi((_q, v) => ({
        checkCampaignRows: v.rows.map((r: any) => ({ row_number: r.row_number, ok: false, type: null, row_key: null, credits: null, problems: [{ field: 'type', message: 'must be one of ...' }] })),
      }));
      const s = await checkFile(api, await openCsv(file));
      expect(s).toMatchObject({ rows: 1500, invalid: 1500, valid: 0 });
      expect(s.problems).toHaveLength(1000);
      expect(s.moreProblems).toBe(500);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});

describe('following a campaign', () => {
  const state = (completed: number, finished = false) => ({
    id: 'c1',
    name: 'n',
    status: finished ? 'submitted' : 'running',
    finished,
    counts: { total: 3, pending: 0, submitted: 3, processing: 3 - completed, completed, failed: 0, credits_estimate: 3, credits_spent: 3 },
  });
  type Sink = { next: (d: unknown) => void; error: (e: Error) => void; complete: () => void };

  it('uses the subscription until the campaign has finished, without polling', async () => {
    let polled = 0;
    const api = {
      gql: async () => {
        polled++;
        return { campaign: state(0) };
      },
      subscribe: (_q: string, _v: unknown, sink: Sink) => {
        setTimeout(() => sink.next({ campaignUpdated: state(1) }), 5);
        setTimeout(() => sink.next({ campaignUpdated: state(3, true) }), 10);
        setTimeout(() => sink.complete(), 15);
        return () => {};
      },
    } as unknown as ApiClient;
    const seen: number[] = [];
    const notices: string[] = [];
    const done = await followCampaign(api, 'c1', { onUpdate: (c) => seen.push(c.counts.completed), onNotice: (m) => notices.push(m), pollMs: 10 }).done;
    expect(done.finished).toBe(true);
    expect(seen).toEqual([1, 3]);
    expect(polled).toBe(0);
    expect(notices).toEqual([]);
  });

  it('falls back to reading campaign(id) every pollMs when the subscription drops', async () => {
    const answers = [state(1), state(2), state(3, true)];
    let polled = 0;
    const api = {
      gql: async (query: string) => {
        expect(query).toMatch(/campaign\(id: \$id\)/);
        return { campaign: answers[Math.min(polled++, answers.length - 1)] };
      },
      subscribe: (_q: string, _v: unknown, sink: Sink) => {
        setTimeout(() => sink.next({ campaignUpdated: state(0) }), 1);
        setTimeout(() => sink.error(new Error('the WebSocket closed (1006)')), 5);
        return () => {};
      },
    } as unknown as ApiClient;
    const seen: number[] = [];
    const notices: string[] = [];
    const done = await followCampaign(api, 'c1', { onUpdate: (c) => seen.push(c.counts.completed), onNotice: (m) => notices.push(m), pollMs: 10 }).done;
    expect(done.counts.completed).toBe(3);
    expect(seen).toEqual([0, 1, 2, 3]);
    expect(polled).toBe(3);
    expect(notices).toEqual(['live updates stopped (the WebSocket closed (1006)); reading the campaign every 0.01 s']);
  });
});
