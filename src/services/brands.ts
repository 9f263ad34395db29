import { AppError } from '../domain/errors.ts';
import { brandCreate, brandUpdate, pageQuery } from '../domain/inputs.ts';
import { parseInput } from '../domain/validate.ts';
import type { BrandRow } from '../db/types.ts';
import { deleteBrandUnlessInUse, findBrand, findBrandsByIds, insertBrand, listBrands, updateBrand } from '../repositories/brands.ts';
import type { Deps } from './deps.ts';
import type { Principal } from './principal.ts';
import { requireUuid } from './ids.ts';
import { paginated, type Paginated } from './paginated.ts';
import { checkUploadUses } from './uploads.ts';

export type Brand = Omit<BrandRow, 'team_id' | 'created_at'> & { created_at: string };

export function brandView({ team_id: _team, created_at, ...rest }: BrandRow): Brand {
  return { ...rest, created_at: created_at.toISOString() };
}

export function createBrandService({ db }: Pick<Deps, 'db'>) {
  return {
    // Batch reads for GraphQL relations: one query per batch, only the caller's team's rows.
    findByIds: (p: Principal, ids: readonly string[]): Promise<BrandRow[]> => findBrandsByIds(db, p.teamId, ids),

    async list(p: Principal, query: unknown): Promise<Paginated<Brand>> {
      const page = parseInput(pageQuery, query);
      const { rows, total } = await listBrands(db, p.teamId, page);
      return paginated(rows.map(brandView), total, page);
    },

    async get(p: Principal, id: unknown): Promise<Brand> {
      const row = await findBrand(db, p.teamId, requireUuid(id));
      if (!row) throw new AppError('not_found', 'Brand not found');
      return brandView(row);
    },

    async create(teamId: string, body: unknown): Promise<Brand> {
      const b = parseInput(brandCreate, body);
      await checkUploadUses(db, teamId, b);
      const row = await insertBrand(db, {
        team_id: teamId,
        name: b.name,
        description: b.description ?? '',
        industry: b.industry ?? '',
        website_url: b.website_url ?? null,
        brand_voice: b.brand_voice ?? null,
        target_audience: b.target_audience ?? null,
        brand_color_primary: b.brand_color_primary ?? null,
        brand_color_accent: b.brand_color_accent ?? null,
        logo_url: b.logo_url ?? null,
        reference_image_url: b.reference_image_url ?? null,
      });
      return brandView(row);
    },

    /** Only the fields given change; null clears an optional field. */
    /**
     * A brand goes unless a generation being made still uses it (409). Finished generations keep
     * their outputs; their `brand` then reads as null.
     */
    async remove(p: Principal, id: unknown): Promise<void> {
      const outcome = await deleteBrandUnlessInUse(db, p.teamId, requireUuid(id));
      if (!outcome) throw new AppError('not_found', 'Brand not found');
      if (outcome === 'in_use') throw new AppError('conflict', 'Brand is used by a generation still being made; delete it when that one has finished');
    },

    async update(p: Principal, id: unknown, body: unknown): Promise<Brand> {
      const brandId = requireUuid(id);
      const b = parseInput(brandUpdate, body);
      const changes = Object.fromEntries(Object.entries(b).filter(([, v]) => v !== undefined));
      if ('description' in changes && changes.description === null) changes.description = '';
      if ('industry' in changes && changes.industry === null) changes.industry = '';
      await checkUploadUses(db, p.teamId, changes);
      const row = Object.keys(changes).length
        ? await updateBrand(db, p.teamId, brandId, changes)
        : await findBrand(db, p.teamId, brandId);
      if (!row) throw new AppError('not_found', 'Brand not found');
      return brandView(row);
    },
  };
}
