import type { TestService } from '../support/app.ts';
import type { ProviderAnswer } from './faults.ts';

/** What a cell's generation can be made from: inputs served by a host of the test, a catalogue avatar and voice. */
export interface MatrixInputs {
  svc: TestService;
  /** A PNG face and an MP4 clip, at public-looking links the providers' fakes and adforge can read. */
  faceUrl: string;
  clipUrl: string;
  /** A platform avatar and a catalogue voice of the service's catalogue. */
  avatarId: string;
  voiceId: string;
  /** The team every cell's generations belong to, and its key. */
  teamId: string;
  key: string;
  /** What the provider's `prepare` made once for every cell (a voiceover, a finished video). */
  made: Record<string, string>;
}

/** A call adforge makes to the provider that can start billable work or decide a job's end. */
export interface MatrixCall {
  /** As the table shows it: the method and path, and what the call is for. */
  name: string;
  method: 'GET' | 'POST' | 'PUT';
  /** The request's path at the provider (the query left out). */
  path: RegExp;
  /** Matching requests let through before the faulted one (the second image of two). */
  skip?: number;
  /** The provider's own answer to a repeat of this request while the first one under its idempotency key runs; absent: the call has no key (n/a). */
  inProgress?: ProviderAnswer;
  /** How many billable jobs of each fake one generation of this call may pay for (default 1 each). */
  units?: Record<string, number>;
  /**
   * Generations the cell makes with the same request (default 1): a read of many jobs at once
   * (HeyGen's list, sync's list) is made only while several are waiting.
   */
  generations?: number;
  /** The generation that makes this call: the create endpoint and its body. */
  create(i: MatrixInputs): Promise<{ path: string; body: Record<string, unknown> }> | { path: string; body: Record<string, unknown> };
}

/** The provider's fakes, started: the one the proxy stands in front of, and how the service reaches them. */
export interface ProviderFakes {
  /** The origin of the fake whose calls are faulted (the proxy forwards to it). */
  target: string;
  /** The service's settings, with the faulted provider reached at `proxyUrl`. */
  env(proxyUrl: string): Record<string, string>;
  /** Billable jobs each fake has accepted so far (a replay under an idempotency key is not a job). */
  billed(): Record<string, number>;
  /** A fake that works in real time (ComfyUI runs its queue): true while it is working, so the clock waits for it. */
  busy?(): boolean;
  close(): Promise<void>;
}

/** One provider's rows of the matrix. */
export interface ProviderMatrix {
  provider: string;
  start(): Promise<ProviderFakes>;
  calls: MatrixCall[];
  /**
   * Each cell's worker runs on an app built for it: for an engine that remembers what it learnt of
   * the provider in memory (ComfyUI: whether a server has its jobs API), so that what one cell's
   * fault taught it does not change the next cell.
   */
  freshWorkerPerCell?: boolean;
  /** Made once before the cells, for their requests (ids by name, in `MatrixInputs.made`). */
  prepare?(i: MatrixInputs): Promise<Record<string, string>>;
  /** The provider's error answer for a status (its body, and where it names a wait in the body, that wait). */
  errorAnswer(status: number, retryAfterSeconds?: number): ProviderAnswer;
}
