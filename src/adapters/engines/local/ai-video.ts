import fs from 'node:fs/promises';
import path from 'node:path';
import type { EngineJob } from '../render-job.ts';
import type { Frame, RenderContext } from './render-context.ts';
import { openWith } from '../ffmpeg.ts';
import { encode, FPS, mp4Output, seconds } from './encode.ts';
import { hashString, paletteFor } from './palette.ts';
import { writeDemoBadge } from './demo-mark.ts';
import { ImageCache, renderScene } from './scene.ts';
import { displayText } from './text.ts';

/**
 * Text-to-video stand-in: a still poster of the prompt (over the first frame / reference image
 * when there is one, in brand colours with the logo) under a slow Ken Burns zoom and drift.
 * Sound only when `generate_audio` is true: a quiet pink-noise and drone bed. The demo mark sits
 * still in its corner over the motion.
 */
export async function renderAiVideo(job: EngineJob, dir: string, size: Frame, ctx: RenderContext): Promise<string> {
  const { width: W, height: H, duration } = size;
  const [first, ...refs] = job.referenceImages.map((a) => a.bytes);
  const seed = hashString(`${job.generationId}:${job.prompt}`);
  const still = await renderScene(
    {
      width: W,
      height: H,
      headline: displayText(job.prompt),
      variant: 0,
      seed,
      palette: paletteFor(job.brand?.colorPrimary, job.brand?.colorAccent, 0),
      backdrop: first ?? job.brand?.reference?.bytes,
      media: [...job.productImages.map((a) => a.bytes), ...refs].slice(0, 2),
      logo: job.brand?.logo?.bytes,
      unmarked: true,
    },
    new ImageCache(),
    1,
  );
  await fs.writeFile(path.join(dir, 'still.png'), still);
  const mark = await writeDemoBadge(dir, W, H);

  const frames = Math.ceil(duration * FPS) + 1;
  // Drift towards one of the corners (or straight in), chosen by the prompt so reruns match.
  // Zoom and drift stay small enough that the headline (6% margins) never leaves the frame.
  const dx = ((seed % 3) - 1) * 0.25;
  const dy = ((Math.floor(seed / 3) % 3) - 1) * 0.25;
  const zoom = `zoompan=z='1+0.07*on/${frames}':x='(iw-iw/zoom)*(0.5+${dx}*on/${frames})':y='(ih-ih/zoom)*(0.5+${dy}*on/${frames})':d=${frames}:s=${W}x${H}:fps=${FPS}`;
  const withAudio = job.params.generate_audio === true;
  const d = seconds(duration + 0.5);
  const audioInputs = withAudio
    ? [
        '-f', 'lavfi', '-i', `anoisesrc=color=pink:amplitude=0.03:sample_rate=48000:seed=${seed % 100000}:duration=${d}`,
        '-f', 'lavfi', '-i', `aevalsrc=exprs='(0.05*sin(2*PI*110*t)+0.035*sin(2*PI*164.8*t)+0.025*sin(2*PI*220*t))*(0.7+0.3*sin(2*PI*0.15*t))':sample_rate=48000:duration=${d}`,
      ]
    : [];
  const fadeOut = seconds(Math.max(0, duration - 0.6));
  const audioGraph = withAudio
    ? `;[1:a][2:a]amix=inputs=2,lowpass=f=2500,afade=t=in:d=0.5,afade=t=out:st=${fadeOut}:d=0.6[a]`
    : '';
  return encode(
    dir,
    [
      ...openWith('image2'), '-i', 'still.png', ...audioInputs, ...openWith('image2'), '-i', mark.png,
      // The demo mark over the motion: it stays whole in its corner while the picture zooms and drifts.
      '-filter_complex', `[0:v]${zoom},setsar=1[z];[z][${withAudio ? 3 : 1}:v]overlay=${mark.x}:${mark.y},format=yuv420p[v]${audioGraph}`,
      ...mp4Output(duration, withAudio),
    ],
    ctx,
  );
}
