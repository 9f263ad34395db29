/** Every row completed. */
export const EXIT_OK = 0;
/** The run happened but not every row completed, or the server refused it (credits, key) or could not be reached. */
export const EXIT_FAILED = 1;
/** The command cannot run as given: flags, an unreadable file, invalid rows. Nothing was submitted. */
export const EXIT_USAGE = 2;

/** An error the command reports as one line on stderr, with the exit status it stands for. */
export class CliError extends Error {
  readonly exitCode: number;
  constructor(exitCode: number, message: string) {
    super(message);
    this.name = 'CliError';
    this.exitCode = exitCode;
  }
}
