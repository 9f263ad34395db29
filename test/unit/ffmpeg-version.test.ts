import { describe, expect, it } from 'vitest';
import { describeBuild, parseToolBuild } from '../../src/adapters/engines/ffmpeg-version.ts';

const BUNDLED = `ffmpeg version N-47683-g0e8eb07980-static https://johnvansickle.com/ffmpeg/  Copyright (c) 2000-2018 the FFmpeg developers
built with gcc 6.3.0 (Debian 6.3.0-18+deb9u1) 20170516
libavutil      56. 24.101 / 56. 24.101
libavcodec     58. 42.100 / 58. 42.100`;
const DEBIAN = `ffmpeg version 5.1.9-0+deb12u1 Copyright (c) 2000-2026 the FFmpeg developers
built with gcc 12 (Debian 12.2.0-14+deb12u1)
libavutil      57. 28.100 / 57. 28.100`;
const PROBE_SNAPSHOT = `ffprobe version N-66595-gc2b38619c0-static https://johnvansickle.com/ffmpeg/  Copyright (c) 2007-2023 the FFmpeg developers
libavutil      58. 14.100 / 58. 14.100`;

describe('what -version says about a build', () => {
  it('a 2018 git snapshot is a 4.1 build by its libavutil, older than 5.1', () => {
    const b = parseToolBuild(BUNDLED)!;
    expect(b).toEqual({ version: 'N-47683-g0e8eb07980-static', year: 2018, release: '4.1', outdated: true });
    expect(describeBuild(b)).toBe('N-47683-g0e8eb07980-static (a 4.1 build, 2018)');
  });
  it("Debian 12's 5.1 is current; so is a 2023 snapshot", () => {
    expect(parseToolBuild(DEBIAN)).toMatchObject({ version: '5.1.9-0+deb12u1', year: 2026, outdated: false });
    expect(parseToolBuild(PROBE_SNAPSHOT)).toMatchObject({ release: '6.0', year: 2023, outdated: false });
  });
  it('a release number alone decides; a snapshot without libavutil cannot be told', () => {
    expect(parseToolBuild('ffmpeg version n4.4.1 Copyright (c) 2000-2021')).toMatchObject({ outdated: true, year: 2021 });
    expect(parseToolBuild('ffmpeg version 7.1 Copyright (c) 2000-2024')).toMatchObject({ outdated: false });
    expect(parseToolBuild('ffmpeg version N-1-gabc Copyright (c) 2000-2019')).toMatchObject({ outdated: undefined });
    expect(parseToolBuild('not ffmpeg at all')).toBeUndefined();
  });
});
