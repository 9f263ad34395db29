import { describe, expect, it } from 'vitest';
import { localJob } from '../../src/adapters/engines/local/job.ts';
import type { UpstreamFile, UpstreamInputs } from '../../src/adapters/engines/engine-contract.ts';
import { memoryFile } from '../support/upstream-file.ts';

// The local engine gets the inputs every engine gets and reads what it draws through read().
const reads: string[] = [];
const file = (name: string): UpstreamFile => memoryFile(Buffer.from(name), 'image/png', `https://inputs.example/${name}`, () => reads.push(name));
const inputs = (more: Partial<UpstreamInputs> = {}): UpstreamInputs => ({ prompt: 'the woven prompt', references: [], brandImages: [], productImages: [], ...more });
const signal = new AbortController().signal;
const text = (assets: { bytes: Buffer }[] | undefined) => (assets ?? []).map((a) => a.bytes.toString());

describe('the local engine\'s job, from the inputs every engine gets', () => {
  it('ai-video: the frames and references in order, read through read(); the request\'s own prompt, not the woven one', async () => {
    reads.length = 0;
    const job = await localJob({
      generationId: 'g',
      operation: 'ai-video',
      params: { prompt: 'a boat [[fail]]', aspect_ratio: '16:9', resolution: '720p', duration: 8 },
      inputs: inputs({ firstFrame: file('first'), references: [file('ref1'), file('ref2')], lastFrame: file('last') }),
    }, signal);
    expect(text(job.referenceImages)).toEqual(['first', 'ref1', 'ref2', 'last']);
    expect(job).toMatchObject({ kind: 'video', prompt: 'a boat [[fail]]', width: 1280, height: 720, durationSeconds: 8, quantity: 1 });
    expect(reads.sort()).toEqual(['first', 'last', 'ref1', 'ref2']);
  });

  it('product shots: the style template\'s prompt, the product images and the brand with its logo and reference', async () => {
    const job = await localJob({
      generationId: 'g',
      operation: 'product-shots',
      params: { additional_prompt: 'on sand', aspect_ratio: '1:1', resolution: '1k', quantity: 2 },
      inputs: inputs({
        productImages: [file('p1')],
        template: { prompt: 'studio light' },
        brand: { name: 'Acme', colorPrimary: '#112233', colorAccent: null, logo: file('logo') },
      }),
    }, signal);
    expect(job.prompt).toBe('studio light. on sand');
    expect(text(job.productImages)).toEqual(['p1']);
    expect(job.brand).toMatchObject({ name: 'Acme', colorPrimary: '#112233', colorAccent: null, reference: null });
    expect(job.brand?.logo?.bytes.toString()).toBe('logo');
    expect(job).toMatchObject({ kind: 'image', quantity: 2, width: 1024, height: 1024 });
  });

  it('talking avatar: a voiceover is the voice, handed on unread (the render streams it to disk); without one the catalogue voice is spoken by the engine', async () => {
    reads.length = 0;
    const voiceover = file('voiceover');
    const spoken = await localJob({ generationId: 'g', operation: 'talking-avatar', params: { script: 'Hi.' }, inputs: inputs({ face: file('face'), speech: voiceover }) }, signal);
    expect(spoken.voiceAudio).toBe(voiceover);
    expect(reads).toEqual(['face']);
    expect(spoken.avatar?.bytes.toString()).toBe('face');
    expect(spoken.voice).toBeUndefined();
    const voiced = await localJob({ generationId: 'g', operation: 'talking-avatar', params: { script: 'Hi.' }, inputs: inputs({ face: file('face'), voice: { language: 'fr-fr' } }) }, signal);
    expect(voiced).toMatchObject({ voice: { language: 'fr-fr' }, script: 'Hi.', width: 720, height: 1280 });
    expect(voiced.voiceAudio).toBeUndefined();
  });

  it('swap avatar: the source video (unread: the render streams it to disk) and the face; a missing one is a failure of the request, not a crash', async () => {
    reads.length = 0;
    const video = file('video');
    const job = await localJob({ generationId: 'g', operation: 'swap-avatar', params: { width: 319, height: 240, duration: 3 }, inputs: inputs({ face: file('face'), video }) }, signal);
    expect(job).toMatchObject({ width: 320, height: 240, durationSeconds: 3 });
    expect(job.inputVideo).toBe(video);
    expect(reads).toEqual(['face']);
    await expect(localJob({ generationId: 'g', operation: 'swap-avatar', params: { width: 320, height: 240, duration: 3 }, inputs: inputs({ face: file('face') }) }, signal)).rejects.toMatchObject({
      name: 'EngineError', transient: false, message: 'the request came without its source video',
    });
  });

  it('video edit: the source video is not read to size the job: the render reads its size and length from its copy', async () => {
    reads.length = 0;
    const video = file('video');
    const job = await localJob({ generationId: 'g', operation: 'video-edit', params: { language: 'de' }, inputs: inputs({ video, template: { name: 'Bold' } }) }, signal);
    expect(job.inputVideo).toBe(video);
    expect(job).toMatchObject({ width: 0, height: 0, template: { name: 'Bold' } });
    expect(job.durationSeconds).toBeUndefined();
    expect(reads).toEqual([]);
  });
});
