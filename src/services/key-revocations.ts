import { KEY_REVOCATIONS_CHANNEL } from '../events/channels.ts';
import type { EventBus } from '../events/pg-events.ts';
import type { KeyCache } from './key-cache.ts';

const isRevocation = (p: unknown): p is { key_id: string } => typeof (p as { key_id?: unknown } | null)?.key_id === 'string';

/**
 * Keeps this node's key cache in step with revocations made anywhere (another API node, a worker,
 * the CLI). Resolves once listening; the returned function stops it.
 */
export async function followKeyRevocations(events: EventBus, cache: KeyCache): Promise<() => Promise<void>> {
  const sub = events.subscribe(KEY_REVOCATIONS_CHANNEL, isRevocation);
  void (async () => {
    for await (const { key_id } of sub) cache.forgetKey(key_id);
  })();
  await sub.ready;
  return async () => {
    await sub.return();
  };
}
