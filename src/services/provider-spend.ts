import { randomUUID } from 'node:crypto';
import { buffer } from 'node:stream/consumers';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileTypeFromBuffer } from 'file-type';
import { probeMedia } from '../adapters/engines/ffmpeg.ts';
import { SNIFF_BYTES } from '../adapters/media/sniff.ts';
import { spendCandidates, type SpendCandidate, type SpendInputs } from '../domain/smallest-requests.ts';
import { isAppError } from '../domain/errors.ts';
import type { GenerationOperation } from '../domain/generation-types.ts';
import { findGenerationById } from '../repositories/generations.ts';
import type { Deps } from './deps.ts';
import type { Principal } from './principal.ts';
import type { GenerationCanceller } from './generations/cancel.ts';
import type { GenerationCreator } from './generations/create.ts';
import type { GenerationReader } from './generations/read.ts';
import type { TeamService } from './teams.ts';

export interface SpendPlan {
  route: string;
  /** The route's providers in order: the generation goes where a customer's would. */
  providers: string[];
  operation?: GenerationOperation;
  body?: Record<string, unknown>;
  /** What the create charges for it (our credits; the provider bills its own account). */
  credits?: number;
  /** Why nothing is sent for this route. */
  skipped?: string;
}

export interface SpendOutcome {
  route: string;
  /** The provider that made it. */
  provider: string;
  generation_id: string;
  status: 'completed' | 'failed' | 'timed_out';
  credits: number;
  /** What was verified of the result (its type, size, length), or why it failed. */
  detail: string;
}

type SpendDeps = Pick<Deps, 'db' | 'storage'> & {
  teams: TeamService;
  creator: Pick<GenerationCreator, 'create' | 'price'>;
  reader: Pick<GenerationReader, 'operatorView'>;
  canceller: Pick<GenerationCanceller, 'cancel'>;
};

/**
 * `adforge providers check --spend`: the cheapest real generation per route, priced with the
 * create's own pricing and refusals (a body the route cannot make is never sent), made through
 * the same pipeline as a customer's, its result read back and checked.
 */
export function createProviderSpend(deps: SpendDeps) {
  const { db, storage, teams, creator, reader, canceller } = deps;

  async function cheapest(route: string, candidates: SpendCandidate[]): Promise<{ c: SpendCandidate; credits: number } | { refused: string }> {
    // Pricing reads only; a team that does not exist owns nothing, which these bodies never need.
    const pricing: Principal = { teamId: randomUUID(), keyId: null };
    let best: { c: SpendCandidate; credits: number } | undefined;
    let refusal = `no request of route ${route} can be made`;
    for (const c of candidates) {
      try {
        const credits = await creator.price(pricing, c.operation, c.body);
        if (!best || credits < best.credits) best = { c, credits };
      } catch (e) {
        if (!isAppError(e)) throw e;
        refusal = e.message;
      }
    }
    return best ?? { refused: refusal };
  }

  async function verify(id: string): Promise<string> {
    const row = (await findGenerationById(db, id))!;
    const found: string[] = [];
    if (!row.result_keys.length) throw new Error('completed without a result file');
    for (const key of row.result_keys) {
      // Read as streams: a result may be hundreds of MB; its type is in its first bytes.
      const stored = await storage.openStream(key, { start: 0, end: SNIFF_BYTES - 1 });
      if (!stored) throw new Error(`the result ${key} is not in storage`);
      const type = await fileTypeFromBuffer(await buffer(stored.stream));
      if (!type?.mime.startsWith(`${row.kind}/`)) throw new Error(`the result is not ${row.kind === 'video' ? 'a video' : 'an image'}`);
      let info = `${type.mime}, ${Math.ceil(stored.size / 1024)} KB`;
      const whole = row.kind === 'video' ? await storage.openStream(key) : null;
      if (whole) {
        const media = await probeMedia(whole.stream, { kind: 'video' });
        if (!media.durationSeconds || media.durationSeconds <= 0) throw new Error('the video has no length');
        info += `, ${media.durationSeconds.toFixed(1)} s`;
      }
      found.push(info);
    }
    return found.join('; ');
  }

  return {
    async plan(routes: ReadonlyArray<{ route: string; providers: string[] }>, inputs: SpendInputs): Promise<SpendPlan[]> {
      const plans: SpendPlan[] = [];
      for (const { route, providers } of routes) {
        const { candidates, needs } = spendCandidates(route, inputs);
        if (!candidates.length) {
          plans.push({ route, providers, skipped: `needs ${needs}` });
          continue;
        }
        const pick = await cheapest(route, candidates);
        plans.push('refused' in pick ? { route, providers, skipped: pick.refused } : { route, providers, operation: pick.c.operation, body: pick.c.body, credits: pick.credits });
      }
      return plans;
    },

    /** Sends every planned generation from a team of its own, waits for all (a worker must run), checks each result. */
    async run(plans: readonly SpendPlan[], o: { timeoutMs: number; name?: string }): Promise<{ team_id: string; outcomes: SpendOutcome[] }> {
      const sent = plans.filter((p) => p.operation && p.body);
      const total = sent.reduce((n, p) => n + (p.credits ?? 0), 0);
      const team = await teams.createTeam({ name: o.name ?? `provider check ${new Date().toISOString()}`, tier: 'business', credits_limit: Math.max(1, total) });
      const principal: Principal = { teamId: team.id, keyId: null };
      const started: Array<{ plan: SpendPlan; id: string; credits: number }> = [];
      const outcomes: SpendOutcome[] = [];
      for (const plan of sent) {
        const res = await creator.create(principal, plan.operation!, plan.body!);
        const id = (res.body as { generation_id?: string }).generation_id;
        if (res.status !== 202 || !id) {
          outcomes.push({ route: plan.route, provider: plan.providers[0]!, generation_id: '', status: 'failed', credits: 0, detail: `refused at create: ${JSON.stringify(res.body)}` });
          continue;
        }
        started.push({ plan, id, credits: plan.credits ?? 0 });
      }
      const deadline = Date.now() + o.timeoutMs;
      for (const s of started) {
        let row = await findGenerationById(db, s.id);
        while (row?.status === 'processing' && Date.now() < deadline) {
          await sleep(1000);
          row = await findGenerationById(db, s.id);
        }
        const view = await reader.operatorView(s.id);
        if (row?.status === 'processing') {
          // Not left running on the provider's bill past what the operator allowed: cancelled and refunded.
          await canceller.cancel(principal, s.id);
          outcomes.push({ route: s.plan.route, provider: view.engine, generation_id: s.id, status: 'timed_out', credits: s.credits, detail: `not finished within ${Math.round(o.timeoutMs / 1000)} s; cancelled` });
          continue;
        }
        if (row?.status !== 'completed') {
          outcomes.push({ route: s.plan.route, provider: view.engine, generation_id: s.id, status: 'failed', credits: s.credits, detail: row?.error ?? 'failed' });
          continue;
        }
        const detail = await verify(s.id).catch((e: unknown) => `completed, but ${e instanceof Error ? e.message : String(e)}`);
        const ok = !detail.startsWith('completed, but');
        outcomes.push({ route: s.plan.route, provider: view.engine, generation_id: s.id, status: ok ? 'completed' : 'failed', credits: s.credits, detail });
      }
      return { team_id: team.id, outcomes };
    },
  };
}
