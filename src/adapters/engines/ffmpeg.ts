import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { addAbortSignal, Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ACCEPTED_MEDIA, sniffMedia, sniffMediaStream, type Demuxer, type MediaKind } from '../media/sniff.ts';
import { ChildFailure, describeExit, runChild, ToolError } from './child-process.ts';
import { loadMediaToolPaths, type MediaToolPaths } from './media-tools.ts';
import { EngineError } from './render-job.ts';

// ffmpeg and ffprobe are GPL builds: they are run as separate processes, never linked.
// Which binaries run is decided here alone: FFMPEG_PATH / FFPROBE_PATH (the configuration the
// service started with, else the environment), or the npm packages' own binaries. Those are resolved
// lazily: the installer packages throw at require time when their binary is missing.
const require = createRequire(import.meta.url);
let chosen: Readonly<MediaToolPaths> | undefined;
let ffmpegBinary: string | undefined;
let ffprobeBinary: string | undefined;

/** The binaries every later run uses (the service calls this at start with its configuration). */
export function useMediaTools(paths: Readonly<MediaToolPaths>): void {
  chosen = paths;
  ffmpegBinary = undefined;
  ffprobeBinary = undefined;
}

export function ffmpegPath(): string {
  ffmpegBinary ??= mediaTool('ffmpeg').path;
  return ffmpegBinary;
}

export function ffprobePath(): string {
  ffprobeBinary ??= mediaTool('ffprobe').path;
  return ffprobeBinary;
}

export type MediaTool = 'ffmpeg' | 'ffprobe';

/** Where `tool` is, and what chose it (the setting's name, or the npm package): for messages that tell an operator what to change. */
export function mediaTool(tool: MediaTool): { path: string; chosenBy: string } {
  chosen ??= loadMediaToolPaths();
  const setting = tool === 'ffmpeg' ? 'FFMPEG_PATH' : 'FFPROBE_PATH';
  const configured = chosen[tool];
  if (configured) return { path: configured, chosenBy: setting };
  const pkg = tool === 'ffmpeg' ? '@ffmpeg-installer/ffmpeg' : '@ffprobe-installer/ffprobe';
  return { path: installedBinary(pkg, setting), chosenBy: `the ${pkg} package's binary; ${setting} unset` };
}

function installedBinary(pkg: string, setting: string): string {
  try {
    return (require(pkg) as { path: string }).path;
  } catch (err) {
    // The installers throw plain strings; make it an error that says what is missing.
    throw new FfmpegError(`${pkg} has no binary for this platform (set ${setting} to one): ${String(err)}`, 'spawn', '', err);
  }
}

export interface RunOptions {
  signal?: AbortSignal;
  /** Kill the process after this long; default 10 minutes. */
  timeoutMs?: number;
  cwd?: string;
}

export type FfmpegFailure = 'failed' | 'timeout' | 'spawn';

/** An ffmpeg or ffprobe run that did not succeed. */
export class FfmpegError extends ToolError<FfmpegFailure> {
  override readonly name = 'FfmpegError';
}

const STDERR_TAIL = 8 * 1024;
const STDOUT_MAX = 4 * 1024 * 1024;
const DEFAULT_TIMEOUT_MS = 10 * 60_000;

/** Runs a binary; resolves with its stdout. On abort rejects with `signal.reason`, the AbortSignal convention. */
async function runTool(binary: string, args: string[], opts: RunOptions): Promise<string> {
  const tool = path.basename(binary);
  let exit;
  try {
    exit = await runChild(binary, args, {
      signal: opts.signal,
      timeoutMs: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      cwd: opts.cwd,
      maxStdout: STDOUT_MAX,
      stderrTail: STDERR_TAIL,
    });
  } catch (e) {
    if (e instanceof ChildFailure) {
      throw new FfmpegError(`${tool} ${e.message}`, e.kind === 'spawn' ? 'spawn' : 'timeout', e.stderr, e.cause);
    }
    throw e;
  }
  if (exit.code === 0) return exit.stdout.toString('utf8');
  throw new FfmpegError(`${tool} ${describeExit(exit, 3)}`, 'failed', exit.stderr);
}

/*
 * Input media. ffmpeg left to itself guesses a file's container from its bytes and then follows
 * whatever the container names: an HLS playlist's segments, a QuickTime reference, a concat list.
 * A user's file that starts as a playlist would make the worker fetch URLs or read other files on
 * its disk. So media from outside is sniffed first (only the containers in media/sniff.ts), written
 * under its own extension, and opened with the demuxer we chose (`-f`) and the file protocol alone
 * (`-protocol_whitelist file`): by ffprobe and by ffmpeg alike.
 */

/** Input media on our disk, with the demuxer its sniffed container is opened with. */
export interface MediaFile {
  path: string;
  demuxer: Demuxer;
}

/** Media whose container is not one we take: refused before any tool reads it. */
export class UnsupportedMediaError extends EngineError {
  readonly kind: MediaKind;
  constructor(kind: MediaKind) {
    super(`the input ${kind} is not a file we take: ${ACCEPTED_MEDIA[kind]}`, { transient: false });
    this.name = 'UnsupportedMediaError';
    this.kind = kind;
  }
}

/** Sniffs `bytes` and writes them to `dir` as `name` plus the container's extension; refuses what we do not take. */
export async function writeMedia(dir: string, name: string, bytes: Buffer, kind: MediaKind): Promise<MediaFile> {
  const type = await sniffMedia(bytes, kind);
  if (!type) throw new UnsupportedMediaError(kind);
  const file = path.join(dir, `${name}.${type.ext}`);
  await fs.writeFile(file, bytes);
  return { path: file, demuxer: type.demuxer };
}

