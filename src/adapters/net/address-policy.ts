import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** Decides whether an outbound connection to `ip` is allowed. */
export type AddressPolicy = (ip: string) => boolean;

/**
 * True only for public unicast addresses. Everything ipaddr.js classifies otherwise
 * (private, loopback, link-local incl. 169.254.169.254, unique-local, CGNAT, multicast,
 * broadcast, reserved, NAT64, 6to4, Teredo, ...) is refused, as is anything that is not a
 * canonical IP literal: ipaddr.js would read inet_aton shorthands like "1.2.3" as 1.2.0.3.
 */
export function isAllowedAddress(ip: string): boolean {
  if (isIP(ip) === 0) return false;
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    addr = ipaddr.parse(ip);
  } catch {
    return false;
  }
  if (addr.kind() === 'ipv6') {
    const v6 = addr as ipaddr.IPv6;
    // ::ffff:a.b.c.d reaches the IPv4 host a.b.c.d, so judge the embedded address.
    if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().range() === 'unicast';
    // ipaddr.js calls the deprecated IPv4-compatible block ::/96 'unicast'; it is never public.
    if (v6.parts.slice(0, 6).every((part) => part === 0)) return false;
  }
  return addr.range() === 'unicast';
}

export const allowAnyAddress: AddressPolicy = () => true;

export function policyFor(allowPrivate: boolean): AddressPolicy {
  return allowPrivate ? allowAnyAddress : isAllowedAddress;
}
