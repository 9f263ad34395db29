import { z } from 'zod';
import { AppError } from '../../domain/errors.ts';
import { GENERATION_STATUSES } from '../../domain/generation-types.ts';
import { pageQuery } from '../../domain/inputs.ts';
import { parseInput } from '../../domain/validate.ts';
import type { WebhookDeliveryRow } from '../../db/types.ts';
import { findGeneration, listGenerations, productLinksOfGenerations } from '../../repositories/generations.ts';
import { deliveriesOfGenerations } from '../../repositories/webhook-deliveries.ts';
import type { Deps, Principal } from '../context.ts';
import { requireUuid } from '../ids.ts';
import { paginated, type Paginated } from '../paging.ts';
import { detailView, summaryView, type GenerationDetail, type GenerationSummary } from './views.ts';

const listQuery = pageQuery.extend({
  type: z.enum(['talking-avatar', 'ai-video', 'image'], { message: 'must be talking-avatar, ai-video or image' }).optional(),
  status: z.enum(GENERATION_STATUSES, { message: 'must be processing, completed or failed' }).optional(),
});

export function createGenerationReader({ db, storage }: Pick<Deps, 'db' | 'storage'>) {
  return {
    // Batch reads for GraphQL relations: one query per batch, only the caller's team's rows.
    webhookDeliveriesOf: (p: Principal, ids: readonly string[]): Promise<WebhookDeliveryRow[]> => deliveriesOfGenerations(db, p.teamId, ids),
    productLinksOf: (p: Principal, ids: readonly string[]) => productLinksOfGenerations(db, p.teamId, ids),

    async list(p: Principal, query: unknown): Promise<Paginated<GenerationSummary>> {
      const q = parseInput(listQuery, query);
      const { rows, total } = await listGenerations(db, p.teamId, { type: q.type, status: q.status }, q);
      return paginated(await Promise.all(rows.map((r) => summaryView(storage, r))), total, q);
    },

    /** The list with each item's details, for transports (GraphQL) that can ask for them. */
    async listDetailed(p: Principal, query: unknown): Promise<Paginated<GenerationDetail>> {
      const q = parseInput(listQuery, query);
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
