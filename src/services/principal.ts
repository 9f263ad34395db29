/** Where a request came from: the client address as Fastify names it (TRUST_PROXY) and its User-Agent. */
export interface ClientInfo {
  ip?: string | null | undefined;
  user_agent?: string | null | undefined;
}

/**
 * Who is calling, passed to every team-scoped call: an API key (REST, GraphQL clients) or a
 * dashboard user's session (keyId null: what a session makes sends no key's webhooks).
 */
export interface Principal {
  teamId: string;
  keyId: string | null;
  userId?: string;
  /** Where the request came from, for the audit log (absent outside a request). */
  client?: ClientInfo | undefined;
}

/** A caller that came with an API key. */
export interface KeyPrincipal extends Principal {
  keyId: string;
}
