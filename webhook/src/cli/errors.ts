// CLI failures and their exit codes (one table, as zx does), printed as kubectl prints errors.

export const EXIT = {
  /** Everything worked. */
  OK: 0,
  /** The command failed: bad input, unreachable server, a check that did not pass. */
  FAILURE: 1,
  /** The command line itself is wrong: unknown command or flag, bad flag value. */
  USAGE: 2,
} as const;

export class CliError extends Error {
  override readonly name = "CliError";
  constructor(
    message: string,
    readonly exitCode: number = EXIT.FAILURE,
  ) {
    super(message);
  }
}

export const usageError = (message: string): CliError => new CliError(message, EXIT.USAGE);
