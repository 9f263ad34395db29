import path from 'node:path';
import { Agent, request } from 'undici';
import { UNLIMITED_RATE } from '../../test/support/app.ts';
import { startFalFake } from '../../test/support/fal-fake.ts';
import { startHeyGenFake } from '../../test/support/heygen-fake.ts';
import { sendBytes, startImageHost } from '../../test/support/image-host.ts';
import { testVideo } from '../../test/support/media-probe.ts';
import { startSubmagicFake } from '../../test/support/submagic-fake.ts';
import { freePort } from '../../src/db/ports.ts';
import { startPostgres } from '../soak/cluster.ts';
import { startApiAndWorker } from '../support/api-and-worker.ts';

export type Provider = 'fal' | 'heygen' | 'submagic';
export const PROVIDERS: readonly Provider[] = ['fal', 'heygen', 'submagic'];

const KEYS = { fal: 'inflight-fal-key:9c1e', heygen: 'inflight-heygen-key-4d2a', submagic: 'inflight-submagic-key-7b3f' };

/** Variables of the operator's that reach the service as they are (a poll budget, the poll interval), never a key or a URL. */
const PASSED = /^(UPSTREAM_|WORKER_|FAL_|HEYGEN_|SUBMAGIC_|SYNC_|GENERATION_)/;
const passedThrough = (): Record<string, string> =>
  Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => PASSED.test(e[0]) && !/_(KEY|URL)$/.test(e[0]) && e[1] !== undefined));

/** `requests/seconds[,requests/seconds...]`, as the service reads a `<P>_POLL_BUDGET`. */
export type BudgetWindows = Array<{ requests: number; seconds: number }>;
export const parseBudget = (text: string): BudgetWindows =>
  text.split(',').map((w) => {
    const [r, s] = w.trim().split('/').map(Number);
    return { requests: r!, seconds: s! };
  });

/**
 * The scenario: webhooks on (fal signs them, HeyGen calls back at each attempt's URL), their
 * jobs polled only as the 5 min safety net; Submagic polled. Each provider's budget matches its
 * fake's limit (the fake answers 429 a tenth past it): fal and HeyGen publish no read limit, so
 * theirs are set to carry a third of the jobs ending over the spread by webhook; Submagic's is the
 * raised hourly limit (see BENCH_INFLIGHT_SUBMAGIC_READS_PER_HOUR). Each is overridden by the variable.
 * The worker's concurrency is raised to 16: its jobs here are submits and looks that wait on a provider.
 */
export function serviceDefaults(submagicReadsPerHour: number): Record<string, string> {
  return {
    FAL_POLL_BUDGET: '20/1',
    HEYGEN_POLL_BUDGET: '20/1',
    SUBMAGIC_POLL_BUDGET: `${submagicReadsPerHour}/3600`,
    UPSTREAM_HOOKED_POLL_MS: '300000',
    // A submit and a look mostly wait on the network: more of them at once than the default 4 renders.
    WORKER_CONCURRENCY: '16',
    ...passedThrough(),
  };
}

export interface WorldOptions {
  dir: string;
  /** When each job ends, from its submit (ms): asked once per job by its fake. */
  finishAfterMs: () => number;
  /** Submagic project reads an hour, for both the fake's limit and the service's SUBMAGIC_POLL_BUDGET. */
  submagicReadsPerHour: number;
  log: (line: string) => void;
}

/**
 * The in-flight bench's world: PostgreSQL, the three providers' fakes (in this process, so the
 * worker's CPU is its own), one `adforge serve` (the create path and the webhooks) and ONE `adforge
 * worker`, each a process of its own, with one team and its key.
 */
