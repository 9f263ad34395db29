import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** One task's jobs as the queue gauges show them; the caller reads them (repositories/jobs.ts jobCountsByTask). */
type JobCounts = { task: string; queued: number; running: number; failed: number; oldest_queued_seconds: number };

/**
 * Every Prometheus metric of a process, in its own registry (several apps in one test process
 * never share one). Counters count what this process did; gauges read the shared state (the job
 * queue, the pool) when scraped, so every process reports the same queue. It imports no layer:
 * the caller hands it the functions that read the shared state.
 */
export function createMetrics(sources: {
  /** The pool's counts (a pg Pool). */
  pool: { totalCount: number; idleCount: number; waitingCount: number };
  jobCounts: () => Promise<JobCounts[]>;
  breakers: () => Promise<{ provider: string; open: boolean }[]>;
  /** Subscriptions open on this process's event bus. */
  subscriptions: () => number;
  /** Stored bytes: every team's by kind, and the largest teams' totals (a bounded number of them). */
  storage?: () => Promise<{ totals: { outputs_bytes: number; inputs_bytes: number; uploads_bytes: number }; teams: { team_id: string; total_bytes: number }[] }>;
}) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'adforge_' });
  const http = {
    requests: new Counter({ name: 'adforge_http_requests_total', help: 'HTTP requests answered, by route pattern, method and status', labelNames: ['route', 'method', 'status'] as const, registers: [registry] }),
    duration: new Histogram({
      name: 'adforge_http_request_duration_seconds',
      help: 'Time from request to answer, by route pattern and method',
      labelNames: ['route', 'method'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
  };
  const generations = {
    created: new Counter({ name: 'adforge_generations_created_total', help: 'Generations accepted (charged), by type and model', labelNames: ['type', 'model'] as const, registers: [registry] }),
    ended: new Counter({ name: 'adforge_generations_ended_total', help: 'Generations that completed or failed, by type, model, engine (none: ended without one, as a cancel or a timeout) and status', labelNames: ['type', 'model', 'engine', 'status'] as const, registers: [registry] }),
    duration: new Histogram({
      name: 'adforge_generation_duration_seconds',
      help: 'From accepted to completed or failed, by type, engine and status',
      labelNames: ['type', 'engine', 'status'] as const,
      buckets: [1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800],
      registers: [registry],
    }),
  };
  const credits = {
    debited: new Counter({ name: 'adforge_credits_debited_total', help: 'Credits charged for generations', registers: [registry] }),
    refunded: new Counter({ name: 'adforge_credits_refunded_total', help: 'Credits given back for failed generations', registers: [registry] }),
  };
  const webhooks = {
    deliveries: new Counter({ name: 'adforge_webhook_deliveries_total', help: 'Webhook attempts, by outcome (delivered: a 2xx answer)', labelNames: ['outcome'] as const, registers: [registry] }),
  };
  const upstream = {
    calls: new Counter({ name: 'adforge_upstream_calls_total', help: 'Calls to AI providers, by provider, call (submit, poll) and outcome (ok, or the failure: transient, rate_limited, auth, refused, unsent_unknown)', labelNames: ['provider', 'call', 'outcome'] as const, registers: [registry] }),
  };
  new Gauge({
    name: 'adforge_upstream_breaker_open',
    help: "1 while a provider's circuit breaker is open (its submits skipped), else 0; from the shared table, so every process agrees",
    labelNames: ['provider'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      for (const b of await sources.breakers()) this.set({ provider: b.provider }, b.open ? 1 : 0);
    },
  });
  const events = {
    lag: new Histogram({
      name: 'adforge_event_bus_lag_seconds',
      help: 'From a generation change (its NOTIFY, sent in the changing transaction) to its arrival at this process',
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    }),
  };
  new Gauge({
    name: 'adforge_subscriptions_open',
    help: "Event subscriptions open in this process (GraphQL subscriptions, the worker's cancel watch)",
    registers: [registry],
    collect() {
      this.set(sources.subscriptions());
    },
  });
  const graphql = {
    operations: new Counter({ name: 'adforge_graphql_operations_total', help: 'GraphQL operations executed, by type and outcome (ok, or error when the result carries errors)', labelNames: ['type', 'outcome'] as const, registers: [registry] }),
  };
  new Gauge({
    name: 'adforge_db_pool_connections',
    help: 'PostgreSQL pool connections of this process: total open, idle, and requests waiting for one',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      this.set({ state: 'total' }, sources.pool.totalCount);
      this.set({ state: 'idle' }, sources.pool.idleCount);
      this.set({ state: 'in_use' }, sources.pool.totalCount - sources.pool.idleCount);
      this.set({ state: 'waiting' }, sources.pool.waitingCount);
    },
  });
  // One read of the queue per scrape, shared by the four gauges below (their collects run together).
  let counts: Promise<JobCounts[]> | undefined;
  const readCounts = () =>
    (counts ??= sources.jobCounts().finally(() => {
      counts = undefined;
    }));
  const jobGauge = (name: string, help: string, pick: (c: JobCounts) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['task'] as const,
      registers: [registry],
      async collect() {
        this.reset();
        for (const c of await readCounts()) this.set({ task: c.task }, pick(c));
      },
    });
  jobGauge('adforge_jobs_queued', 'Jobs waiting to run (due or scheduled), by task', (c) => c.queued);
  jobGauge('adforge_jobs_running', 'Jobs locked by a worker, by task', (c) => c.running);
  jobGauge('adforge_jobs_failed', 'Jobs that used up their attempts, by task', (c) => c.failed);
  // One read of the counters per scrape, shared by the two storage gauges.
  let storageRead: ReturnType<NonNullable<typeof sources.storage>> | undefined;
  const readStorage = () =>
    (storageRead ??= sources.storage!().finally(() => {
      storageRead = undefined;
    }));
  if (sources.storage) {
    new Gauge({
      name: 'adforge_storage_bytes',
      help: 'Bytes stored for all teams, by kind (outputs: results and voiceovers; inputs: input copies, product and avatar images; uploads)',
      labelNames: ['kind'] as const,
      registers: [registry],
      async collect() {
        const { totals } = await readStorage();
        this.set({ kind: 'outputs' }, totals.outputs_bytes);
        this.set({ kind: 'inputs' }, totals.inputs_bytes);
        this.set({ kind: 'uploads' }, totals.uploads_bytes);
      },
    });
    new Gauge({
      name: 'adforge_team_storage_bytes',
      help: 'Bytes a team stores (all kinds), for the STORAGE_METRIC_TEAMS teams storing the most',
      labelNames: ['team'] as const,
      registers: [registry],
      async collect() {
        this.reset();
        for (const t of (await readStorage()).teams) this.set({ team: t.team_id }, t.total_bytes);
      },
    });
  }
  jobGauge('adforge_jobs_oldest_queued_age_seconds', 'How long the oldest due job has waited, by task', (c) => c.oldest_queued_seconds);
  return { registry, http, graphql, generations, credits, webhooks, upstream, events };
}
export type Metrics = ReturnType<typeof createMetrics>;
