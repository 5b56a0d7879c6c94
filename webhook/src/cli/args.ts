// Flag parsing for every vgate command: node:util parseArgs, with kubectl-style usage errors.

import { parseArgs, type ParseArgsConfig } from "node:util";
import { usageError } from "./errors.js";

type Options = NonNullable<ParseArgsConfig["options"]>;

export function parseCommandArgs<O extends Options>(command: string, args: string[], options: O) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (err) {
    throw usageError(`${(err as Error).message}\nRun 'vgate ${command} --help' for usage.`);
  }
}
