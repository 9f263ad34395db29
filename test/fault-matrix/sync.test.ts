import { startSyncFake } from '../support/sync-fake.ts';
import { testVideo } from '../support/media-probe.ts';
import type { MatrixInputs } from './provider-matrix.ts';
import { productFace, runFaultMatrix, voiceover } from './runner.ts';

/*
 * sync.so (its TypeScript SDK and API reference, stored in test/contracts/sync/): the create is
 * sent under our attempt id as Idempotency-Key; a repeat of it while the first is still being
 * answered gets 503 IDEMPOTENCY_OUTCOME_UNKNOWN (the keyed uncertain outcome the create-with-files
 * page documents; sync's error-handling page: an IDEMPOTENCY_* answer authorises no fresh key).
 * Each generation has its own read; waiting ones are also read many at a time by id.
 */
const SYNC_KEY = 'sync-matrix-key';
const lipsync = (i: MatrixInputs) => ({ path: '/api/v1/videos/talking-avatar', body: { avatar_id: i.made.face, avatar_type: 'product', voiceover_id: i.made.voiceover, lipsync_model: 'lipsync-2.0' } });
const syncError = (status: number, extra: Record<string, unknown> = {}) => ({ status, body: { message: `the matrix answered ${status}`, statusCode: status, ...extra } });

runFaultMatrix({
  provider: 'sync',
  async start() {
    const sync = await startSyncFake({ key: SYNC_KEY, webhookSecret: 'unused', video: await testVideo({ width: 64, height: 36, seconds: 1 }), pollsUntilDone: 1 });
    return {
      target: sync.url,
      env: (url) => ({ SYNC_API_KEY: SYNC_KEY, SYNC_API_URL: url, ENGINE_ROUTES: 'lipsync-2.0=sync,*=local' }),
      billed: () => ({ sync: sync.submits.length }),
      close: () => sync.close(),
    };
  },
  prepare: async (i) => ({ voiceover: await voiceover(i), face: await productFace(i) }),
  calls: [
    {
      name: 'POST /v2/generate (submit)',
      method: 'POST',
      path: /^\/v2\/generate$/,
      inProgress: syncError(503, { message: 'The outcome of the first request with this Idempotency-Key is not known yet; retry with the same key and payload.', errorCode: 'IDEMPOTENCY_OUTCOME_UNKNOWN' }),
      create: lipsync,
    },
    { name: 'GET /v2/generate/{id} (read)', method: 'GET', path: /^\/v2\/generate\/[^/]+$/, create: lipsync },
    { name: 'GET /v2/generations?ids= (two read at once)', method: 'GET', path: /^\/v2\/generations$/, generations: 2, create: lipsync },
  ],
  // The SDK's GenerationError {message, statusCode} (common/types/GenerationError.ts); a 429 as sync's rate-limits page shows it.
  errorAnswer: (status) => syncError(status, status === 429 ? { errorCode: 'rate_limit_exceeded' } : {}),
});
