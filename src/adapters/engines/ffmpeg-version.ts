/**
 * What `ffmpeg -version` (or ffprobe's) says about a build: its version string, the last year of
 * its copyright line, and libavutil's version, which a git snapshot ("N-47683-g0e8eb07980") has
 * in place of a release number.
 */
export interface ToolBuild {
  version: string;
  year: number | undefined;
  /** The ffmpeg release it is, or the last one before it (by libavutil for a git snapshot). */
  release: string | undefined;
  /** Older than ffmpeg 5.1 (Debian 12's, the oldest maintained one we name); undefined when it cannot tell. */
  outdated: boolean | undefined;
}

// libavutil's version in each ffmpeg release x.y.0, oldest first.
const RELEASES: [release: string, major: number, minor: number][] = [
  ['4.0', 56, 14], ['4.1', 56, 22], ['4.2', 56, 31], ['4.3', 56, 51], ['4.4', 56, 70],
  ['5.0', 57, 17], ['5.1', 57, 28], ['6.0', 58, 2], ['6.1', 58, 29], ['7.0', 59, 8], ['7.1', 59, 39], ['8.0', 60, 8],
];
const OLDEST_CURRENT: [number, number] = [57, 28]; // 5.1

const before = (a: [number, number], b: [number, number]) => a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]);

export function parseToolBuild(text: string): ToolBuild | undefined {
  const head = /^\s*ff(?:mpeg|probe) version (\S+)/m.exec(text);
  if (!head) return undefined;
  const version = head[1]!;
  const years = /Copyright \(c\) (?:\d{4}-)?(\d{4})/.exec(text);
  const avutil = /^\s*libavutil\s+(\d+)\.\s*(\d+)\./m.exec(text);
  const numbered = /^n?(\d+)\.(\d+)/.exec(version);
  let release: string | undefined;
  let outdated: boolean | undefined;
  if (numbered) {
    release = version;
    outdated = before([Number(numbered[1]), Number(numbered[2])], [5, 1]);
  } else if (avutil) {
    const v: [number, number] = [Number(avutil[1]), Number(avutil[2])];
    release = RELEASES.filter(([, major, minor]) => !before(v, [major, minor])).at(-1)?.[0];
    outdated = before(v, OLDEST_CURRENT);
  }
  return { version, year: years ? Number(years[1]) : undefined, release, outdated };
}

/** How a build is named in a message: "4.4.2-0ubuntu0.22.04.1 (2021)", "N-47683-g0e8eb07980-static (a 4.1 build, 2018)". */
export function describeBuild(b: ToolBuild): string {
  const what = b.release && b.release !== b.version ? `a ${b.release} build` : undefined;
  const when = b.year ? String(b.year) : undefined;
  const detail = [what, when].filter(Boolean).join(', ');
  return detail ? `${b.version} (${detail})` : b.version;
}
