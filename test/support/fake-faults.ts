import type http from 'node:http';

/**
 * What a provider fake can be told to do with the next call of one kind, after the call passed its
 * contract (a fault a real server gives a request it understood):
 * - `status`: it refuses with that status (the provider's own error body when `body` is absent);
 *   nothing is made;
 * - `hang`: it makes the work (the provider bills it) and never answers: the client gives up;
 * - `reset`: it makes the work (billed), then the connection is cut before the answer;
 * - `delayMs`: it answers, that much later than it would;
 * - `answer`: it answers 200 with this body instead of its own (a refusal inside a success, say).
 */
export type Fault =
  | { status: number; body?: unknown; headers?: Record<string, string> }
  | { hang: true }
  | { reset: true }
  | { delayMs: number }
  | { answer: unknown };

/**
 * Faults queued per call name, each given once, in the order queued; `after` lets that many calls
 * of the kind pass first (the k-th image of a generation, say).
 */
export function createFaults<Call extends string>() {
  const queued = new Map<Call, Array<Fault | undefined>>();
  return {
    failNext(call: Call, fault: Fault, after = 0): void {
      queued.set(call, [...(queued.get(call) ?? []), ...Array<undefined>(after).fill(undefined), fault]);
    },
    take(call: Call): Fault | undefined {
      return queued.get(call)?.shift();
    },
  };
}

/** Holds an answer that is never sent: the client's own timeout ends it (or the fake's close). */
export function hang(res: http.ServerResponse): void {
  res.socket?.setTimeout(0);
}

/** Cuts the connection with no answer, as a reset after the provider accepted the request looks to the client. */
export function reset(res: http.ServerResponse): void {
  res.socket?.destroy();
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
