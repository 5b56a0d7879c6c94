// `vgate`: the admission webhook and controller. Subcommands are dispatched from here.

import { CliError, EXIT, usageError } from "./errors.js";
import { benchCommand } from "./bench.js";
import { checkConfigCommand } from "./check-config.js";
import { patchCommand } from "./patch.js";
import { serveCommand } from "./serve.js";
import { translateCommand } from "./translate.js";

export interface Command {
  name: string;
  summary: string;
  help: string;
  run(args: string[]): Promise<number>;
}

const commands: Command[] = [
  serveCommand,
  patchCommand,
  translateCommand,
  checkConfigCommand,
  benchCommand,
];

function rootHelp(): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    "vgate: admission webhooks for OwnedAccessKeys and vCluster Endpoint-sync patches.",
    "",
    "Usage:",
    "  vgate <command> [flags]",
    "",
    "Commands:",
    ...commands.map((c) => `  ${c.name.padEnd(width)}   ${c.summary}`),
    "",
    "Flags:",
    "  -h, --help   Show help for vgate or a command",
    "",
    'Use "vgate <command> --help" for more information about a command.',
    "",
  ].join("\n");
}

export async function main(argv: string[]): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined || first === "-h" || first === "--help" || first === "help") {
    const target = first === "help" ? commands.find((c) => c.name === rest[0]) : undefined;
    process.stdout.write(target ? target.help : rootHelp());
    return EXIT.OK;
  }
  const command = commands.find((c) => c.name === first);
  try {
    if (!command)
      throw usageError(
        `unknown command ${JSON.stringify(first)} for "vgate"\nRun 'vgate --help' for usage.`,
      );
    return await command.run(rest);
  } catch (err) {
    const e =
      err instanceof CliError
        ? err
        : new CliError(err instanceof Error ? err.message : String(err));
    process.stderr.write(`error: ${e.message}\n`);
    return e.exitCode;
  }
}
