#!/usr/bin/env node
// Runs the TypeScript CLI with Node's type stripping; on an older Node it re-runs itself with
// the Node 24 that the project pins as a devDependency.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import module from 'node:module';
import { fileURLToPath } from 'node:url';

const [major, minor] = process.versions.node.split('.').map(Number);
const main = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
if (major > 22 || (major === 22 && minor >= 18)) {
  // Node keeps the type-stripped, compiled modules on disk (the OS's temp folder, or
  // $NODE_COMPILE_CACHE): later commands neither load the TypeScript stripper nor compile again,
  // which halves an admin command's start (bench/RESULTS.md). This file is JavaScript so that
  // the cache is on before the first TypeScript file loads.
  module.enableCompileCache?.();
  await import(main);
} else {
  const pinned = fileURLToPath(new URL('../node_modules/node/bin/node', import.meta.url));
  if (!existsSync(pinned)) {
    console.error(`adforge needs Node >= 22.18 (this is ${process.version}); run npm install first`);
    process.exit(1);
  }
  const r = spawnSync(pinned, [main, ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}
