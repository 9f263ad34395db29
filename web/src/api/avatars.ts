import { gql } from './client.ts';
import { AVATARS } from './operations.ts';

export interface Avatar {
  id: string;
  name: string;
  avatar_type: string;
  gender: string | null;
  age_group: string | null;
  thumbnail_url: string;
}

/** Every avatar the team can use: its own first, then the catalogue's (each once). */
export async function teamAvatars(): Promise<Avatar[]> {
  const d = await gql<{ avatars: Avatar[]; customAvatars: Avatar[] }>(AVATARS);
  const mine = new Set(d.customAvatars.map((a) => a.id));
  return [...d.customAvatars, ...d.avatars.filter((a) => !mine.has(a.id))];
}
