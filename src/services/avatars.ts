import { customAvatarCreate } from '../domain/inputs.ts';
import { parseInput } from '../domain/validate.ts';
import type { AvatarRow } from '../db/types.ts';
import type { Storage } from '../adapters/storage/storage.ts';
import {
  deleteCustomAvatar,
  findVisibleAvatarsByIds,
  insertAvatar,
  listCustomAvatars,
  listPlatformAvatars,
} from '../repositories/avatars.ts';
import type { Deps } from './deps.ts';
import type { Principal } from './principal.ts';
import { requireUuid } from './ids.ts';
import { createWithImage, deleteThenUnstore } from './stored-image.ts';
import type { IdempotencyRequest, RecordedOutcome } from './idempotency.ts';

export interface PlatformAvatar {
  id: string;
  name: string;
  thumbnail_url: string;
  gender: 'male' | 'female' | null;
  age_group: string | null;
  avatar_type: 'platform';
}

export interface CustomAvatar extends Omit<PlatformAvatar, 'avatar_type'> {
  avatar_type: 'custom';
  description: string | null;
  created_at: string;
}

export async function platformAvatarView(storage: Storage, row: AvatarRow): Promise<PlatformAvatar> {
  return {
    id: row.id,
    name: row.name,
    thumbnail_url: await storage.signedUrl(row.image_key),
    gender: row.gender,
    age_group: row.age_group,
    avatar_type: 'platform',
  };
}

export async function customAvatarView(storage: Storage, row: AvatarRow): Promise<CustomAvatar> {
  return {
    ...(await platformAvatarView(storage, row)),
    avatar_type: 'custom',
    description: row.description,
    created_at: row.created_at.toISOString(),
  };
}

/** Either kind, by the row's own type. */
export const avatarView = (storage: Storage, row: AvatarRow): Promise<PlatformAvatar | CustomAvatar> =>
  row.avatar_type === 'platform' ? platformAvatarView(storage, row) : customAvatarView(storage, row);

export function createAvatarService({ db, storage, fetchImage, log }: Pick<Deps, 'db' | 'storage' | 'fetchImage' | 'log'>) {
  const platformView = (row: AvatarRow) => platformAvatarView(storage, row);
  const customView = (row: AvatarRow) => customAvatarView(storage, row);

  return {
    // Batch reads for GraphQL relations: one query per batch, only the caller's team's rows.
    /** Every platform avatar among `ids` and the team's own custom ones. */
    findVisibleByIds: (p: Principal, ids: readonly string[]): Promise<AvatarRow[]> => findVisibleAvatarsByIds(db, p.teamId, ids),

    async listPlatform(): Promise<{ data: PlatformAvatar[] }> {
      return { data: await Promise.all((await listPlatformAvatars(db)).map(platformView)) };
    },

    async listCustom(p: Principal): Promise<{ data: CustomAvatar[] }> {
      return { data: await Promise.all((await listCustomAvatars(db, p.teamId)).map(customView)) };
    },

    async createCustom(p: Principal, body: unknown, idem?: IdempotencyRequest): Promise<RecordedOutcome> {
      const input = parseInput(customAvatarCreate, body);
      return createWithImage({ db, storage, fetchImage }, p, { body, idem, imageUrl: input.image_url, folder: 'avatars' }, async (trx, { id, imageKey, imageBytes }) => {
        const row = await insertAvatar(trx, {
          id,
          team_id: p.teamId,
          avatar_type: 'custom',
          name: input.name,
          description: input.description ?? null,
          gender: input.gender ?? null,
          age_group: input.age_group ?? null,
          image_key: imageKey,
          image_bytes: imageBytes,
          image_source_url: input.image_url,
        });
        return { status: 201, body: await customView(row) };
      });
    },

    async removeCustom(p: Principal, id: unknown): Promise<void> {
      await deleteThenUnstore({ storage, log }, () => deleteCustomAvatar(db, p.teamId, requireUuid(id)), {
        inUse: 'Custom avatar is used by one or more video generations',
        notFound: 'Custom avatar not found',
        what: 'avatar',
      });
    },
  };
}
