import { Writable } from 'node:stream';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReadiness } from '../../src/services/readiness.ts';
import { createLogger } from '../../src/log.ts';
import { startWorker } from '../../src/worker.ts';
import { startTestService, type TestService } from '../support/app.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ WORKER_HEARTBEAT_SECONDS: '0.5' });
});
afterAll(() => svc?.close());

/** A logger whose lines the test reads. */
function capturedLog() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  return { log: createLogger('info', sink), lines };
}

describe('GET /readyz', () => {
  it('an API process: ready when the database answers and every migration is applied', async () => {
    const res = await svc.api('GET', '/readyz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ready', checks: { database: 'ok', migrations: 'ok' } });
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('a migration not applied: 503 service_unavailable saying how many (named in the log only), with Retry-After, while /healthz stays 200', async () => {
    const pool = new pg.Pool({ connectionString: svc.databaseUrl, max: 1 });
    try {
      await pool.query(`delete from schema_migrations where name = '0010_dashboard_users.sql'`);
      const res = await svc.api('GET', '/readyz');
      expect(res.status).toBe(503);
      expect(res.headers['retry-after']).toBe('5');
      expect(res.body.error).toEqual({ code: 'service_unavailable', message: 'Not ready: migrations: 1 not applied' });
      expect(JSON.stringify(res.body)).not.toContain('0010_dashboard_users');
      expect(svc.logLines.some((l) => l.includes('0010_dashboard_users.sql'))).toBe(true);
      expect((await svc.api('GET', '/healthz')).status).toBe(200);
    } finally {
      await pool.query(`insert into schema_migrations (name) values ('0010_dashboard_users.sql')`);
      await pool.end();
    }
    expect((await svc.api('GET', '/readyz')).status).toBe(200);
  });

  it('a process running a worker: ready while its heartbeat is fresh, 503 once the worker stops beating', async () => {
    const worker = await startWorker(svc.app);
    try {
      const ready = await svc.api('GET', '/readyz');
      expect(ready.body).toEqual({ status: 'ready', checks: { database: 'ok', migrations: 'ok', worker: 'ok' } });
    } finally {
      await worker.stop();
    }
    await new Promise((r) => setTimeout(r, 1300));
    const res = await svc.api('GET', '/readyz');
    expect(res.status).toBe(503);
    expect(res.body.checks.worker).toMatch(/^last heartbeat \d+ s ago \(more than 1 s\)$/);
  });

  it('a database that does not answer: not ready, in generic words (the error itself only in the log), within the check\'s time limit', async () => {
    const dead = new pg.Pool({ connectionString: 'postgres://nobody@127.0.0.1:1/none', connectionTimeoutMillis: 5000 });
    const { log, lines } = capturedLog();
    try {
      const started = Date.now();
      const r = await createReadiness({ config: svc.app.config, log }, dead).check();
      expect(Date.now() - started).toBeLessThan(4000);
      expect(r.ready).toBe(false);
      // Anyone may ask /readyz: the driver's text (addresses, ports, names) is not theirs to read.
      expect(r.checks).toEqual({ database: 'unreachable', migrations: 'unknown' });
      expect(lines.some((l) => l.includes('ECONNREFUSED') && l.includes('readiness'))).toBe(true);
    } finally {
      await dead.end();
    }
  });

  it('a process shutting down says so: 503 draining, so a balancer stops sending it work', async () => {
    const readiness = createReadiness({ config: svc.app.config, log: capturedLog().log }, svc.app.database.pool);
    expect((await readiness.check()).ready).toBe(true);
    readiness.drain();
    const r = await readiness.check();
    expect(r.ready).toBe(false);
    expect(r.checks).toMatchObject({ database: 'ok', migrations: 'ok', shutdown: 'draining: this process is shutting down' });
  });
});
