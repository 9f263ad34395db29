import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import { Agent, buildConnector } from 'undici';
import { policyFor, type AddressPolicy } from './address-policy.ts';

/** Raised (through undici's connect callback) when a host or its DNS answer is not allowed. */
export class BlockedAddressError extends Error {
  readonly code = 'ERR_BLOCKED_ADDRESS';

  constructor(host: string) {
    super(`connection to ${host} refused by address policy`);
    this.name = 'BlockedAddressError';
  }
}

export function isBlockedAddressError(e: unknown): boolean {
  if (e instanceof BlockedAddressError) return true;
  return e instanceof Error && e.cause !== undefined && isBlockedAddressError(e.cause);
}

export interface SafeDispatcherOptions {
  allowPrivate: boolean;
  connectTimeoutMs: number;
  /**
   * How long an answer's headers may take (undici's default is 5 minutes): a provider that answers
   * only when its work is done (an image API) needs as long as the caller waits.
   */
  headersTimeoutMs?: number;
  /** Overrides the rule derived from allowPrivate; tests use it to treat one loopback address as public. */
  policy?: AddressPolicy;
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * A `net.connect` lookup that resolves every address of the host and refuses the connection
 * if any of them fails the policy, so the address we check is the address we connect to
 * (no second resolution an attacker's DNS could answer differently).
 */
export function createCheckedLookup(policy: AddressPolicy) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      if (addresses.length === 0 || addresses.some((a) => !policy(a.address))) {
        return callback(new BlockedAddressError(hostname), []);
      }
      if (options.all) return callback(null, addresses);
      const first = addresses[0]!;
      callback(null, first.address, first.family);
    });
  };
}

/**
 * An undici Agent that only connects to addresses the policy allows. Node's net.connect
 * skips `lookup` entirely for IP-literal hosts, so those are checked here before connecting.
 */
export function createSafeDispatcher(options: SafeDispatcherOptions): Agent {
  const policy = options.policy ?? policyFor(options.allowPrivate);
  const connectChecked = buildConnector({
    timeout: options.connectTimeoutMs,
    lookup: createCheckedLookup(policy),
  });
  return new Agent({
    ...(options.headersTimeoutMs ? { headersTimeout: options.headersTimeoutMs } : {}),
    connect: (connectOptions, callback) => {
      // undici passes IPv6 literals without brackets.
      const host = connectOptions.hostname;
      if (isIP(host) !== 0 && !policy(host)) {
        callback(new BlockedAddressError(host), null);
        return;
      }
      connectChecked(connectOptions, callback);
    },
  });
}
