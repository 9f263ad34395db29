import type { ApiClient } from './api.ts';
import { ApiError } from './api.ts';
import { CAMPAIGN_SUBSCRIPTION, getCampaign, type CampaignState } from './server-calls.ts';

export interface FollowOptions {
  onUpdate: (c: CampaignState) => void;
  /** Said once when live updates stop and polling takes over. */
  onNotice: (message: string) => void;
  /** Polling interval once the subscription is gone (2 s). */
  pollMs?: number;
  /** With no event for this long, the campaign is read once over HTTP anyway (events can be missed). */
  quietMs?: number;
}

/**
 * Follows a campaign until it has finished: the `campaignUpdated` subscription over graphql-ws,
 * and if that drops (or cannot be opened), `campaign(id)` every 2 s. Resolves with the finished
 * campaign; rejects only when the server cannot be read at all.
 */
export function followCampaign(api: ApiClient, id: string, opts: FollowOptions): { done: Promise<CampaignState>; stop: () => void } {
  const pollMs = opts.pollMs ?? 2000;
  const quietMs = opts.quietMs ?? 20_000;
  let stopped = false;
  let polling = false;
  let lastSeen = Date.now();
  let unsubscribe: (() => void) | undefined;
  let pollTimer: NodeJS.Timeout | undefined;
  let watchdog: NodeJS.Timeout | undefined;
  let resolveDone!: (c: CampaignState) => void;
  let rejectDone!: (e: unknown) => void;
  const done = new Promise<CampaignState>((resolve, reject) => {
    resolveDone = resolve;
    rejectDone = reject;
  });

  const stop = () => {
    if (stopped) return;
    stopped = true;
    clearTimeout(pollTimer);
    clearInterval(watchdog);
    unsubscribe?.();
  };
  const seen = (c: CampaignState) => {
    if (stopped) return;
    lastSeen = Date.now();
    opts.onUpdate(c);
    if (c.finished) {
      stop();
      resolveDone(c);
    }
  };
  const fail = (e: unknown) => {
    if (stopped) return;
    stop();
    rejectDone(e);
  };
  const readOnce = async () => {
    try {
      const c = await getCampaign(api, id);
      if (!c) fail(new ApiError('not_found', `campaign ${id} not found`));
      else seen(c);
    } catch (e) {
      fail(e);
    }
  };
  const startPolling = (reason: string) => {
    if (polling || stopped) return;
    polling = true;
    unsubscribe?.();
    opts.onNotice(`live updates stopped (${reason}); reading the campaign every ${pollMs / 1000} s`);
    const loop = async () => {
      await readOnce();
      if (!stopped) pollTimer = setTimeout(() => void loop(), pollMs);
    };
    void loop();
  };

  unsubscribe = api.subscribe<{ campaignUpdated: CampaignState }>(CAMPAIGN_SUBSCRIPTION, { id }, {
    next: (d) => seen(d.campaignUpdated),
    error: (e) => startPolling(e.message),
    complete: () => {
      // The server ends the subscription once the campaign has finished; anything else is a drop.
      if (!stopped) startPolling('the subscription ended');
    },
  });
  watchdog = setInterval(() => {
    if (!polling && !stopped && Date.now() - lastSeen >= quietMs) void readOnce();
  }, Math.max(1000, quietMs / 2));
  return { done, stop };
}
