import { randomUUID } from 'node:crypto';
import { Agent, request } from 'undici';
import type { Nodes } from './cluster.ts';

export interface Answer {
  kind: string;
  status: number;
  at: number;
}

export interface Team {
  teamId: string;
  key: string;
}

export interface Fixtures {
  imageUrl: string;
  videoUrl: string;
  productId: string;
  avatarId: string;
  voiceId: string;
  scrapeUrl: string;
}

/** What the load saw: every answer, the generations it was promised, the replays it checked. */
export interface LoadRecord {
  answers: Answer[];
  accepted: Map<string, { kind: string; teamId: string }>;
  voiceovers: number;
  replays: { same: number; different: number };
}

type Body = Record<string, unknown>;

/**
 * Client loops against the API nodes in rotation (as behind a balancer): creates of every type (half with an
 * Idempotency-Key, some of those sent again to check the replay), reads, voiceovers, cancels and
 * scrapes. A refused connection (an API node restarting) is status 0.
 */
export function createLoad(o: { nodes: Nodes; ca: string; teams: Team[]; fixtures: Fixtures }) {
  const dispatcher = new Agent({ connect: { ca: o.ca }, headersTimeout: 60_000, bodyTimeout: 60_000, keepAliveTimeout: 2_000 });
  const record: LoadRecord = { answers: [], accepted: new Map(), voiceovers: 0, replays: { same: 0, different: 0 } };
  const keyed: Array<{ team: Team; path: string; body: Body; key: string; generationId: string }> = [];
  let turn = 0;
  const f = o.fixtures;

  async function call(kind: string, team: Team, method: 'GET' | 'POST', path: string, body?: Body, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
    const up = o.nodes.api().filter((n) => n.serving);
    const node = up[turn++ % Math.max(1, up.length)] ?? o.nodes.api()[0]!;
    let status = 0;
    let parsed: any;
    try {
      const res = await request(`https://127.0.0.1:${node.port}/api/v1${path}`, {
        method,
        dispatcher,
        headers: { authorization: `Bearer ${team.key}`, ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      status = res.statusCode;
      const text = await res.body.text();
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      status = 0;
    }
    record.answers.push({ kind, status, at: Date.now() });
    return { status, body: parsed };
  }

  const CREATES: Array<[number, string, string, () => Body]> = [
    [4, 'text-to-image', '/images/text-to-image', () => ({ model: 'fast', prompt: `soak ${randomUUID().slice(0, 8)}`, aspect_ratio: '1:1' })],
    [1, 'product-shots', '/images/product-shots', () => ({ model: 'fast', aspect_ratio: '1:1', product_id: f.productId, style_id: 'studio-white' })],
    [1, 'image-edit', '/images/edit', () => ({ model: 'fast', prompt: 'warmer light', aspect_ratio: '1:1', reference_image_urls: [f.imageUrl] })],
    [1.5, 'ai-video (fal)', '/videos/ai-video', () => ({ model: 'kling-2.6', prompt: `a shoe in the rain ${randomUUID()}`, aspect_ratio: '16:9', duration: 5 })],
    [0.3, 'ai-video (local)', '/videos/ai-video', () => ({ model: 'veo-3.1-fast', prompt: 'a shoe at dawn', aspect_ratio: '16:9', duration: 4 })],
    [0.3, 'talking-avatar', '/videos/talking-avatar', () => ({ avatar_id: f.avatarId, avatar_type: 'platform', script: 'Meet the shoe.', voice_id: f.voiceId })],
    [0.2, 'swap-avatar', '/videos/swap-avatar', () => ({ video_url: f.videoUrl, duration: 2, width: 320, height: 180, image_url: f.imageUrl, mode: 'standard' })],
    [0.2, 'localize', '/videos/localize', () => ({ video_url: f.videoUrl, output_language: 'es', width: 320, height: 180, duration: 2, mode: 'speed' })],
    [0.2, 'video-edit', '/videos/edit', () => ({ template_id: 'bold-pop', video_url: f.videoUrl })],
  ];
  const OTHERS: Array<[number, (team: Team) => Promise<unknown>]> = [
    [1, (team) => voiceover(team)],
    [4, (team) => read(team)],
    [0.7, (team) => cancel(team)],
    [0.15, (team) => call('scrape', team, 'POST', '/ad-library/scrape', { url: f.scrapeUrl })],
  ];
  const weight = (list: Array<[number, ...unknown[]]>) => list.reduce((s, [w]) => s + w, 0);
  const createWeight = weight(CREATES);
  const total = createWeight + weight(OTHERS);

  async function create(team: Team): Promise<void> {
    const [, kind, path, body] = pick(CREATES);
    // A repeat of an earlier keyed create must answer that generation again, never make another.
    if (keyed.length && Math.random() < 0.15) {
      const again = keyed[Math.floor(Math.random() * keyed.length)]!;
      const res = await call(`${kind} (replay)`, again.team, 'POST', again.path, again.body, { 'idempotency-key': again.key });
      if (res.status === 202) res.body.generation_id === again.generationId ? record.replays.same++ : record.replays.different++;
      return;
    }
    const b = body();
    const key = Math.random() < 0.5 ? randomUUID() : undefined;
    const res = await call(kind, team, 'POST', path, b, key ? { 'idempotency-key': key } : {});
    if (res.status !== 202) return;
    record.accepted.set(res.body.generation_id, { kind, teamId: team.teamId });
    if (key) keyed.push({ team, path, body: b, key, generationId: res.body.generation_id });
  }

  async function voiceover(team: Team) {
    const res = await call('voiceover', team, 'POST', '/voiceovers/text-to-speech', { text: 'Big sale today.', voice_id: f.voiceId });
    if (res.status === 201) record.voiceovers++;
  }

  async function read(team: Team) {
    const ids = [...record.accepted.entries()].filter(([, a]) => a.teamId === team.teamId).map(([id]) => id);
    const r = Math.random();
    if (r < 0.4 && ids.length) return call('read one', team, 'GET', `/generations/${ids[Math.floor(Math.random() * ids.length)]}`);
    if (r < 0.8) return call('read list', team, 'GET', '/generations?limit=5');
    return call('read credits', team, 'GET', '/account/credits');
  }

  async function cancel(team: Team) {
    const ids = [...record.accepted.entries()].filter(([, a]) => a.teamId === team.teamId).slice(-20);
    if (!ids.length) return;
    const [id] = ids[Math.floor(Math.random() * ids.length)]!;
    return call('cancel', team, 'POST', `/generations/${id}/cancel`);
  }

  function pick<T extends [number, ...unknown[]]>(list: T[]): T {
    let r = Math.random() * weight(list);
    for (const item of list) if ((r -= item[0]) <= 0) return item;
    return list.at(-1)!;
  }

  return {
    record,
    /** `loops` clients until `until` (ms since epoch). */
    async run(loops: number, until: number): Promise<void> {
      await Promise.all(
        Array.from({ length: loops }, async (_, i) => {
          const team = o.teams[i % o.teams.length]!;
          while (Date.now() < until) {
            if (Math.random() * total < createWeight) await create(team);
            else await pick(OTHERS)[1](team);
          }
        }),
      );
    },
    close: () => dispatcher.close(),
  };
}
