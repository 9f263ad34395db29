import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/log.ts';
import { startWorker } from '../../src/worker.ts';

/*
 * `adforge worker` in two steps, for a test that kills a worker process at a moment it chooses:
 * the process builds the app at once (modules loaded, database open) and prints `built`; it takes
 * jobs only once sent SIGUSR2, and prints `working`. Starting it ahead keeps its start-up out of
 * the test's time; what runs the jobs is the worker `adforge worker` runs.
 */
const config = loadConfig(process.env);
const app = await buildApp(config, createLogger(config.logLevel), { seed: false });
process.once('SIGUSR2', () => {
  void startWorker(app).then(() => process.stdout.write('working\n'));
});
// Nothing else holds the event loop open until the signal comes.
setInterval(() => {}, 1 << 30);
process.stdout.write('built\n');
