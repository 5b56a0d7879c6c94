// `vgate`: the admission webhook and controller. Subcommands are dispatched from here.

import { benchCommand } from "./bench.js";
import { certsCommand } from "./certs.js";
import { checkConfigCommand } from "./check-config.js";
import type { Command } from "./command.js";
import { CliError, EXIT, usageError } from "./errors.js";
import { patchCommand } from "./patch.js";
import { serveCommand } from "./serve.js";
import { didYouMean } from "./suggest.js";
import { syncCommand } from "./sync.js";
import { translateCommand } from "./translate.js";
import { versionCommand } from "./version.js";

const commands: Command[] = [
  serveCommand,
  syncCommand,
  patchCommand,
  translateCommand,
  checkConfigCommand,
  certsCommand,
  benchCommand,
  versionCommand,
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
    "  -h, --help      Show help for vgate or a command",
    "      --version   Print the version, git commit and build date (as vgate version)",
    "",
    'Use "vgate <command> --help" for more information about a command.',
    "",
  ].join("\n");
}

/** cobra's message for an unknown command, with the nearest ones (and flags) suggested. */
function unknownCommand(typed: string): CliError {
  if (typed.startsWith("-"))
    return usageError(
      `unknown flag: ${typed} for "vgate"${didYouMean(typed, ["--help", "--version"])}\nRun 'vgate --help' for usage.`,
    );
  const names = [...commands.map((c) => c.name), "help"];
  return usageError(
    `unknown command ${JSON.stringify(typed)} for "vgate"${didYouMean(typed, names)}\nRun 'vgate --help' for usage.`,
  );
}

/**
 * Runs when the event loop drains while the command has not finished: nothing is left that could
 * finish it (a bug, or a child process that vanished). That is a failure, never a silent exit 0.
 */
function stoppedUnfinished(): void {
  process.stderr.write("error: vgate stopped before the command finished\n");
  process.exitCode = EXIT.FAILURE;
}

export async function main(argv: string[]): Promise<number> {
  process.once("beforeExit", stoppedUnfinished);
  try {
    return await dispatch(argv);
  } finally {
    process.off("beforeExit", stoppedUnfinished);
  }
}

async function dispatch(argv: string[]): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined || first === "-h" || first === "--help" || first === "help") {
    const target = first === "help" ? commands.find((c) => c.name === rest[0]) : undefined;
    if (first === "help" && rest[0] !== undefined && !target) {
      process.stderr.write(`error: ${unknownCommand(rest[0]).message}\n`);
      return EXIT.USAGE;
    }
    process.stdout.write(target ? target.help : rootHelp());
    return EXIT.OK;
  }
  if (first === "--version") return dispatch(["version", ...rest]);
  const command = commands.find((c) => c.name === first);
  try {
    if (!command) throw unknownCommand(first);
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
