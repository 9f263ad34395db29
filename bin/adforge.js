#!/usr/bin/env node
// Runs the TypeScript CLI with Node's type stripping; on an older Node it re-runs itself with
// the Node 24 that the project pins as a devDependency.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import module from 'node:module';
import os, { constants } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const [major, minor] = process.versions.node.split('.').map(Number);
const main = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
/**
 * Where Node keeps the type-stripped, compiled modules: $NODE_COMPILE_CACHE when set (Node's own
 * variable), else the user's own cache folder, $XDG_CACHE_HOME or ~/.cache, under adforge/. Never
 * the shared temp folder (Node's default), where another local user could leave compiled code for
 * this process to run.
 */
function compileCacheDir() {
  if (process.env.NODE_COMPILE_CACHE) return process.env.NODE_COMPILE_CACHE;
  const xdg = process.env.XDG_CACHE_HOME;
  let home = '';
  try {
    home = os.homedir();
  } catch {
    // A user without a home folder (some service accounts): no cache.
  }
  const base = xdg && path.isAbsolute(xdg) ? xdg : home && path.join(home, '.cache');
  return base ? path.join(base, 'adforge', 'compile-cache') : undefined;
}

if (major > 22 || (major === 22 && minor >= 18)) {
  // Later commands neither load the TypeScript stripper nor compile again, which halves an admin
  // command's start (bench/RESULTS.md). This file is JavaScript so that the cache is on before the
  // first TypeScript file loads. A folder that cannot be made or written leaves the cache off
  // (Node reports it and goes on): the command runs, only slower.
  const dir = compileCacheDir();
  if (dir) module.enableCompileCache?.(dir);
  await import(main);
} else {
  const pinned = fileURLToPath(new URL('../node_modules/node/bin/node', import.meta.url));
  if (!existsSync(pinned)) {
    console.error(`adforge needs Node >= 22.18 (this is ${process.version}); run npm install first`);
    process.exit(1);
  }
  // This process stands in for the CLI towards whoever started it (a shell, `kill`, `timeout`,
  // a process manager): the signals that stop a process are passed on, and this process ends only
  // once the CLI has, the way the CLI did. Every copy is passed on, a repeat too: the service
  // drains once and ignores a repeat (src/cli/run-commands.ts), so a copy the CLI also received
  // itself (a terminal's Ctrl-C, `timeout` or a group stop signal the whole process group) costs
  // nothing, and passing on less could lose the only copy.
  const FORWARDED = ['SIGTERM', 'SIGINT', 'SIGHUP'];
  let child;
  const forward = (signal) => child?.kill(signal);
  for (const s of FORWARDED) process.on(s, forward);
  // The child runs this file again, so that it turns the compile cache on as above.
  child = spawn(pinned, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
  child.once('error', (e) => {
    console.error(`adforge: could not run ${pinned}: ${e.message}`);
    process.exit(1);
  });
  child.once('exit', (code, signal) => {
    if (signal === null) process.exit(code ?? 1);
    // The CLI was ended by a signal: end this process by the same one rather than with an exit
    // code, so that the parent learns what it would have learnt from the CLI itself (a shell stops
    // a script on a Ctrl-C only when its command died of SIGINT; a process manager reports the
    // signal). A signal that does not end a Node process falls back to a shell's 128 + n.
    for (const s of FORWARDED) process.removeListener(s, forward);
    process.kill(process.pid, signal);
    setTimeout(() => process.exit(128 + (constants.signals[signal] ?? 0)), 1000);
  });
}
