import { randomUUID } from 'node:crypto';
import { inSpan, SpanKind, SpanStatusCode } from '../observability/tracing.ts';
import { z } from 'zod';
import { AppError } from '../domain/errors.ts';
import { pageQuery, uuid } from '../domain/inputs.ts';
import { parseInput } from '../domain/validate.ts';
import { webhookBody } from '../domain/webhook-payload.ts';
import type { WebhookDeliveryRow } from '../db/types.ts';
import { deliverWebhook } from '../adapters/webhook-sender/deliver.ts';
import { findActiveWebhook } from '../repositories/api-keys.ts';
import { findGenerationById } from '../repositories/generations.ts';
import { findKeyDelivery, insertWebhookDelivery, listKeyDeliveries } from '../repositories/webhook-deliveries.ts';
import type { Deps } from './deps.ts';
import type { Principal } from './principal.ts';
import { isForeignKeyViolation, requireUuid } from './ids.ts';
import { paginated, type Paginated } from './paginated.ts';

export const deliveriesQuery = pageQuery.extend({
  generation_id: uuid.optional(),
  outcome: z.enum(['succeeded', 'failed'], { message: 'must be succeeded or failed' }).optional(),
});

/** One attempt as the key's owner sees it: where it went, what the receiver said, what was sent. */
export interface WebhookDelivery {
  id: string;
  event: string;
  event_id: string | null;
  generation_id: string | null;
  url: string;
  attempted_at: string;
  ok: boolean;
  status_code: number | null;
  error: string | null;
  latency_ms: number;
  /** The exact JSON text sent (null for attempts recorded before bodies were kept). */
  body: string | null;
  redelivery_of: string | null;
}

export const deliveryView = (d: WebhookDeliveryRow): WebhookDelivery => ({
  id: d.id,
  event: d.event,
  event_id: d.event_id,
  generation_id: d.generation_id,
  url: d.url,
  attempted_at: d.attempted_at.toISOString(),
  ok: d.ok,
  status_code: d.status_code,
  error: d.error,
  latency_ms: d.latency_ms,
  body: d.body,
  redelivery_of: d.redelivery_of,
});

