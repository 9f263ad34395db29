import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline/promises';
import type { Command } from 'commander';
import { print } from './output.ts';
import { withApp } from './with-app.ts';

type Json = { json?: boolean };

/** Asks on the terminal; anything but the team's id typed back is a no. */
async function confirmed(teamId: string): Promise<boolean> {
  if (!process.stdin.isTTY) return false;
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await rl.question(`This deletes team ${teamId} for good: every key, session, generation, file and setting. Type the team id to confirm: `);
    return answer.trim() === teamId;
  } finally {
    rl.close();
  }
}

/** `adforge team export` and `adforge team delete`: a team's data as one archive, and its erasure. */
export function registerTeamDataCommands(team: Command): void {
  team
    .command('export')
    .description("everything of a team as one .tar.gz: generations (JSON and files), ledger (CSV), products, brands, avatars, voiceovers, campaigns with their rows, members, API keys (hints only), webhook deliveries; README.txt inside says what each file is")
    .requiredOption('--team <team_id>')
    .requiredOption('--out <file>', 'where to write the archive (.tar.gz)')
    .option('--json', 'print one JSON object')
    .action((o: Json & { team: string; out: string }) =>
      withApp(o, async (app) => {
        const target = path.resolve(o.out);
        // Written beside the target and renamed at the end: a failed export leaves no file that looks whole.
        const partial = `${target}.partial`;
        try {
          const summary = await app.services.teamExporter.write(o.team, createWriteStream(partial, { flags: 'w', mode: 0o600 }));
          await rename(partial, target);
          print({ ...summary, file: target }, o);
        } catch (e) {
          await rm(partial, { force: true });
          throw e;
        }
      }),
    );

  team
    .command('delete')
    .description("deletes a team: revokes every key and session at once, cancels (and refunds) what is processing, deletes every row and stored file; the team's id, ledger, top-ups and generation tombstones stay for the accounts. Safe to run again")
    .requiredOption('--team <team_id>')
    .option('--yes', 'do not ask for confirmation')
    .option('--json', 'print one JSON object')
    .action((o: Json & { team: string; yes?: boolean }) =>
      withApp(o, async (app) => {
        if (!o.yes && !(await confirmed(o.team))) {
          process.stderr.write('adforge: not deleted (confirm by typing the team id, or pass --yes)\n');
          process.exitCode = 1;
          return;
        }
        print({ ...(await app.services.teamDeleter.remove(o.team)) }, o);
      }),
    );
}
