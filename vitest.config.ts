import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

// One graphql module for the tests and the libraries they load, as under plain Node: otherwise
// vite's ESM copy and the libraries' CommonJS copy disagree on instanceof checks.
const graphqlEntry = createRequire(import.meta.url).resolve('graphql');

export default defineConfig({
  resolve: { alias: [{ find: /^graphql$/, replacement: graphqlEntry }] },
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    // Each file gets its own database cloned from a migrated template, so files run in parallel safely.
    pool: 'forks',
    // Two files at a time even on 2 cores (vitest's default there is one): most of a file's time is
    // spent waiting on PostgreSQL, child processes and sockets, so a second file fills the idle core.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
