import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { generateApiKey } from '../../src/domain/api-keys.ts';
import { createLogger, REDACT_PATHS } from '../../src/log.ts';

function capture(level = 'info') {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, callback) {
      lines.push(String(chunk));
      callback();
    },
  });
  const log = createLogger(level, stream);
  const output = () => lines.join('');
  const records = () => output().trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
  return { log, output, records };
}

const apiKey = generateApiKey();
const webhookSecret = 'whsec_3b1f0c9e7d2a4f6b8c0e1d3f5a7b9c2e';
const password = 'hunter2-correct-horse';

describe('log redaction', () => {
  it('never writes the Authorization header of a logged request', () => {
    const { log, output, records } = capture();
    log.info({ req: { method: 'GET', url: '/api/v1/products', headers: { authorization: `Bearer ${apiKey}`, host: 'x' } } }, 'request');
    expect(output()).not.toContain(apiKey);
    expect(records()[0]).toMatchObject({ req: { method: 'GET', url: '/api/v1/products', headers: { authorization: '[redacted]', host: 'x' } } });
  });

  it('never writes a bare headers.authorization or authorization field', () => {
    const { log, output } = capture();
    log.info({ headers: { authorization: `Bearer ${apiKey}` } }, 'a');
    log.info({ authorization: `Bearer ${apiKey}` }, 'b');
    expect(output()).not.toContain(apiKey);
    expect(output().match(/\[redacted\]/g)).toHaveLength(2);
  });

  it('never writes a top-level key', () => {
    const { log, output, records } = capture();
    log.info({ key: apiKey, team: 'acme' }, 'created key');
    expect(output()).not.toContain(apiKey);
    expect(records()[0]).toMatchObject({ key: '[redacted]', team: 'acme', msg: 'created key' });
  });

  it('never writes a top-level webhook_secret', () => {
    const { log, output, records } = capture();
    log.info({ webhook_secret: webhookSecret }, 'webhook');
    expect(output()).not.toContain(webhookSecret);
    expect(output()).not.toContain('whsec_');
    expect(records()[0]).toMatchObject({ webhook_secret: '[redacted]' });
  });

  it('never writes key or webhook_secret nested one level', () => {
    const { log, output, records } = capture();
    log.info({ created: { id: 't1', key: apiKey, webhook_secret: webhookSecret } }, 'team created');
    expect(output()).not.toContain(apiKey);
    expect(output()).not.toContain(webhookSecret);
    expect(records()[0]).toMatchObject({ created: { id: 't1', key: '[redacted]', webhook_secret: '[redacted]' } });
  });

  it('never writes a password, top-level or nested one level', () => {
    const { log, output } = capture();
    log.info({ password }, 'a');
    log.info({ user: { password } }, 'b');
    expect(output()).not.toContain(password);
  });

  it('never writes secrets passed as child-logger bindings', () => {
    const { log, output } = capture();
    log.child({ key: apiKey }).info({ created: { webhook_secret: webhookSecret } }, 'child');
    expect(output()).not.toContain(apiKey);
    expect(output()).not.toContain(webhookSecret);
  });

  it('never writes secrets at any enabled level', () => {
    const { log, output } = capture('trace');
    for (const level of ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const) {
      log[level]({ key: apiKey, created: { webhook_secret: webhookSecret } }, level);
    }
    expect(output().trim().split('\n')).toHaveLength(6);
    expect(output()).not.toContain(apiKey);
    expect(output()).not.toContain(webhookSecret);
  });

  it('keeps fields that are not secrets, such as image_key, and leaves the caller object untouched', () => {
    const { log, records } = capture();
    const payload = { image_key: 'products/abc.png', created: { key: apiKey, name: 'n' } };
    log.warn(payload, 'orphaned product image');
    expect(records()[0]).toMatchObject({ image_key: 'products/abc.png', created: { key: '[redacted]', name: 'n' } });
    expect(payload.created.key).toBe(apiKey);
  });

  it('covers the documented redaction paths', () => {
    expect(REDACT_PATHS).toEqual(
      expect.arrayContaining(['req.headers.authorization', 'key', '*.key', 'webhook_secret', '*.webhook_secret']),
    );
  });

  it('writes nothing below the configured level', () => {
    const { log, output } = capture('warn');
    log.info({ note: 'hidden' }, 'info line');
    expect(output()).toBe('');
  });
});
