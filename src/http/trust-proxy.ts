import type http from 'node:http';
import net from 'node:net';

/**
 * TRUST_PROXY (config.trustProxy) in the two places that read forwarding headers: Fastify, for
 * request.ip (X-Forwarded-For, what the per-client sign-in limit counts), and the edge, for
 * X-Forwarded-Proto on plain HTTP. Never "every hop": that would let a client name its own address.
 */
export type TrustProxy = false | number | string[];

/** Fastify's trustProxy: hops counted from our side (the peer is hop 0), or the proxies' addresses. */
export function fastifyTrustProxy(trust: TrustProxy): false | string[] | ((address: string, hop: number) => boolean) {
  if (trust === false || Array.isArray(trust)) return trust;
  // Fastify takes a bare number as "trust nobody"; a function gives the hop count its meaning.
  return (_address, hop) => hop < trust;
}

/** Whether the connection's peer may speak for the client: any peer with a hop count, only a listed one with a list. */
export function peerTrust(trust: TrustProxy): (req: http.IncomingMessage) => boolean {
  if (trust === false) return () => false;
  if (!Array.isArray(trust)) return () => true;
  const list = new net.BlockList();
  for (const e of trust) {
    const [addr = '', bits] = e.split('/');
    const type = net.isIPv4(addr) ? 'ipv4' : 'ipv6';
    if (bits === undefined) list.addAddress(addr, type);
    else list.addSubnet(addr, Number(bits), type);
  }
  return (req) => {
    const raw = req.socket.remoteAddress ?? '';
    const peer = raw.startsWith('::ffff:') && net.isIPv4(raw.slice(7)) ? raw.slice(7) : raw;
    const family = net.isIP(peer);
    return family !== 0 && list.check(peer, family === 4 ? 'ipv4' : 'ipv6');
  };
}
