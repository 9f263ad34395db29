import { parseCrontab, type JobHelpers } from 'graphile-worker';
import { describe, expect, it, vi } from 'vitest';
import type { Config } from '../../src/config.ts';
import type { Db } from '../../src/db/pool.ts';
import { jobSpec, queueJob } from '../../src/jobs/define.ts';
import { runGenerationJob } from '../../src/jobs/run-generation.ts';
import { CRONS, TASKS, crontab, taskList } from '../../tasks/index.ts';
import type { JobContext } from '../../tasks/task-context.ts';

const ID = '11111111-1111-4111-8111-111111111111';

function context() {
  return {
    generationRunner: { run: vi.fn(async () => {}) },
    scrapeRunner: { run: vi.fn(async () => {}) },
    campaignRunner: { run: vi.fn(async () => {}) },
    webhooks: { deliverFor: vi.fn(async () => {}) },
    maintenance: {
      sweepOverdueGenerations: vi.fn(async () => [ID]),
      purgeIdempotencyKeys: vi.fn(async () => 0),
      purgeRateLimitHits: vi.fn(async () => 0),
      pruneSignInState: vi.fn(async () => {}),
      purgeAuditLog: vi.fn(async () => 0),
    },
    upstream: { poll: vi.fn(async () => {}) },
    workerLiveness: { releasedByShutdown: vi.fn(async () => {}), afterOutage: vi.fn(async () => true) },
    storedFiles: { deleteFiles: vi.fn(async () => {}) },
    uploads: { deleteExpired: vi.fn(async () => 0) },
    teamExports: { run: vi.fn(async () => {}) },
    retention: { run: vi.fn(async () => ({ generations: 0, batches: 1, ad_media: 0, files: 0 })) },
  } satisfies JobContext;
}
const helpers = (attempts = 1, max = 3, abortSignal = new AbortController().signal) => ({ job: { id: '42', attempts, max_attempts: max }, abortSignal, logger: { warn: vi.fn() } }) as unknown as JobHelpers;

