#!/usr/bin/env node
// Runs the TypeScript CLI with Node's type stripping; on an older Node it re-runs itself with
// the Node 24 that the project pins as a devDependency.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const [major, minor] = process.versions.node.split('.').map(Number);
const main = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
if (major > 22 || (major === 22 && minor >= 18)) {
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
