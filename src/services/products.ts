import { AppError } from '../domain/errors.ts';
import { pageQuery, productCreate } from '../domain/inputs.ts';
import { parseInput } from '../domain/validate.ts';
import type { Storage } from '../adapters/storage/storage.ts';
import type { ProductRow } from '../db/types.ts';
import { deleteProduct, findProduct, findProductsByIds, insertProduct, listProducts } from '../repositories/products.ts';
import type { Deps } from './deps.ts';
import type { Principal } from './principal.ts';
import { requireUuid } from './ids.ts';
import { paginated, type Paginated } from './paginated.ts';
import { createWithImage, deleteThenUnstore } from './stored-image.ts';
import type { IdempotencyRequest, RecordedOutcome } from './idempotency.ts';

export interface Product {
  id: string;
  name: string;
  description: string;
  category: string;
  image_url: string;
  price: number | null;
  currency: string;
  link: string | null;
  created_at: string;
}

export async function productView(storage: Storage, row: ProductRow): Promise<Product> {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    category: row.category,
    image_url: await storage.signedUrl(row.image_key),
    price: row.price,
    currency: row.currency,
    link: row.link,
    created_at: row.created_at.toISOString(),
  };
}

export function createProductService({ db, storage, fetchImage, log }: Pick<Deps, 'db' | 'storage' | 'fetchImage' | 'log'>) {
  const view = (row: ProductRow) => productView(storage, row);

  return {
    // Batch reads for GraphQL relations: one query per batch, only the caller's team's rows.
    findByIds: (p: Principal, ids: readonly string[]): Promise<ProductRow[]> => findProductsByIds(db, p.teamId, ids),

    async list(p: Principal, query: unknown): Promise<Paginated<Product>> {
      const page = parseInput(pageQuery, query);
      const { rows, total } = await listProducts(db, p.teamId, page);
      return paginated(await Promise.all(rows.map(view)), total, page);
    },

    async get(p: Principal, id: unknown): Promise<Product> {
      const row = await findProduct(db, p.teamId, requireUuid(id));
      if (!row) throw new AppError('not_found', 'Product not found');
      return view(row);
    },

    /** The image is fetched and stored before the row exists; the row and the idempotent response commit together. */
    async create(p: Principal, body: unknown, idem?: IdempotencyRequest): Promise<RecordedOutcome> {
      const input = parseInput(productCreate, body);
      return createWithImage({ db, storage, fetchImage }, p, { body, idem, imageUrl: input.image_url, folder: 'products' }, async (trx, { id, imageKey, imageBytes }) => {
        const row = await insertProduct(trx, {
          id,
          team_id: p.teamId,
          name: input.name,
          description: input.description,
          category: input.category,
          image_key: imageKey,
          image_bytes: imageBytes,
          image_source_url: input.image_url,
          price: input.price ?? null,
          currency: input.currency,
          link: input.link ?? null,
        });
        return { status: 201, body: await view(row) };
      });
    },

    async remove(p: Principal, id: unknown): Promise<void> {
      await deleteThenUnstore({ storage, log }, () => deleteProduct(db, p.teamId, requireUuid(id)), {
        inUse: 'Product has associated generations; delete those first',
        notFound: 'Product not found',
        what: 'product',
      });
    },
  };
}
