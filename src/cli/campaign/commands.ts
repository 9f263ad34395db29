import type { Command } from 'commander';
import { CliError, EXIT_FAILED, EXIT_USAGE } from './errors.ts';
import type { RunOptions } from './run.ts';

/** `adforge campaign run FILE.csv`: a client of the API (GraphQL over HTTPS); it never opens the database. */
export function registerCampaignCommands(program: Command): void {
  const campaign = program.command('campaign').description('bulk generations from a CSV file, run through the API of a (possibly remote) server');
  campaign
    .command('run')
    .argument('<file>', 'the CSV file: a "type" column and the fields of that endpoint, one row per generation')
    .description(
      'check every row, show the price, submit the rows as one campaign, follow it and write FILE.results.csv. ' +
        'Exit status: 0 every row completed, 1 some row failed or the run was refused, 2 usage or invalid rows (nothing submitted)',
    )
    .option('--api-url <url>', 'the service, e.g. https://HOST:8443 (or its /graphql endpoint); default $ADFORGE_API_URL')
    .option('--api-key <key>', 'an API key of the team; default $ADFORGE_API_KEY (the variable keeps it out of ps)')
    .option('--name <name>', 'campaign name: running again with the same name continues that campaign (default: the file name without extension)')
    .option('--out <file>', 'the results CSV (default: FILE.results.csv beside the input)')
    .option('--ca <file>', "PEM certificate to trust for the server (its self-signed certificate or CA); NODE_EXTRA_CA_CERTS also works")
    .option('--dry-run', 'check every row and show the price against the balance, then stop: nothing is stored or charged')
    .option('-y, --yes', 'do not ask for confirmation (nor is it asked when stdin or stdout is not a terminal)')
    // Usage errors (unknown flag, missing file argument) exit 2 like other usage problems; help exits 0.
    .exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : EXIT_USAGE))
    .action(async (file: string, o: RunOptions) => {
      let code: number;
      // Imported on use (the HTTP, WebSocket and CSV clients): other commands start without them.
      const [{ runCampaign }, { ApiError }] = await Promise.all([import('./run.ts'), import('./api.ts')]);
      try {
        code = await runCampaign(file, o, { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env });
      } catch (e) {
        code = e instanceof CliError ? e.exitCode : EXIT_FAILED;
        const message = e instanceof CliError || e instanceof ApiError ? e.message : e instanceof Error ? (e.stack ?? e.message) : String(e);
        process.stderr.write(`adforge: ${message}\n`);
      }
      process.exitCode = code;
      // Everything is closed by now; should a handle linger (a socket in a half-closed state), do not hang on it.
      setTimeout(() => process.exit(code), 3000).unref();
    });
}
