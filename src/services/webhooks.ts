import { findActiveWebhook } from '../repositories/api-keys.ts';
import { findGenerationById } from '../repositories/generations.ts';
import { insertWebhookDelivery } from '../repositories/webhook-deliveries.ts';
import { deliverWebhook } from '../adapters/webhook-sender/deliver.ts';
import { webhookBody } from '../domain/webhook-payload.ts';
import type { Deps } from './context.ts';

/** One attempt to tell the key's webhook URL that a generation ended; every attempt is recorded. */
export function createWebhookService({ db, storage, config, log }: Pick<Deps, 'db' | 'storage' | 'config' | 'log'>) {
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
      const result = await deliverWebhook({
        url: key.webhook_url,
        secret: key.webhook_secret,
        body,
        eventId: `${g.id}:${body.event}`,
        allowPrivate: config.allowPrivateNetworkUrls,
      });
      await insertWebhookDelivery(db, {
        generation_id: g.id,
        api_key_id: g.api_key_id,
        event: body.event,
        url: key.webhook_url,
        ok: result.ok,
        status_code: result.statusCode,
        latency_ms: Math.round(result.latencyMs),
        error: result.error,
      });
      log.info({ generation_id: g.id, event: body.event, ok: result.ok, status_code: result.statusCode, latency_ms: result.latencyMs, error: result.error }, 'webhook attempt');
    },
  };
}
export type WebhookService = ReturnType<typeof createWebhookService>;