/** One attempt to tell a key's webhook URL something; every attempt is recorded with what was sent. */
export function createWebhookService({ db, storage, config, log, metrics }: Pick<Deps, 'db' | 'storage' | 'config' | 'log' | 'metrics'>) {
  async function attempt(
    keyId: string,
    hook: { webhook_url: string; webhook_secret: string },
    sent: { event: string; eventId: string; body: string; generationId: string | null; redeliveryOf?: string },
  ): Promise<WebhookDeliveryRow> {
    const attributes = { 'adforge.event': sent.event, 'server.address': hostOf(hook.webhook_url), ...(sent.generationId ? { 'adforge.generation_id': sent.generationId } : {}) };
    const result = await inSpan('webhook.deliver', attributes, async (span) => {
      const r = await deliverWebhook({ url: hook.webhook_url, secret: hook.webhook_secret, body: sent.body, eventId: sent.eventId, allowPrivate: config.allowPrivateNetworkUrls });
      span.setAttribute('adforge.outcome', r.statusCode === null ? 'unsent' : String(r.statusCode));
      if (!r.ok) span.setStatus({ code: SpanStatusCode.ERROR, message: r.error ?? 'not delivered' });
      return r;
    }, { kind: SpanKind.CLIENT });
    const row = await insertWebhookDelivery(db, {
      generation_id: sent.generationId,
      api_key_id: keyId,
      event: sent.event,
      event_id: sent.eventId,
      body: sent.body,
      url: hook.webhook_url,
      ok: result.ok,
      status_code: result.statusCode,
      latency_ms: Math.round(result.latencyMs),
      error: result.error,
      redelivery_of: sent.redeliveryOf ?? null,
    }).catch((e: unknown) => {
      // The generation was deleted while its webhook was on the way: its records went with it.
      if (isForeignKeyViolation(e)) throw new AppError('not_found', 'Generation not found: it was deleted while its webhook was being sent');
      throw e;
    });
    metrics?.webhooks.deliveries.inc({ outcome: result.ok ? 'delivered' : 'failed' });
    log.info({ generation_id: sent.generationId, event: sent.event, ok: result.ok, status_code: result.statusCode, latency_ms: result.latencyMs, error: result.error }, 'webhook attempt');
    return row;
  }

  /** The deliveries of a webhook belong to a key: the dashboard names the key it shows. */
  function keyOf(p: Principal): string {
    if (!p.keyId) throw new AppError('validation_error', 'Webhooks belong to an API key: choose the key whose webhook to use');
    return p.keyId;
  }

  /** The calling key's webhook, or the 409 that says it has none to send to. */
  async function hookOf(p: Principal) {
    const hook = await findActiveWebhook(db, keyOf(p));
    if (!hook?.webhook_url) throw new AppError('conflict', 'This API key has no webhook URL: set one first (adforge key set-webhook)');
    return { webhook_url: hook.webhook_url, webhook_secret: hook.webhook_secret };
  }

  return {
    async deliverFor(generationId: string): Promise<void> {
      const g = await findGenerationById(db, generationId);
      if (!g || g.status === 'processing' || !g.completed_at || !g.api_key_id) return;
      const key = await findActiveWebhook(db, g.api_key_id);
      if (!key?.webhook_url) return;
      const firstKey = g.result_keys[0];
      const body = webhookBody({
        id: g.id,
        type: g.type,
        status: g.status,
        created_at: g.created_at,
        completed_at: g.completed_at,
        result_url: g.status === 'completed' && firstKey ? await storage.signedUrl(firstKey) : null,
        error: g.error,
      });
      try {
        await attempt(g.api_key_id, { webhook_url: key.webhook_url, webhook_secret: key.webhook_secret }, {
          event: body.event,
          eventId: `${g.id}:${body.event}`,
          body: JSON.stringify(body),
          generationId: g.id,
        });
      } catch (e) {
        if (!(e instanceof AppError && e.code === 'not_found')) throw e;
        log.info({ generation_id: g.id, event: body.event }, 'webhook sent for a generation deleted meanwhile: not recorded');
      }
    },

    /** The calling key's attempts, newest first, by generation and outcome. */
    async list(p: Principal, query: unknown): Promise<Paginated<WebhookDelivery>> {
      const q = parseInput(deliveriesQuery, query ?? {});
      const ok = q.outcome === undefined ? undefined : q.outcome === 'succeeded';
      const { rows, total } = await listKeyDeliveries(db, keyOf(p), { generationId: q.generation_id, ok }, q);
      return paginated(rows.map(deliveryView), total, q);
    },

    /**
     * A new single attempt of a recorded one: the same body and event id (receivers that drop
     * duplicates by id drop it), a new timestamp and signature, to the key's webhook URL now.
     */
    async redeliver(p: Principal, id: unknown): Promise<WebhookDelivery> {
      const original = await findKeyDelivery(db, keyOf(p), requireUuid(id));
      if (!original) throw new AppError('not_found', 'Webhook delivery not found');
      if (original.body === null || original.event_id === null) {
        throw new AppError('conflict', 'This attempt was recorded before bodies were kept, so it cannot be sent again');
      }
      const hook = await hookOf(p);
      const row = await attempt(keyOf(p), hook, { event: original.event, eventId: original.event_id, body: original.body, generationId: original.generation_id, redeliveryOf: original.id });
      return deliveryView(row);
    },

    /** A signed `webhook.test` event to the key's webhook URL, answering what the receiver said. */
    async sendTest(p: Principal): Promise<WebhookDelivery> {
      const hook = await hookOf(p);
      const eventId = `test:${randomUUID()}`;
      const body = JSON.stringify({ event: 'webhook.test', event_id: eventId, sent_at: new Date().toISOString(), message: 'A test event from adforge: this URL receives the webhooks of this API key.' });
      return deliveryView(await attempt(keyOf(p), hook, { event: 'webhook.test', eventId, body, generationId: null }));
    },
  };
}
export type WebhookService = ReturnType<typeof createWebhookService>;

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'invalid';
  }
}