/**
 * `writeMedia` for media of any size: sniffed from the stream's first bytes, then written to disk
 * as it arrives, never whole in memory. A refused container is not written at all.
 */
export async function writeMediaStream(dir: string, name: string, stream: Readable, kind: MediaKind, signal?: AbortSignal): Promise<MediaFile> {
  // An abort ends a source that stalls while it is sniffed, too.
  if (signal) addAbortSignal(signal, stream);
  const sniffed = await sniffMediaStream(stream, kind);
  if (!sniffed.type) {
    sniffed.stream.destroy();
    throw new UnsupportedMediaError(kind);
  }
  const file = path.join(dir, `${name}.${sniffed.type.ext}`);
  await pipeline(sniffed.stream, createWriteStream(file, { flags: 'wx' }), ...(signal ? [{ signal }] : []));
  return { path: file, demuxer: sniffed.type.demuxer };
}

/** Options that make ffmpeg or ffprobe open an input with `demuxer` and nothing but local files. */
export function openWith(demuxer: string): string[] {
  return ['-protocol_whitelist', 'file', '-f', demuxer];
}

/** `-i input`, opened with its demuxer and the file protocol only; `before` are further input options (e.g. `-stream_loop`). */
export function inputArgs(input: MediaFile, before: string[] = []): string[] {
  return [...before, ...openWith(input.demuxer), '-i', input.path];
}

/**
 * The full ffmpeg command line for `args`. Any input given without a protocol whitelist (our own
 * PNGs, concat lists, lavfi sources) gets the file-only one too: no input of ours opens a network
 * protocol, and one that names another file (a concat list) passes the whitelist on.
 */
export function ffmpegArgs(args: string[]): string[] {
  const out = ['-hide_banner', '-nostdin', '-loglevel', 'error', '-y'];
  let group: string[] = []; // the options of the input being read (or, at the end, the output's)
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg !== '-i') {
      group.push(arg);
      continue;
    }
    if (!group.includes('-protocol_whitelist')) group.push('-protocol_whitelist', 'file');
    out.push(...group, '-i', args[++i] ?? '');
    group = [];
  }
  return [...out, ...group];
}

/** Runs ffmpeg (quiet, no stdin: a stray prompt would hang it) and resolves when it exits 0. */
export async function runFfmpeg(args: string[], opts: RunOptions = {}): Promise<void> {
  await runTool(ffmpegPath(), ffmpegArgs(args), opts);
}

export interface MediaInfo {
  durationSeconds: number | null;
  width: number | null;
  height: number | null;
  videoCodec: string | null;
  audioCodec: string | null;
  /** e.g. `yuv420p`. */
  pixelFormat: string | null;
  /** ffprobe's format_name, e.g. `mov,mp4,m4a,3gp,3g2,mj2`. */
  format: string | null;
}

interface ProbeStream {
  codec_type?: string;
  codec_name?: string;
  pix_fmt?: string;
  width?: number;
  height?: number;
  duration?: string;
  disposition?: { attached_pic?: number };
}
interface ProbeOutput {
  streams?: ProbeStream[];
  format?: { duration?: string; format_name?: string };
}

/**
 * Reads media's shape with ffprobe. Bytes or a stream (a stored object) are sniffed first (`kind`
 * says which containers are taken; by default any we take) and go to a temp file: MP4s are not
 * seekable from a pipe. A file of ours is probed where it lies.
 */
export async function probeMedia(input: Buffer | Readable | MediaFile, opts: RunOptions & { tmpRoot?: string; kind?: MediaKind } = {}): Promise<MediaInfo> {
  if (!Buffer.isBuffer(input) && !(input instanceof Readable)) return parseProbe(await runTool(ffprobePath(), probeArgs(input), { timeoutMs: 60_000, ...opts }));
  const dir = await fs.mkdtemp(path.join(opts.tmpRoot ?? os.tmpdir(), 'adforge-probe-'));
  try {
    const kind = opts.kind ?? 'audio';
    const file = Buffer.isBuffer(input) ? await writeMedia(dir, 'media', input, kind) : await writeMediaStream(dir, 'media', input, kind, opts.signal);
    return parseProbe(await runTool(ffprobePath(), probeArgs(file), { timeoutMs: 60_000, ...opts }));
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

/** ffprobe's command line for `input`: its demuxer, the file protocol only, JSON out. */
export function probeArgs(input: MediaFile): string[] {
  return ['-v', 'error', ...openWith(input.demuxer), '-print_format', 'json', '-show_format', '-show_streams', input.path];
}

function parseProbe(json: string): MediaInfo {
  const out = JSON.parse(json) as ProbeOutput;
  const streams = out.streams ?? [];
  // Cover art in an MP3 shows up as a video stream: it is not video.
  const video = streams.find((s) => s.codec_type === 'video' && s.disposition?.attached_pic !== 1);
  const audio = streams.find((s) => s.codec_type === 'audio');
  const seconds = (v: string | undefined) => (v !== undefined && Number.isFinite(Number(v)) ? Number(v) : null);
  const streamMax = Math.max(...streams.map((s) => seconds(s.duration) ?? 0), 0);
  return {
    durationSeconds: seconds(out.format?.duration) ?? (streamMax > 0 ? streamMax : null),
    width: video?.width ?? null,
    height: video?.height ?? null,
    videoCodec: video?.codec_name ?? null,
    audioCodec: audio?.codec_name ?? null,
    pixelFormat: video?.pix_fmt ?? null,
    format: out.format?.format_name ?? null,
  };
}

/** `<tool> -version`'s text (its first line names the version and the copyright years). */
export async function mediaToolVersion(tool: MediaTool): Promise<string> {
  return runTool(mediaTool(tool).path, ['-version'], { timeoutMs: 15_000 });
}
