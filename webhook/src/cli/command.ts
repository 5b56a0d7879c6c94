// What every vgate subcommand is. Its own module, so main.ts can list the commands without any of
// them importing main.ts back.

export interface Command {
  name: string;
  summary: string;
  help: string;
  /** Runs the command; resolves to the exit status (see EXIT in errors.ts). */
  run(args: string[]): Promise<number>;
}
