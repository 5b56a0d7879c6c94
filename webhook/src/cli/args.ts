// Flag parsing for every vgate command: node:util parseArgs, with kubectl-style usage errors. The
// flags are checked first from parseArgs' tokens, so each error names the flag and says what to
// do (an unknown flag gets the nearest known ones) rather than passing on parseArgs' message.

import { parseArgs, type ParseArgsConfig } from "node:util";
import { usageError, type CliError } from "./errors.js";
import { didYouMean } from "./suggest.js";

type Options = NonNullable<ParseArgsConfig["options"]>;

const usageHint = (command: string) => `Run 'vgate ${command} --help' for usage.`;

/** The flag as the user wrote it, e.g. --port or -n. */
type OptionToken = {
  name: string;
  rawName: string;
  value?: string | undefined;
  inlineValue?: boolean | undefined;
};

function longName(options: Options, token: OptionToken): string | undefined {
  if (Object.hasOwn(options, token.name)) return token.name;
  // A short flag: parseArgs' token carries the short letter as name when it is not known.
  return Object.entries(options).find(([, o]) => o.short === token.name)?.[0];
}

function flagError(command: string, options: Options, token: OptionToken): CliError | null {
  const name = longName(options, token);
  if (name === undefined) {
    const candidates = Object.keys(options).map((n) => `--${n}`);
    const typed = token.rawName.startsWith("--") ? token.rawName : "";
    return usageError(
      `unknown flag: ${token.rawName} for "vgate ${command}"${didYouMean(typed, candidates)}\n${usageHint(command)}`,
    );
  }
  const option = options[name]!;
  if (option.type === "string" && token.value === undefined)
    return usageError(
      `flag needs an argument: ${token.rawName} (give it as ${token.rawName} VALUE or --${name}=VALUE)\n${usageHint(command)}`,
    );
  // As parseArgs' strict mode: `--port --dev` is a forgotten value, not the value "--dev".
  if (
    option.type === "string" &&
    !token.inlineValue &&
    token.value !== undefined &&
    token.value.length > 1 &&
    token.value.startsWith("-")
  )
    return usageError(
      `flag needs an argument: ${token.rawName}, followed by ${JSON.stringify(token.value)}, which is a flag (for a value that starts with -, write --${name}=VALUE)\n${usageHint(command)}`,
    );
  if (option.type === "boolean" && token.value !== undefined)
    return usageError(
      `flag ${token.rawName} takes no value, got ${JSON.stringify(token.value)}: give ${token.rawName} alone\n${usageHint(command)}`,
    );
  return null;
}

export function parseCommandArgs<O extends Options>(
  command: string,
  args: string[],
  options: O,
  { allowPositionals = true }: { allowPositionals?: boolean } = {},
) {
  const { tokens } = parseArgs({
    args,
    options,
    allowPositionals: true,
    strict: false,
    tokens: true,
  });
  for (const token of tokens) {
    if (token.kind === "option-terminator") break;
    if (token.kind === "option") {
      const err = flagError(command, options, token);
      if (err) throw err;
    } else if (token.kind === "positional" && !allowPositionals) {
      throw usageError(
        `vgate ${command} takes no arguments, got ${JSON.stringify(token.value)}\n${usageHint(command)}`,
      );
    }
  }
  try {
    return parseArgs({ args, options, allowPositionals, strict: true });
  } catch (err) {
    // Not one of the cases above (parseArgs changed): its message, still with the usage hint.
    throw usageError(`${(err as Error).message}\n${usageHint(command)}`);
  }
}