describe('job definitions', () => {
  it('have unique names, and the crontab is read off the cron definitions', () => {
    const names = [...TASKS.map((t) => t.job), ...CRONS].map((j) => j.name);
    expect(new Set(names).size).toBe(names.length);
    expect(crontab().split('\n')).toEqual([
      '* * * * * sweep_generations ?priority=-10',
      '17 * * * * purge_idempotency_keys ?priority=-10',
      '23 * * * * purge_rate_limit_hits ?priority=-10',
      '29 * * * * prune_sign_in_state ?priority=-10',
      '53 4 * * * purge_audit_log ?priority=-10',
      '41 3 * * * expire_stored_files ?priority=-10',
      '47 * * * * expire_uploads ?priority=-10',
    ]);
  });

  it("the crontab graphile-worker reads puts every cron's job ahead of the queue's (priority 0): the sweeper never waits behind a backlog", () => {
    const items = parseCrontab(crontab());
    expect(items.map((i) => i.task)).toEqual(CRONS.map((c) => c.name));
    for (const item of items) expect(item.options.priority).toBeLessThan(0);
  });

  it('jobs that finish paid or awaited work (a look upstream, a delivery) go before new renders, after maintenance', () => {
    const priority = Object.fromEntries(TASKS.map(({ job }) => [job.name, job.options.priority ?? 0]));
    expect(priority).toEqual({ run_generation: 0, poll_upstream: -5, deliver_webhook: -5, run_campaign: 0, scrape_ad_library: 0, delete_stored_files: 0, export_team: 0 });
    for (const item of parseCrontab(crontab())) expect(item.options.priority).toBeLessThan(priority.poll_upstream!);
  });

  it('the task list checks each payload against its definition before the handler runs', async () => {
    const ctx = context();
    const tasks = taskList(ctx);
    expect(Object.keys(tasks).sort()).toEqual([...TASKS.map((t) => t.job), ...CRONS].map((j) => j.name).sort());
    await tasks.run_generation!({ generation_id: ID }, helpers(2, 5));
    expect(ctx.generationRunner.run).toHaveBeenCalledWith(ID, { number: 2, max: 5 }, expect.any(AbortSignal));
    await expect(tasks.run_generation!({ generation_id: 'nope' }, helpers()) as Promise<unknown>).rejects.toThrow();
    await expect(tasks.deliver_webhook!({}, helpers()) as Promise<unknown>).rejects.toThrow();
    expect(ctx.webhooks.deliverFor).not.toHaveBeenCalled();
    await tasks.run_campaign!({ campaign_id: ID }, helpers());
    expect(ctx.campaignRunner.run).toHaveBeenCalledWith(ID);
    await tasks.sweep_generations!({ _cron: {} }, helpers());
    expect(ctx.maintenance.sweepOverdueGenerations).toHaveBeenCalled();
    await tasks.prune_sign_in_state!({ _cron: {} }, helpers());
    expect(ctx.maintenance.pruneSignInState).toHaveBeenCalled();
    await tasks.expire_uploads!({ _cron: {} }, helpers());
    expect(ctx.uploads.deleteExpired).toHaveBeenCalled();
    await tasks.purge_audit_log!({ _cron: {} }, helpers());
    expect(ctx.maintenance.purgeAuditLog).toHaveBeenCalled();
    await tasks.expire_stored_files!({ _cron: {} }, helpers());
    expect(ctx.retention.run).toHaveBeenCalled();
  });

  it('a job that fails because its worker is shutting down gives its attempt back; any other failure keeps it', async () => {
    const ctx = context();
    const tasks = taskList(ctx);
    const stopping = new AbortController();
    ctx.generationRunner.run.mockImplementation(async () => {
      throw new Error('render stopped');
    });
    await expect(tasks.run_generation!({ generation_id: ID }, helpers(1, 5)) as Promise<unknown>).rejects.toThrow('render stopped');
    expect(ctx.workerLiveness.releasedByShutdown).not.toHaveBeenCalled();
    stopping.abort();
    await expect(tasks.run_generation!({ generation_id: ID }, helpers(1, 5, stopping.signal)) as Promise<unknown>).rejects.toThrow('render stopped');
    expect(ctx.workerLiveness.releasedByShutdown).toHaveBeenCalledWith('42');
  });

  it('a job that failed on the database being away asks for its attempt back, unless it has only one (a delivery is never run twice)', async () => {
    const ctx = context();
    const tasks = taskList(ctx);
    const away = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    ctx.upstream.poll.mockRejectedValue(away);
    await expect(tasks.poll_upstream!({ upstream_job_id: ID }, helpers(3, 10)) as Promise<unknown>).rejects.toBe(away);
    expect(ctx.workerLiveness.afterOutage).toHaveBeenCalledWith('42', expect.any(AbortSignal));
    ctx.webhooks.deliverFor.mockRejectedValue(away);
    await expect(tasks.deliver_webhook!({ generation_id: ID }, helpers(1, 1)) as Promise<unknown>).rejects.toBe(away);
    expect(ctx.workerLiveness.afterOutage).toHaveBeenCalledTimes(1);
    ctx.upstream.poll.mockRejectedValue(new Error('a bug'));
    await expect(tasks.poll_upstream!({ upstream_job_id: ID }, helpers(3, 10)) as Promise<unknown>).rejects.toThrow('a bug');
    expect(ctx.workerLiveness.afterOutage).toHaveBeenCalledTimes(1);
    expect(ctx.workerLiveness.releasedByShutdown).not.toHaveBeenCalled();
  });

  it('a producer cannot queue a payload its definition refuses, and attempts come from the config where the definition says so', async () => {
    const executed: unknown[] = [];
    // Only the statement's parameters matter here: no database is touched for a refused payload.
    const db = { executeQuery: async (q: { parameters: unknown[] }) => (executed.push(q.parameters), { rows: [] }), getExecutor: () => ({}) } as unknown as Db;
    await expect(queueJob(db, runGenerationJob, { generation_id: 'not-a-uuid' }, { config: { generationMaxAttempts: 4 } as Config })).rejects.toThrow();
    await expect(queueJob(db, runGenerationJob, { generation_id: ID })).rejects.toThrow(/configuration/);
    expect(executed).toEqual([]);
    expect(runGenerationJob.options.jobKey!({ generation_id: ID })).toBe(`generation:${ID}`);
  });

  it('a job spec (what the create statement writes for run_generation) is the contract applied: the payload checked, its attempts and key', () => {
    const config = { generationMaxAttempts: 4 } as Config;
    expect(jobSpec(runGenerationJob, { generation_id: ID }, { config })).toEqual({ identifier: 'run_generation', payload: { generation_id: ID }, maxAttempts: 4, jobKey: `generation:${ID}` });
    expect(() => jobSpec(runGenerationJob, { generation_id: 'not-a-uuid' }, { config })).toThrow();
    // Nothing beyond the schema reaches the queue.
    expect(jobSpec(runGenerationJob, { generation_id: ID, extra: 1 } as never, { config }).payload).toEqual({ generation_id: ID });
  });
});
