import { describe, expect, it } from 'vitest';
import { stillVideo } from '../../src/adapters/media/still-video.ts';
import { pngBytes } from '../support/image-host.ts';
import { videoInfo } from '../support/media-probe.ts';

describe('a face as a still video (for lip-sync providers)', () => {
  it('is an H.264 video of the asked length, and the same bytes every time (a resent submit carries what the first did)', async () => {
    const face = await pngBytes(101, 77, '#aa5533');
    const [a, b] = await Promise.all([stillVideo(face, 1.5), stillVideo(face, 1.5)]);
    const info = await videoInfo(a);
    expect(info.videoCodec).toBe('h264');
    expect(Math.abs(info.durationSeconds! - 1.5)).toBeLessThan(0.1);
    expect(a.equals(b)).toBe(true);
  });
});
