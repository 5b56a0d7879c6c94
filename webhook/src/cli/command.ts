// What every vgate subcommand is. Its own module, so main.ts can list the commands without any of
// them importing main.ts back. A command's one-line summary is in main.ts's table, which lists the
// commands without loading them.

export interface Command {
  name: string;
  help: string;
  /** Runs the command; resolves to the exit status (see EXIT in errors.ts). */
  run(args: string[]): Promise<number>;
}
