import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signBody, verifySignature, webhookBody, type FinishedGeneration } from '../../src/domain/webhook-payload.ts';

const secret = 'whsec_test_4f9d2c';
const base = {
  id: '7d0c3f0e-5b7a-4c55-9a57-0b6f9b1d2e3f',
  type: 'text-to-image',
  created_at: new Date('2025-03-01T10:00:00.000Z'),
  completed_at: new Date('2025-03-01T10:01:30.250Z'),
} as const;

describe('webhookBody', () => {
  it('builds exactly the spec body for generation.completed, in the spec key order', () => {
    const body = webhookBody({
      ...base,
      status: 'completed',
      result_url: 'https://files.example.com/r.png?sig=abc',
      // Present on the row but not part of a completed event.
      error: 'stale error from an earlier attempt',
    });
    expect(JSON.stringify(body)).toBe(
      '{"event":"generation.completed","generation_id":"7d0c3f0e-5b7a-4c55-9a57-0b6f9b1d2e3f",' +
        '"type":"text-to-image","status":"completed","created_at":"2025-03-01T10:00:00.000Z",' +
        '"completed_at":"2025-03-01T10:01:30.250Z","result_url":"https://files.example.com/r.png?sig=abc"}',
    );
    expect(Object.keys(body)).toEqual([
      'event',
      'generation_id',
      'type',
      'status',
      'created_at',
      'completed_at',
      'result_url',
    ]);
  });

  it('builds exactly the spec body for generation.failed, in the spec key order', () => {
    const body = webhookBody({
      ...base,
      type: 'edit',
      status: 'failed',
      error: 'the upstream model refused the prompt',
      result_url: 'https://files.example.com/should-not-appear.png',
    });
    expect(JSON.stringify(body)).toBe(
      '{"event":"generation.failed","generation_id":"7d0c3f0e-5b7a-4c55-9a57-0b6f9b1d2e3f",' +
        '"type":"edit","status":"failed","created_at":"2025-03-01T10:00:00.000Z",' +
        '"completed_at":"2025-03-01T10:01:30.250Z","error_message":"the upstream model refused the prompt"}',
    );
    expect(Object.keys(body)).toEqual([
      'event',
      'generation_id',
      'type',
      'status',
      'created_at',
      'completed_at',
      'error_message',
    ]);
  });

  it('copies only the listed fields, whatever else the generation row carries', () => {
    const row = { ...base, status: 'failed', error: 'boom', team_id: 'secret-team', cost: 4 } as FinishedGeneration;
    expect(webhookBody(row)).toEqual({
      event: 'generation.failed',
      generation_id: base.id,
      type: 'text-to-image',
      status: 'failed',
      created_at: '2025-03-01T10:00:00.000Z',
      completed_at: '2025-03-01T10:01:30.250Z',
      error_message: 'boom',
    });
  });

  it('keeps error_message a string when a failed generation has no message', () => {
    expect(webhookBody({ ...base, status: 'failed', error: null })).toMatchObject({ error_message: 'generation failed' });
    expect(webhookBody({ ...base, status: 'failed' })).toMatchObject({ error_message: 'generation failed' });
  });

  it('refuses a completed generation without a result_url rather than break the contract', () => {
    expect(() => webhookBody({ ...base, status: 'completed', result_url: null })).toThrow(/result_url/);
    expect(() => webhookBody({ ...base, status: 'completed' })).toThrow(/result_url/);
  });
});

describe('signBody / verifySignature', () => {
  // Non-ASCII on purpose: the signature is over UTF-8 bytes, not UTF-16 code units.
  const raw = JSON.stringify(webhookBody({ ...base, status: 'failed', error: 'Zeitüberschreitung – 🚫' }));

  it('equals an independent HMAC-SHA256 over the raw bytes, as lowercase hex', () => {
    const independent = createHmac('sha256', secret).update(Buffer.from(raw, 'utf8')).digest('hex');
    expect(signBody(raw, secret)).toBe(independent);
    expect(signBody(Buffer.from(raw, 'utf8'), secret)).toBe(independent);
    expect(independent).toMatch(/^[0-9a-f]{64}$/);
  });

  it('refuses to sign with an empty secret', () => {
    expect(() => signBody(raw, '')).toThrow(RangeError);
  });

  it('verifies a genuine signature over the same bytes, as string or Buffer', () => {
    const signature = signBody(raw, secret);
    expect(verifySignature(raw, secret, signature)).toBe(true);
    expect(verifySignature(Buffer.from(raw, 'utf8'), secret, signature)).toBe(true);
    expect(verifySignature(raw, secret, signature.toUpperCase())).toBe(true);
  });

  it('rejects a tampered body, a wrong secret and a flipped signature digit', () => {
    const signature = signBody(raw, secret);
    expect(verifySignature(raw.replace('failed', 'completed'), secret, signature)).toBe(false);
    expect(verifySignature(`${raw} `, secret, signature)).toBe(false);
    expect(verifySignature(raw, `${secret}x`, signature)).toBe(false);
    const flipped = (signature[0] === '0' ? '1' : '0') + signature.slice(1);
    expect(verifySignature(raw, secret, flipped)).toBe(false);
  });

  it('returns false, never throws, for short, long, non-hex, missing or repeated signatures', () => {
    const signature = signBody(raw, secret);
    for (const bad of [
      signature.slice(0, 63),
      signature.slice(0, 32),
      `${signature}00`,
      '',
      `${signature.slice(0, 62)}zz`,
      `sha256=${signature}`,
      undefined,
      [signature, signature],
    ]) {
      expect(() => verifySignature(raw, secret, bad)).not.toThrow();
      expect(verifySignature(raw, secret, bad)).toBe(false);
    }
    expect(verifySignature(raw, '', signature)).toBe(false);
  });
});

describe('standardWebhookSignature', () => {
  it('matches the standardwebhooks package for the same id, timestamp, body and secret', async () => {
    const { Webhook } = await import('standardwebhooks');
    const { standardWebhookSignature } = await import('../../src/domain/webhook-payload.ts');
    const keySecret = `whsec_${Buffer.from('a fixed 32-byte key for the test').toString('base64')}`;
    for (const [id, ts, body] of [
      ['msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}'],
      ['0b6f1c2e-1a2b-4c3d-9e8f-001122334455', 1764000000, JSON.stringify({ event: 'generation.failed', error_message: 'Übersetzung — 🚫' })],
    ] as const) {
      expect(standardWebhookSignature(id, ts, body, keySecret)).toBe(new Webhook(keySecret).sign(id, new Date(ts * 1000), body));
    }
    expect(() => standardWebhookSignature('id', 1, '{}', 'whsec_')).toThrow(RangeError);
  });
});
