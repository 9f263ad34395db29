import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { settingOnce } from '../../repositories/settings.ts';
import type { Deps } from '../deps.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The URLs providers call back on. A provider that signs its calls (fal, sync.so) gets
 * `/hooks/<provider>` and is checked by its signature. One whose per-request callback is not
 * signed in anything we could read (HeyGen's callback_url) gets a URL holding a token of that one
 * attempt: `<attempt id>.<HMAC-SHA256 of provider and attempt id under a secret only this service
 * holds>`. Only the provider was told the URL, a forged token fails the HMAC, and a token names
 * one attempt, so a leaked one can at most make that attempt be polled early.
 */
export function createCallbackTokens({ db, config }: Pick<Deps, 'db' | 'config'>) {
  let secret: Promise<string> | undefined;
  const key = () => (secret ??= settingOnce(db, 'provider_callback_secret', randomBytes(32).toString('hex')));
  const mac = async (provider: string, attemptId: string) => createHmac('sha256', await key()).update(`${provider}:${attemptId}`).digest('base64url');
  const base = () => config.upstream.callbackBaseUrl;

  return {
    providerUrl: (provider: string): string | undefined => (base() ? `${base()}/hooks/${provider}` : undefined),
    async attemptUrl(provider: string, attemptId: string): Promise<string | undefined> {
      const b = base();
      return b ? `${b}/hooks/${provider}/${attemptId}.${await mac(provider, attemptId)}` : undefined;
    },
    /** The attempt a callback token names, or undefined when the token is not ours. */
    async attemptOf(provider: string, token: string): Promise<string | undefined> {
      const dot = token.indexOf('.');
      const attemptId = token.slice(0, dot);
      if (dot < 0 || !UUID.test(attemptId)) return undefined;
      const given = Buffer.from(token.slice(dot + 1));
      const expected = Buffer.from(await mac(provider, attemptId));
      return given.length === expected.length && timingSafeEqual(given, expected) ? attemptId : undefined;
    },
  };
}
