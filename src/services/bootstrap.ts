import { randomBytes } from 'node:crypto';
import { PLATFORM_AVATARS } from '../domain/catalogue/platform-avatars.ts';
import { renderPortraitPng } from '../adapters/media/portrait.ts';
import { upsertPlatformAvatar } from '../repositories/avatars.ts';
import { claimSetting, setSetting, settingOnce } from '../repositories/settings.ts';
import type { Deps } from './deps.ts';
import { createMemberService, type SignInLink } from './members.ts';
import { createTeamService, type CreatedKey } from './teams.ts';

/** Idempotent: runs at every start, so a wiped file store gets its thumbnails back. */
export async function seedPlatformAvatars({ db, storage }: Pick<Deps, 'db' | 'storage'>): Promise<void> {
  for (const a of PLATFORM_AVATARS) {
    const imageKey = `avatars/platform/${a.id}.png`;
    await upsertPlatformAvatar(db, {
      id: a.id,
      team_id: null,
      avatar_type: 'platform',
      name: a.name,
      gender: a.gender,
      age_group: a.age_group,
      image_key: imageKey,
    });
    if (!(await storage.get(imageKey))) await storage.put(imageKey, await renderPortraitPng(a.look), 'image/png');
  }
}

/** The secret for /files links, shared through the database by every node unless set in the environment. */
export async function filesSigningSecret({ db, config }: Pick<Deps, 'db' | 'config'>): Promise<string> {
  return config.filesSigningSecret ?? settingOnce(db, 'files_signing_secret', randomBytes(32).toString('hex'));
}

/**
 * The first start of a new installation makes a demo team (Starter tier), one key and the
 * team's owner, who signs in to the dashboard through a one-time link.
 * Returns the key only to the process that made it; later starts get null.
 */
export const DEMO_OWNER_EMAIL = 'owner@demo.adforge.local';

export async function ensureDemoTeam({ db, config }: Pick<Deps, 'db' | 'config'>): Promise<(CreatedKey & { team_name: string; owner: SignInLink }) | null> {
  const teams = createTeamService({ db });
  if (!(await claimSetting(db, 'demo_team', 'pending'))) return null;
  const team = await teams.createTeam({ name: 'Demo team', tier: 'starter' });
  const key = await teams.createKey(team.id, { name: 'Demo key' });
  const owner = await createMemberService({ db, config }).createUser(team.id, { email: DEMO_OWNER_EMAIL, role: 'owner' });
  await setSetting(db, 'demo_team', team.id);
  return { ...key, team_name: team.name, owner };
}
