import { z } from 'zod';
import { AppError } from '../../domain/errors.ts';
import { GENERATION_STATUSES } from '../../domain/generation-types.ts';
import { pageQuery } from '../../domain/inputs.ts';
import { parseInput } from '../../domain/validate.ts';
import type { WebhookDeliveryRow } from '../../db/types.ts';
import { findGeneration, findGenerationById, listGenerations, productLinksOfGenerations } from '../../repositories/generations.ts';
import { upstreamHistory } from '../../repositories/upstream-jobs.ts';
import { deliveriesOfGenerations } from '../../repositories/webhook-deliveries.ts';
import type { Deps } from '../deps.ts';
import type { Principal } from '../principal.ts';
import { requireUuid } from '../ids.ts';
import { paginated, type Paginated } from '../paginated.ts';
import { detailView, summaryView, upstreamAttemptView, type GenerationDetail, type GenerationSummary, type UpstreamAttempt } from './views.ts';

export const generationListQuery = pageQuery.extend({
  type: z.enum(['talking-avatar', 'ai-video', 'image'], { message: 'must be talking-avatar, ai-video or image' }).optional(),
  status: z.enum(GENERATION_STATUSES, { message: 'must be processing, completed or failed' }).optional(),
});

export function createGenerationReader({ db, storage }: Pick<Deps, 'db' | 'storage'>) {
  return {
    // Batch reads for GraphQL relations: one query per batch, only the caller's team's rows.
    webhookDeliveriesOf: (p: Principal, ids: readonly string[]): Promise<WebhookDeliveryRow[]> => deliveriesOfGenerations(db, p.teamId, ids),
    productLinksOf: (p: Principal, ids: readonly string[]) => productLinksOfGenerations(db, p.teamId, ids),
    /** The upstream attempts of the team's generations among `ids`, each with its generation id. */
    async upstreamOf(p: Principal, ids: readonly string[]): Promise<Array<UpstreamAttempt & { generation_id: string }>> {
      return (await upstreamHistory(db, ids, p.teamId)).map((j) => ({ generation_id: j.generation_id, ...upstreamAttemptView(j) }));
    },

    /** For operators (the CLI, no team): the generation, where it ran and every upstream attempt. */
    async operatorView(id: unknown) {
      const row = await findGenerationById(db, requireUuid(id));
      if (!row) throw new AppError('not_found', 'Generation not found');
      const { status, type, operation, team_id, credits, error, created_at, completed_at, deadline_at } = row;
      const upstream = (await upstreamHistory(db, [row.id])).map(upstreamAttemptView);
      return {
        id: row.id,
        team_id,
        operation,
        type,
        status,
        credits,
        error,
        engine: upstream.at(-1)?.provider ?? 'local',
        created_at: created_at.toISOString(),
        completed_at: completed_at?.toISOString() ?? null,
        deadline_at: deadline_at.toISOString(),
        files_expired_at: row.files_expired_at?.toISOString() ?? null,
        upstream,
      };
    },

    async list(p: Principal, query: unknown): Promise<Paginated<GenerationSummary>> {
      const q = parseInput(generationListQuery, query);
      const { rows, total } = await listGenerations(db, p.teamId, { type: q.type, status: q.status }, q);
      return paginated(await Promise.all(rows.map((r) => summaryView(storage, r))), total, q);
    },

    /** The list with each item's details, for transports (GraphQL) that can ask for them. */
    async listDetailed(p: Principal, query: unknown): Promise<Paginated<GenerationDetail>> {
      const q = parseInput(generationListQuery, query);
      const { rows, total } = await listGenerations(db, p.teamId, { type: q.type, status: q.status }, q);
      return paginated(await Promise.all(rows.map((r) => detailView(storage, r))), total, q);
    },

    async get(p: Principal, id: unknown): Promise<GenerationDetail> {
      const row = await findGeneration(db, p.teamId, requireUuid(id));
      if (!row) throw new AppError('not_found', 'Generation not found');
      return detailView(storage, row);
    },
  };
}
export type GenerationReader = ReturnType<typeof createGenerationReader>;
