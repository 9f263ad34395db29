// One change event reaches every subscription that follows it on this node: the bus hands the same
// event object to each of them. These helpers make that fan-out cost one read per event and keep the
// writes to a thousand sockets from holding the event loop in one burst.

/** Subscribers of one event that write their answer in one turn of the event loop. */
export const FAN_OUT_SLICE = 100;

const reads = new WeakMap<object, Map<string, Promise<unknown>>>();

/**
 * The row an event points at, read once per event and team and shared by that team's subscribers
 * (a thousand of them cost one query, not a thousand). The team is part of the key, so a read is
 * never handed to a subscriber of another team; each subscription was authorized when it opened
 * and the bus only gives it its own team's events.
 */
export function readOnce<T>(event: object, teamId: string, read: () => Promise<T>): Promise<T> {
  let byTeam = reads.get(event);
  if (!byTeam) reads.set(event, (byTeam = new Map()));
  let pending = byTeam.get(teamId) as Promise<T> | undefined;
  if (!pending) byTeam.set(teamId, (pending = read()));
  return pending;
}

const turns = new WeakMap<object, { taken: number; slices: Array<Promise<void>> }>();

/**
 * Waits for this subscriber's turn to write an event: the first FAN_OUT_SLICE subscribers to ask go at
 * once, the next ones a turn of the event loop later, and so on. Without it the shared read resolves
 * every subscriber in one run of microtasks, and a thousand TLS writes hold the thread for their whole
 * duration (creates, job pickups and other answers wait behind them); with it they interleave.
 */
export function takeTurn(event: object): Promise<void> | undefined {
  let t = turns.get(event);
  if (!t) turns.set(event, (t = { taken: 0, slices: [] }));
  const slice = Math.floor(t.taken++ / FAN_OUT_SLICE);
  if (slice === 0) return undefined;
  for (let k = t.slices.length + 1; k <= slice; k++) {
    const before = t.slices[k - 2] ?? Promise.resolve();
    t.slices.push(before.then(() => new Promise<void>((resolve) => setImmediate(resolve))));
  }
  return t.slices[slice - 1];
}
