import type { Db } from '../../db/pool.ts';
import { AppError } from '../../domain/errors.ts';
import { findAvatarOfType } from '../../repositories/avatars.ts';
import { findBrand } from '../../repositories/brands.ts';
import { findProduct, findProductsByIds } from '../../repositories/products.ts';

/** The avatar a video names must exist for the team: a platform avatar, one of its custom avatars, or one of its products. */
export async function requireAvatar(
  db: Db,
  teamId: string,
  avatarType: 'platform' | 'custom' | 'product',
  avatarId: string,
): Promise<{ avatarIds: string[]; productIds: string[] }> {
  if (avatarType === 'product') {
    const product = await findProduct(db, teamId, avatarId);
    if (!product) throw new AppError('not_found', 'Avatar not found: no product with this avatar_id');
    return { avatarIds: [], productIds: [product.id] };
  }
  const avatar = await findAvatarOfType(db, avatarId, avatarType, avatarType === 'custom' ? teamId : undefined);
  if (!avatar) throw new AppError('not_found', `Avatar not found: no ${avatarType} avatar with this avatar_id`);
  return { avatarIds: [avatar.id], productIds: [] };
}

/** The spec ignores unknown or foreign brand and product ids: only the team's own survive. */
export async function ownBrandAndProducts(
  db: Db,
  teamId: string,
  brandId: string | undefined,
  productIds: string[],
): Promise<{ brand: { id: string; referenceImages: number } | undefined; productIds: string[] }> {
  const brand = brandId ? await findBrand(db, teamId, brandId) : undefined;
  const products = await findProductsByIds(db, teamId, productIds);
  const found = new Set(products.map((p) => p.id));
  return {
    brand: brand ? { id: brand.id, referenceImages: Number(!!brand.logo_url) + Number(!!brand.reference_image_url) } : undefined,
    productIds: productIds.filter((id) => found.has(id)),
  };
}
