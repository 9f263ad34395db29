import { OPERATION_KINDS } from '../../../domain/generation-types.ts';
import { imageSize } from '../../../domain/image-inputs.ts';
import { frameSize, type VideoResolution } from '../../../domain/video-models.ts';
import { EngineError, type EngineAsset, type EngineJob } from '../render-job.ts';
import type { UpstreamFile, UpstreamRequest } from '../engine-contract.ts';

// Talking avatars have no size in the request; portrait suits the ad placements they are made for.
const TALKING_AVATAR_FRAME = { width: 720, height: 1280 };

/**
 * What the local renderer draws, from the request and the inputs every engine gets: each image
 * read through its `read()`, videos and sound handed on to be opened as streams when the render
 * needs them; the frame and length worked out from the request (a video edit's from its source
 * video, when the render has it). The prompt is the request's own, not the one woven for providers.
 */
export async function localJob(req: UpstreamRequest, signal: AbortSignal): Promise<EngineJob> {
  const p = req.params as Record<string, any>;
  const { inputs } = req;
  const kind = OPERATION_KINDS[req.operation];
  const read = (f: UpstreamFile): Promise<EngineAsset> => f.read(signal);
  const readAll = (files: readonly (UpstreamFile | undefined)[]) => Promise.all(files.filter((f) => f !== undefined).map(read));

  const job: EngineJob = {
    generationId: req.generationId,
    operation: req.operation,
    kind,
    params: p,
    width: 0,
    height: 0,
    quantity: kind === 'image' ? Number(p.quantity ?? 1) : 1,
    prompt: String(p.prompt ?? p.additional_prompt ?? p.script ?? ''),
    referenceImages: [],
    productImages: await readAll(inputs.productImages),
  };
  if (inputs.brand) {
    const { name, colorPrimary, colorAccent, logo, reference } = inputs.brand;
    job.brand = { name, colorPrimary, colorAccent, logo: logo ? await read(logo) : null, reference: reference ? await read(reference) : null };
  }

  switch (req.operation) {
    case 'text-to-image':
    case 'image-edit':
    case 'product-shots': {
      Object.assign(job, imageSize(p.aspect_ratio, p.resolution));
      job.referenceImages = await readAll(inputs.references);
      if (req.operation === 'product-shots') {
        job.template = inputs.template;
        job.prompt = [inputs.template?.prompt, p.additional_prompt].filter(Boolean).join('. ');
      }
      break;
    }
    case 'ai-video': {
      Object.assign(job, frameSize(p.aspect_ratio, p.resolution as VideoResolution));
      job.durationSeconds = Number(p.duration);
      job.referenceImages = await readAll([inputs.firstFrame, ...inputs.references, inputs.lastFrame]);
      break;
    }
    case 'talking-avatar': {
      Object.assign(job, TALKING_AVATAR_FRAME);
      job.script = String(p.script ?? '');
      if (inputs.face) job.avatar = await read(inputs.face);
      if (inputs.speech) job.voiceAudio = inputs.speech;
      else if (inputs.voice) job.voice = inputs.voice;
      break;
    }
    case 'swap-avatar':
    case 'localize': {
      job.width = even(p.width);
      job.height = even(p.height);
      job.durationSeconds = Number(p.duration);
      job.inputVideo = required(inputs.video, 'its source video');
      if (req.operation === 'swap-avatar') job.avatar = await read(required(inputs.face, 'the face'));
      break;
    }
    case 'video-edit': {
      // Its size and length are the source video's: the render reads them from its copy.
      job.inputVideo = required(inputs.video, 'its source video');
      job.template = inputs.template;
      break;
    }
  }
  return job;
}

function required(file: UpstreamFile | undefined, what: string): UpstreamFile {
  if (!file) throw new EngineError(`the request came without ${what}`, { transient: false });
  return file;
}

function even(n: unknown): number {
  const v = Math.max(2, Math.round(Number(n)));
  return v % 2 === 0 ? v : v + 1;
}