export async function startWorld(o: WorldOptions) {
  const cleanups: Array<() => Promise<unknown>> = [];
  const close = async () => {
    for (const c of cleanups.reverse()) await c().catch((e: unknown) => o.log(`cleanup: ${(e as Error).message}`));
  };
  try {
    const db = await startPostgres(o.dir, (line) => o.log(`postgres: ${line}`));
    cleanups.push(() => db.handle.stop());
    const video = await testVideo({ width: 160, height: 90, seconds: 1 });
    const settings = serviceDefaults(o.submagicReadsPerHour);
    // The fake's limit: the budget's strictest window, a tenth over (a read's trip may bunch two).
    const strictest = (text: string) => parseBudget(text).sort((a, b) => b.seconds / b.requests - a.seconds / a.requests)[0]!;
    const over = (w: { requests: number; seconds: number }) => ({ requests: Math.ceil(w.requests * 1.1), perMs: w.seconds * 1000 });
    const fal = await startFalFake({ key: KEYS.fal, video, finishAfterMs: o.finishAfterMs });
    // callbackAfterMs: HeyGen calls back when each job ends (its finishAt).
    const heygen = await startHeyGenFake({ key: KEYS.heygen, video, finishAfterMs: o.finishAfterMs, callbackAfterMs: 0, readLimit: { ...over(strictest(settings.HEYGEN_POLL_BUDGET!)), retryAfterSeconds: 1 } });
    const submagic = await startSubmagicFake({ key: KEYS.submagic, video, projectReads: over(strictest(settings.SUBMAGIC_POLL_BUDGET!)), finishAfterMs: o.finishAfterMs });
    // The inputs' link: HeyGen's and Submagic's fakes take it as a URL and never fetch it.
    const host = await startImageHost({ '/in.mp4': sendBytes(video, 'video/mp4') });
    cleanups.push(fal.close, heygen.close, submagic.close, host.close);

    const port = await freePort();
    const dataDir = path.join(o.dir, 'data');
    const env: Record<string, string> = {
      // Webhooks reach the API node; the worker names it in what it submits.
      PUBLIC_BASE_URL: `https://127.0.0.1:${port}`,
      HOST: '127.0.0.1',
      DATABASE_URL: db.url,
      DATA_DIR: dataDir,
      FILES_SIGNING_SECRET: 'inflight-files-signing-secret-0123456789abcdef',
      RATE_LIMIT_TIERS: UNLIMITED_RATE,
      ALLOW_PRIVATE_NETWORK_URLS: 'true',
      LOG_LEVEL: 'warn',
      FAL_KEY: KEYS.fal,
      FAL_QUEUE_URL: fal.url,
      FAL_JWKS_URL: `${fal.url}/.well-known/jwks.json`,
      HEYGEN_API_KEY: KEYS.heygen,
      HEYGEN_API_URL: heygen.url,
      SUBMAGIC_API_KEY: KEYS.submagic,
      SUBMAGIC_API_URL: submagic.url,
      ENGINE_ROUTES: 'kling-2.6=fal,localize=heygen,video-edit=submagic,*=local',
      GENERATION_TIMEOUT_SECONDS: '7200',
      METRICS_PORT: '0',
      ...settings,
    };
    const svc = await startApiAndWorker(env, port, { name: 'In flight', credits: 2_000_000_000 });
    cleanups.push(svc.stop);
    const agent = new Agent({ connect: { ca: svc.ca }, connections: 32, keepAliveTimeout: 10_000 });
    cleanups.push(() => agent.close());

    /** One create of the provider's kind, through REST: the generation id, or the refusal thrown. */
    const create = async (provider: Provider, i: number): Promise<string> => {
      const [p, body] =
        provider === 'fal'
          ? ['/videos/ai-video', { model: 'kling-2.6', prompt: `in flight ${i}`, aspect_ratio: '16:9', duration: 5 }]
          : provider === 'heygen'
            ? ['/videos/localize', { video_url: host.url('/in.mp4'), mode: 'speed', output_language: 'es', duration: 10, width: 1280, height: 720 }]
            : ['/videos/edit', { template_id: 'bold-pop', video_url: host.url('/in.mp4'), language: 'en' }];
      const res = await request(`https://127.0.0.1:${port}/api/v1${p}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${svc.key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        dispatcher: agent,
      });
      const text = await res.body.text();
      if (res.statusCode !== 202) throw new Error(`${provider} create: ${res.statusCode} ${text.slice(0, 300)}`);
      return JSON.parse(text).generation_id as string;
    };

    const pids = { worker: svc.worker.child.pid!, api: svc.api.child.pid!, 'bench + fakes': process.pid };
    const workerTail = () => {
      const out = svc.worker.output();
      return `${out?.stdout ?? ''}${out?.stderr ?? ''}`.trim().split('\n').slice(-10);
    };
    return { db, fal, heygen, submagic, create, pids, env, workerTail, close };
  } catch (e) {
    await close();
    throw e;
  }
}
export type World = Awaited<ReturnType<typeof startWorld>>;
