import WebSocket from 'ws';
import type { EngineProgress } from '../engine-contract.ts';

/*
 * Step progress from ComfyUI's WebSocket /ws?clientId= (Comfy-Org/ComfyUI server.py @ 002c3fb
 * websocket_handler; main.py @ 02018c7 hijack_progress sends `progress` {value, max, prompt_id,
 * node}; execution.py sends `executing` {node, prompt_id}, `executing` {node: null} when a prompt
 * ends). One socket per server, opened when a job is sent there and closed when none of ours is
 * left to watch; it reconnects after a drop. Only a hint for the progress bar: poll() decides
 * every state from GET /queue and GET /history, and no worker waits on a socket.
 */
export interface ProgressWatch {
  /** Opens the server's socket (so its events reach us) and waits for it at most a moment. */
  ready(url: string, promptId: string): Promise<void>;
  progressOf(promptId: string): EngineProgress | undefined;
  forget(promptId: string): void;
  close(): void;
}

const OPEN_WAIT_MS = 2000;
const RECONNECT_MS = 3000;
/** A prompt's events are kept this long without news (a job another process finishes is never forgotten here). */
const KEEP_MS = 6 * 60 * 60 * 1000;

export function createProgressWatch(o: { urls: readonly string[]; clientId: string }): ProgressWatch {
  const sockets = new Map<string, WebSocket>();
  const progress = new Map<string, { p: EngineProgress; at: number }>();
  /** Our prompts not yet finished, by when they were sent. */
  const watching = new Map<string, number>();
  let closed = false;

  const wsUrl = (url: string) => {
    const u = new URL(url.replace(/\/+$/, '') + '/ws');
    u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
    u.searchParams.set('clientId', o.clientId);
    return u.toString();
  };

  function onMessage(raw: WebSocket.RawData, isBinary: boolean) {
    if (isBinary) return; // previews
    let m: { type?: string; data?: Record<string, unknown> };
    try {
      m = JSON.parse(raw.toString()) as typeof m;
    } catch {
      return;
    }
    const id = m.data?.prompt_id;
    if (typeof id !== 'string') return;
    const now = Date.now();
    if (m.type === 'progress') {
      const value = Number(m.data?.value);
      const max = Number(m.data?.max);
      if (max > 0 && value >= 0) progress.set(id, { p: { fraction: Math.min(1, value / max), stage: `running step ${value} of ${max}` }, at: now });
    } else if (m.type === 'execution_start') progress.set(id, { p: { fraction: 0, stage: 'running' }, at: now });
    for (const [k, v] of progress) if (now - v.at > KEEP_MS) progress.delete(k);
    for (const [k, at] of watching) if (now - at > KEEP_MS && !progress.has(k)) watching.delete(k);
  }

  function open(url: string): WebSocket {
    const ws = new WebSocket(wsUrl(url));
    sockets.set(url, ws);
    ws.on('open', () => (ws as unknown as { _socket?: { unref?: () => void } })._socket?.unref?.());
    ws.on('message', onMessage);
    ws.on('error', () => {});
    ws.on('close', () => {
      if (sockets.get(url) !== ws) return;
      sockets.delete(url);
      if (!closed && watching.size > 0) setTimeout(() => !closed && !sockets.has(url) && watching.size > 0 && open(url), RECONNECT_MS).unref();
    });
    return ws;
  }

  return {
    async ready(url, promptId) {
      if (closed || !o.urls.includes(url)) return;
      watching.set(promptId, Date.now());
      const ws = sockets.get(url) ?? open(url);
      if (ws.readyState === WebSocket.OPEN) return;
      await new Promise<void>((resolve) => {
        const done = () => (clearTimeout(t), resolve());
        const t = setTimeout(done, OPEN_WAIT_MS);
        t.unref();
        ws.once('open', done);
        ws.once('close', done);
      });
    },
    progressOf: (id) => progress.get(id)?.p,
    forget(id) {
      progress.delete(id);
      watching.delete(id);
      if (watching.size === 0) for (const ws of sockets.values()) ws.close();
    },
    close() {
      closed = true;
      for (const ws of sockets.values()) ws.close();
      sockets.clear();
    },
  };
}
