import type { Db } from '../../db/pool.ts';
import { findAvatarById } from '../../repositories/avatars.ts';
import { findGenerationById } from '../../repositories/generations.ts';
import { findProduct } from '../../repositories/products.ts';
import { findTeamVoiceover } from '../../repositories/voiceovers.ts';

// Where the stored inputs a generation names live, for the one input resolver (inputs.ts) that
// hands them to every engine as links and reads.

/** The face of a talking or swapped avatar: the product's image for `avatar_type: product`, else the avatar's. */
export async function avatarImageKey(db: Db, teamId: string, type: string, id: string): Promise<string | undefined> {
  const row = type === 'product' ? await findProduct(db, teamId, id) : await findAvatarById(db, id);
  return row?.image_key;
}

export async function voiceoverAudioKey(db: Db, teamId: string, voiceoverId: string): Promise<string | undefined> {
  return (await findTeamVoiceover(db, teamId, voiceoverId))?.audio_key;
}

/** A video edit's source generation: its first result. */
export async function sourceGenerationKey(db: Db, generationId: string): Promise<string | undefined> {
  return (await findGenerationById(db, generationId))?.result_keys[0];
}

/** The spoken script of a talking avatar sent to a provider, kept for that generation alone (a retry reuses it). */
export const speechCopyKey = (generationId: string): string => `upstream-inputs/${generationId}/speech.mp3`;

/** Every input copy kept for one generation alone: deleted with it. */
export const inputCopyKeys = (generationId: string): string[] => [speechCopyKey(generationId)];
