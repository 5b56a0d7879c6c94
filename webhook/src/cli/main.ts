// `vgate`: the admission webhook and controller. Subcommands are dispatched from here.

import type { Command } from "./command.js";
import { CliError, EXIT, usageError } from "./errors.js";
import { didYouMean } from "./suggest.js";

/**
 * The subcommands, loaded only when one runs: each one's module brings its own dependencies (the
 * server brings express and the API client, `patch` the sandbox), and loading them all cost every
 * `vgate` start about 0.2 s of CPU. The summaries live here so that `vgate --help` loads none.
 */
interface CommandEntry {
  name: string;
  summary: string;
  load(): Promise<Command>;
}

export const commands: readonly CommandEntry[] = [
  {
    name: "serve",
    summary: "Serve the admission webhooks over HTTPS",
    load: async () => (await import("./serve.js")).serveCommand,
  },
  {
    name: "sync",
    summary: "Sync Endpoints and EndpointSlices from a virtual cluster to its host (a controller)",
    load: async () => (await import("./sync.js")).syncCommand,
  },
  {
    name: "patch",
    summary: "Dry-run a vcluster.yaml's patches on an object of any kind",
    load: async () => (await import("./patch.js")).patchCommand,
  },
  {
    name: "translate",
    summary: "Show the host object vCluster would create, patched",
    load: async () => (await import("./translate.js")).translateCommand,
  },
  {
    name: "check-config",
    summary: "Validate the patches of a vcluster.yaml, on every kind",
    load: async () => (await import("./check-config.js")).checkConfigCommand,
  },
  {
    name: "certs",
    summary: "Create or renew the certificates of a self-managed install and patch caBundle",
    load: async () => (await import("./certs.js")).certsCommand,
  },
  {
    name: "bench",
    summary: "Measure the patch engine on a corpus of objects and patches",
    load: async () => (await import("./bench.js")).benchCommand,
  },
  {
    name: "version",
    summary: "Print the version, git commit and build date",
    load: async () => (await import("./version.js")).versionCommand,
  },
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
    process.stdout.write(target ? (await target.load()).help : rootHelp());
    return EXIT.OK;
  }
  if (first === "--version") return dispatch(["version", ...rest]);
  const command = commands.find((c) => c.name === first);
  try {
    if (!command) throw unknownCommand(first);
    return await (await command.load()).run(rest);
  } catch (err) {
    const e =
      err instanceof CliError
        ? err
        : new CliError(err instanceof Error ? err.message : String(err));
    process.stderr.write(`error: ${e.message}\n`);
    return e.exitCode;
  }
}
