// `npm run bench:tts`: how long a synchronous POST /api/v1/voiceovers/text-to-speech of 250
// characters takes end to end (HTTPS, key check, eSpeak NG in a child process, MP3 encode,
// storage, debit), one call at a time. Median and p90 over N calls; knobs: BENCH_CALLS (30).
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import { VOICES } from '../src/domain/catalogue/voices.ts';
import { startBenchService } from './support/service.ts';

const CALLS = Number(process.env.BENCH_CALLS ?? 30);
const TEXT = 'Meet the trail shoe built for long days outside. Light enough to forget, tough enough for rock and mud, and grippy on wet stone. Order today and get free returns for thirty days. Your next adventure starts with the right pair of shoes, so lace up!';

const svc = await startBenchService('tts');
try {
  const { http } = svc;
  const dispatcher = new Agent({ connect: { ca: svc.cert } });
  const key = { key: svc.team.key };
  const call = async (i: number) => {
    const t0 = performance.now();
    const res = await request(`https://127.0.0.1:${http.port}/api/v1/voiceovers/text-to-speech`, {
      method: 'POST',
      dispatcher,
      headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ text: `${TEXT.slice(0, 249 - String(i).length)} ${i}`, voice_id: VOICES[i % VOICES.length]!.id }),
    });
    const body = (await res.body.json()) as { duration?: number };
    if (res.statusCode !== 201) throw new Error(`answered ${res.statusCode}: ${JSON.stringify(body)}`);
    return { ms: performance.now() - t0, seconds: body.duration ?? 0 };
  };
  for (let i = 0; i < 3; i++) await call(1000 + i); // warm-up: first child process start, JIT
  const runs = [];
  for (let i = 0; i < CALLS; i++) runs.push(await call(i));
  const ms = runs.map((r) => r.ms).sort((a, b) => a - b);
  const at = (q: number) => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))]!;
  const audio = runs.map((r) => r.seconds).sort((a, b) => a - b);
  console.log(`text-to-speech, 250 characters, ${CALLS} sequential calls over ${VOICES.length} voices (${os.availableParallelism()} cores)`);
  console.log(`median ${at(0.5).toFixed(0)} ms, p90 ${at(0.9).toFixed(0)} ms, min ${ms[0]!.toFixed(0)} ms, max ${ms.at(-1)!.toFixed(0)} ms; median audio ${audio[Math.floor(audio.length / 2)]!.toFixed(1)} s`);
  await dispatcher.close();
} finally {
  await svc.stop();
}
