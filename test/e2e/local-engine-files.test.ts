import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEMP_PREFIX } from '../../src/adapters/engines/local/temp.ts';
import { startTestService, waitForGeneration, type TestService } from '../support/app.ts';

// The local engine hands its files over in a temp dir; the core stores them and removes the dir,
// whether the generation completes or fails. The engine's temp dirs go to this file's own folder.
let svc: TestService;
let tmp: string;
const previous = process.env.TMPDIR;

beforeAll(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'adforge-engine-files-'));
  process.env.TMPDIR = tmp;
  svc = await startTestService({ GENERATION_MAX_ATTEMPTS: '1' }, { worker: true });
});
afterAll(async () => {
  await svc?.close();
  if (previous === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = previous;
  await fs.rm(tmp, { recursive: true, force: true });
});

const renderDirs = async () => (await fs.readdir(tmp)).filter((n) => n.startsWith(TEMP_PREFIX));

describe('the local engine\'s files', () => {
  it('are stored and their temp dir removed once a generation completes, or fails', async () => {
    expect(os.tmpdir()).toBe(tmp); // the service runs in this process: its temp folder is this one
    const t = await svc.team({ credits: 400 });
    const body = { model: 'seedance-2.0-fast', prompt: 'a kite over the dunes', aspect_ratio: '16:9', duration: 4, resolution: '480p' };
    const made = await svc.api('POST', '/api/v1/videos/ai-video', { key: t.key, body });
    expect((await waitForGeneration(svc, t.key, made.body.generation_id)).status).toBe('completed');
    const edit = await svc.api('POST', '/api/v1/videos/edit', { key: t.key, body: { template_id: 'bold-pop', generation_id: made.body.generation_id } });
    expect((await waitForGeneration(svc, t.key, edit.body.generation_id)).status).toBe('completed');
    const failed = await svc.api('POST', '/api/v1/videos/ai-video', { key: t.key, body: { ...body, prompt: 'a kite [[fail]]' } });
    expect((await waitForGeneration(svc, t.key, failed.body.generation_id)).status).toBe('failed');
    expect(await renderDirs()).toEqual([]);
  });
});
