// `npm run bench:profile`: a CPU profile of the server's thread while it takes REST creates
// (`POST /api/v1/images/text-to-image`, 32 in flight, the load generator in its own thread), or
// with BENCH_PROFILE_API=graphql the same create as the GraphQL mutation,
// summarised by where the self time goes: our code, each package, Node's internals, GC and idle.
// Writes the full profile (open it in Chrome DevTools or speedscope as a flame graph) beside the
// summary. Knobs: BENCH_PROFILE_API (rest), BENCH_PROFILE_REQUESTS (6000), BENCH_PROFILE_OUT
// (create.cpuprofile, graphql-create.cpuprofile).
import fs from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { httpLoad } from './http-load.ts';
import { CREATE_BODY, CREATE_PATH, GRAPHQL_CREATE_BODY } from './support/create-request.ts';
import { summarise, type Profile } from './support/profile-summary.ts';
import { startBenchService } from './support/service.ts';

const REQUESTS = Number(process.env.BENCH_PROFILE_REQUESTS ?? 6000);
const GRAPHQL = process.env.BENCH_PROFILE_API === 'graphql';
const OUT = process.env.BENCH_PROFILE_OUT ?? (GRAPHQL ? 'graphql-create.cpuprofile' : 'create.cpuprofile');

const svc = await startBenchService('profile');
try {
  const teams = await Promise.all(
    Array.from({ length: 64 }, async (_, i) => {
      const t = await svc.app.services.teams.createTeam({ name: `p${i}`, tier: 'pro', credits_limit: 10_000_000 });
      return (await svc.app.services.teams.createKey(t.id)).key;
    }),
  );
  const job = (requests: number) => ({
    origin: `https://127.0.0.1:${svc.http.port}`,
    path: GRAPHQL ? '/graphql' : CREATE_PATH,
    ca: svc.cert,
    keys: teams,
    body: GRAPHQL ? GRAPHQL_CREATE_BODY : CREATE_BODY,
    concurrency: 32,
    requests,
    seconds: 120,
    expectStatus: GRAPHQL ? 200 : 202,
    ...(GRAPHQL ? { expectText: '"generation_id"' } : {}),
  });
  await httpLoad(job(1000));
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  await session.post('Profiler.start');
  const load = await httpLoad(job(REQUESTS));
  const { profile } = (await session.post('Profiler.stop')) as unknown as { profile: Profile };
  session.disconnect();
  await fs.writeFile(OUT, JSON.stringify(profile));
  const rows = summarise(profile);
  const total = rows.reduce((n, [, us]) => n + us, 0);
  const busy = total - (rows.find(([k]) => k === '(idle)')?.[1] ?? 0);
  console.log(`${load.done} ${GRAPHQL ? 'GraphQL' : 'REST'} creates over 64 teams, ${((load.done / load.elapsedMs) * 1000).toFixed(0)}/s, ${load.errors} errors; server thread busy ${((busy / total) * 100).toFixed(0)} % of ${(total / 1e6).toFixed(1)} s; ${(busy / load.done).toFixed(0)} µs of its CPU per create`);
  console.log('self time, share of the busy time:');
  for (const [k, us] of rows.filter(([k]) => k !== '(idle)').slice(0, 20)) console.log(`  ${((us / busy) * 100).toFixed(1).padStart(5)} %  ${(us / load.done).toFixed(0).padStart(4)} µs/create  ${k}`);
  console.log(`full profile: ${OUT}`);
} finally {
  await svc.stop();
}
