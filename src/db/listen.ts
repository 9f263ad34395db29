import type pg from 'pg';

// The statements of a LISTEN/NOTIFY session, on one dedicated client (src/events/pg-events.ts
// owns the connection and its reconnects). Channel names are checked there before they get here.

const CHANNEL = /^[a-z_][a-z0-9_]{0,62}$/;

/** Quoting keeps Postgres from case-folding the name; the check keeps the quotes from being escaped. */
function quoted(channel: string): string {
  if (!CHANNEL.test(channel)) throw new TypeError(`invalid event channel name: ${JSON.stringify(channel)}`);
  return `"${channel}"`;
}

export const isChannelName = (channel: string): boolean => CHANNEL.test(channel);

export async function backendPid(client: pg.Client): Promise<number | undefined> {
  const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
  return rows[0]?.pid;
}

export async function listen(client: pg.Client, channel: string, on: boolean): Promise<void> {
  await client.query(`${on ? 'LISTEN' : 'UNLISTEN'} ${quoted(channel)}`);
}

export async function notify(client: pg.Client, channel: string, text: string): Promise<void> {
  await client.query('select pg_notify($1, $2)', [channel, text]);
}

export async function listeningChannels(client: pg.Client): Promise<string[]> {
  const { rows } = await client.query<{ channel: string }>('select pg_listening_channels() as channel');
  return rows.map((r) => r.channel);
}
