import { type Command, InvalidArgumentError } from 'commander';
import { print } from './output.ts';
import { withApp } from './with-app.ts';

type Json = { json?: boolean };

/** `adforge storage show|recount`: a team's stored bytes, and the one-off recount of sizes from storage. */
export function registerStorageCommands(program: Command): void {
  const storage = program.command('storage').description("teams' storage usage (bytes of outputs, inputs and uploads) and its quota");
  storage
    .command('show')
    .description("a team's stored bytes by kind, and its tier's quota (null: none)")
    .requiredOption('--team <team_id>')
    .option('--json', 'print one JSON object')
    .action((o: Json & { team: string }) => withApp(o, async (app) => print({ ...(await app.services.storageUsage.show(o.team)) }, o)));
  storage
    .command('recount')
    .description('read the size of every file the rows of a team (--team ID) or of every team (--all) name from storage, and record it where it differs: once after upgrading, for rows written before sizes were recorded')
    .option('--team <team_id>')
    .option('--all', 'every team that is not deleted')
    .option('--json', 'print one JSON object')
    .action((o: Json & { team?: string; all?: boolean }) =>
      withApp(o, async (app) => {
        if (!o.team === !o.all) throw new InvalidArgumentError('give --team ID or --all');
        const usage = app.services.storageUsage;
        const ids = o.all ? await usage.teamIds() : [(await usage.show(o.team!)).team_id];
        let rows = 0;
        for (const id of ids) rows += (await usage.recount(id)).rows_changed;
        print({ teams: ids.length, rows_changed: rows, ...(o.team ? { storage: await usage.show(o.team) } : {}) }, o);
      }),
    );
}
