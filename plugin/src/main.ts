// kubectl accesskey: everyday OwnedAccessKey operations as a kubectl plugin. This file stays small
// so that `--help` and completion start fast; commands, the API client and the printers are loaded
// when a command runs.

import { CommandContext, formatFlags, helpText, type Io, type Values } from "./cli/command.js";
import { UsageError, errorLine } from "./cli/errors.js";
import { suggestionsFor } from "./cli/suggest.js";
import {
  GLOBAL_OPTIONS,
  OUTPUT_OPTIONS,
  parseFlags,
  splitCommand,
  valueFlags,
  GLOBAL_HELP,
} from "./cli/flags.js";
import { COMMANDS, findCommand } from "./commands/registry.js";
import { terminalLines } from "./output/terminal-text.js";

const processIo: Io = {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
  readStdin: async (what) => {
    // A command waiting on a terminal says so, rather than seeming to hang.
    if (process.stdin.isTTY)
      process.stderr.write(`reading ${what} from standard input (Ctrl-D to end)\n`);
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString("utf8");
  },
};

/**
 * No stack trace reaches the user: a reader that went away (`| head`) ends the plugin quietly, as
 * SIGPIPE ends kubectl, and an error nothing caught is printed as one line.
 */
function guardProcess(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (err: NodeJS.ErrnoException) => {
      if (err.code === "EPIPE") process.exit(1);
      throw err;
    });
  }
  process.on("uncaughtException", (err) => {
    process.stderr.write(`${terminalLines(errorLine(err))}\n`);
    process.exit(1);
  });
}

/**
 * The one way out to the terminal (docs/decisions.md OAK-30): whatever a command writes, no
 * control or bidirectional character but the line breaks and tabs of the output's own layout
 * reaches stdout or stderr. Printers escape server text whole (line breaks too) before it gets
 * here; this keeps a printer that forgets from writing an escape sequence.
 */
export function terminalIo(io: Io): Io {
  return {
    out: (text) => io.out(terminalLines(text)),
    err: (text) => io.err(terminalLines(text)),
    readStdin: (what) => io.readStdin(what),
  };
}

export async function main(
  argv: readonly string[],
  rawIo: Io = processIo,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  if (rawIo === processIo) guardProcess();
  const io = terminalIo(rawIo);
  if (argv[0] === "__complete" || argv[0] === "__completeNoDesc") {
    const { complete } = await import("./complete.js");
    return complete(argv.slice(1), io, env, argv[0] === "__complete");
  }
  const { command: name, rest } = splitCommand(
    argv,
    valueFlags({ ...GLOBAL_OPTIONS, ...OUTPUT_OPTIONS }),
  );
  if (name === undefined || name === "help") {
    if (name === undefined && !rest.includes("--help") && !rest.includes("-h") && rest.length > 0) {
      // Flags and no command: a wrong flag is named as such; right flags alone need a command.
      try {
        parseFlags("", rest, { ...GLOBAL_OPTIONS, ...OUTPUT_OPTIONS });
        throw new UsageError(
          `a command is needed after the flags (e.g. kubectl accesskey list ${rest.join(" ")})`,
          "kubectl accesskey",
        );
      } catch (err) {
        io.err(`${errorLine(usageOfRoot(err))}\n`);
        return 1;
      }
    }
    io.out(topHelp());
    return 0;
  }
  const entry = findCommand(name);
  if (!entry) {
    const unknown = new UsageError(
      `unknown command ${JSON.stringify(name)} for "kubectl accesskey"`,
      "kubectl accesskey",
      suggestionsFor(
        name,
        COMMANDS.map((c) => c.name),
      ),
    );
    io.err(`${errorLine(unknown)}\n`);
    return 1;
  }
  const command = await entry.load();
  let ctx: CommandContext | undefined;
  try {
    const options = {
      ...GLOBAL_OPTIONS,
      ...(command.output ? OUTPUT_OPTIONS : {}),
      ...command.options,
    };
    const { values, positionals } = parseFlags(name, rest, options);
    if (values["help"] === true) {
      io.out(helpText(command));
      return 0;
    }
    ctx = new CommandContext(command.name, positionals, values as Values, io, env);
    return await command.run(ctx);
  } catch (err) {
    const line = errorLine(err);
    io.err(`${ctx ? await ctx.redact(line) : line}\n`);
    return 1;
  } finally {
    ctx?.close();
  }
}

/** A usage error of the flags before any command points at the top help. */
function usageOfRoot(err: unknown): unknown {
  return err instanceof UsageError
    ? new UsageError(err.message, "kubectl accesskey", err.suggestions)
    : err;
}

function topHelp(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length)) + 2;
  return [
    "Everyday OwnedAccessKey operations: create keys for CI/CD, list, disable, rotate and revoke them,",
    "and turn them into kubeconfigs.",
    "",
    "Examples:",
    "  # Create a key for a pipeline that expires in 30 days; only the key goes to stdout",
    "  KEY=$(kubectl accesskey create ci --ttl 30d)",
    "",
    "  # Rotate it; the old key keeps working for an hour, while pipelines switch to the new one",
    "  kubectl accesskey rotate ci --grace 1h",
    "",
    "  # List your keys, then everyone's",
    "  kubectl accesskey list",
    "  kubectl accesskey list --all -o wide",
    "",
    "  # Your keys that expire within a week, then delete your expired ones",
    "  kubectl accesskey list --expiring 7d",
    "  kubectl accesskey prune",
    "",
    "Commands:",
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}${c.summary}`),
    "",
    "Global options:",
    formatFlags(GLOBAL_HELP),
    "",
    "Usage:",
    "  kubectl accesskey [command] [flags]",
    "",
    'Use "kubectl accesskey <command> --help" for more information about a command.',
    "",
  ].join("\n");
}
