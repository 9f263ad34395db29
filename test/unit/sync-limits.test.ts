import { describe, expect, it } from 'vitest';
import { SYNC_ENDINGS, SYNC_WORKING } from '../../src/adapters/engines/sync/sync-engine.ts';
import { SYNC_MAX_UPLOAD_BYTES, SYNC_MODELS } from '../../src/adapters/engines/sync/sync-limits.ts';
import { loadContract } from '../support/contract.ts';

// What the sync adapter sends and reads, against what test/contracts/sync/ says sync takes and answers.
const generate = loadContract('sync', 'generate-multipart');
const get = loadContract('sync', 'get-generation');
type Schema = { enum?: string[]; maximum?: number; properties?: Record<string, Schema> };
const part = (name: string) => (generate.request.body as Schema).properties![name]!;

describe('sync limits, from its contract', () => {
  it('every model we map is a model sync takes', () => {
    for (const model of Object.values(SYNC_MODELS)) expect(part('model').enum).toContain(model);
  });

  it('every status sync documents is one the adapter knows: working, ending (with its reason) or COMPLETED', () => {
    const known = [...SYNC_WORKING, ...Object.keys(SYNC_ENDINGS), 'COMPLETED'].sort();
    expect(known).toEqual([...(get.responses['200'] as Schema).properties!.status!.enum!].sort());
  });

  it('our upload cap is within what sync takes per file, and we send the types it lists', () => {
    for (const name of ['video', 'audio']) expect(SYNC_MAX_UPLOAD_BYTES).toBeLessThanOrEqual(part(name).properties!.size!.maximum!);
    expect(part('video').properties!.type!.enum).toContain('video/mp4');
    // Our speech is always MP3 (every speech engine of ours, and so every voiceover).
    expect(part('audio').properties!.type!.enum).toContain('audio/mpeg');
  });
});
