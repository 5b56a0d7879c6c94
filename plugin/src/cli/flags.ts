// Flags. kubectl hands a plugin every argument after its name untouched, so the plugin parses the
// connection and output flags users type with kubectl itself (cli-runtime's ConfigFlags and
// PrintFlags), anywhere on the line, next to each command's own flags.

import { parseArgs, type ParseArgsConfig } from "node:util";
import { DEFAULT_GROUP_DOMAIN } from "../../../webhook/src/shared/ownedaccesskey.js";
import { CliError, UsageError } from "./errors.js";
import { suggestionsFor } from "./suggest.js";

export type Options = NonNullable<ParseArgsConfig["options"]>;

/** The flags every command takes. */
export const GLOBAL_OPTIONS = {
  kubeconfig: { type: "string" },
  context: { type: "string" },
  cluster: { type: "string" },
  user: { type: "string" },
  as: { type: "string" },
  "as-group": { type: "string", multiple: true },
  "request-timeout": { type: "string" },
  server: { type: "string", short: "s" },
  token: { type: "string" },
  "insecure-skip-tls-verify": { type: "boolean" },
  "group-domain": { type: "string" },
  "vgate-namespace": { type: "string" },
  // Accepted and ignored, as kubectl ignores them for cluster-scoped resources / for plugins.
  namespace: { type: "string", short: "n" },
  "cache-dir": { type: "string" },
  help: { type: "boolean", short: "h" },
} as const satisfies Options;

/** Output flags, for the commands that print OwnedAccessKeys. */
export const OUTPUT_OPTIONS = {
  output: { type: "string", short: "o" },
  "no-headers": { type: "boolean" },
  "sort-by": { type: "string" },
  "show-key": { type: "boolean" },
} as const satisfies Options;

/** One line per flag for --help: `--name`, its value, what it does. */
export interface FlagHelp {
  flag: string;
  text: string;
}

export const GLOBAL_HELP: FlagHelp[] = [
  {
    flag: "--kubeconfig=''",
    text: "Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)",
  },
  { flag: "--context=''", text: "The name of the kubeconfig context to use" },
  {
    flag: "--cluster=''",
    text: "The name of the kubeconfig cluster to use (create: a scope cluster)",
  },
  { flag: "--user=''", text: "The name of the kubeconfig user to use (create: the key's owner)" },
  { flag: "--as=''", text: "Username to impersonate for the operation" },
  { flag: "--as-group=[]", text: "Group to impersonate for the operation, repeatable" },
  {
    flag: "--request-timeout='0'",
    text: "How long to wait for one server request (e.g. 1s, 2m, 3h); 0: no limit (as kubectl)",
  },
  { flag: "-s, --server=''", text: "The address and port of the Kubernetes API server" },
  { flag: "--token=''", text: "Bearer token for authentication to the API server" },
  {
    flag: "--insecure-skip-tls-verify=false",
    text: "Do not check the server's certificate (insecure)",
  },
  {
    flag: `--group-domain='${DEFAULT_GROUP_DOMAIN}'`,
    text: "OwnedAccessKeys are management.<group-domain>/v1",
  },
  {
    flag: "--vgate-namespace='vgate-system'",
    text: "Where vgate publishes how it stores keys (ConfigMap vgate-info)",
  },
];

export const OUTPUT_HELP: FlagHelp[] = [
  { flag: "-o, --output=''", text: "json|yaml|name|wide|jsonpath=…|custom-columns=…" },
  { flag: "--no-headers=false", text: "Do not print the table's header row" },
  { flag: "--sort-by=''", text: "Sort by a JSONPath expression, e.g. .metadata.name" },
  { flag: "--show-key=false", text: "Print the key (and copies of it) instead of REDACTED" },
];

/** The flag names (without dashes) that take a value, for finding the subcommand in argv. */
export function valueFlags(options: Options): Set<string> {
  const out = new Set<string>();
  for (const [name, o] of Object.entries(options)) {
    if (o.type !== "string") continue;
    out.add(`--${name}`);
    if (o.short) out.add(`-${o.short}`);
  }
  return out;
}

/**
 * Splits argv into the subcommand (the first word that is neither a flag nor a flag's value) and
 * the rest. `-o=json` (pflag accepts it) becomes `-o json`.
 */
export function splitCommand(
  argv: readonly string[],
  takesValue: Set<string>,
): { command: string | undefined; rest: string[] } {
  const args = normalize(argv);
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === "--")
      return { command: args[i + 1], rest: [...args.slice(0, i), ...args.slice(i + 2)] };
    if (a.startsWith("-") && a !== "-") {
      if (takesValue.has(a)) i++;
      continue;
    }
    return { command: a, rest: [...args.slice(0, i), ...args.slice(i + 1)] };
  }
  return { command: undefined, rest: args };
}

export function normalize(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (const a of argv) {
    const m = /^(-[A-Za-z])=(.*)$/s.exec(a);
    if (m) out.push(m[1]!, m[2]!);
    else out.push(a);
  }
  return out;
}

/**
 * Flags that take an optional value (pflag's NoOptDefVal): given bare, they hold this value, and
 * the next word is not theirs (`--dry-run client` is --dry-run=unchanged and the argument
 * "client", as in kubectl).
 */
export const NO_VALUE_DEFAULTS: Readonly<Record<string, string>> = { "dry-run": "unchanged" };

function withNoValueDefaults(args: readonly string[], options: Options): string[] {
  return args.map((a) => {
    const name = a.startsWith("--") ? a.slice(2) : undefined;
    const value =
      name !== undefined && Object.hasOwn(options, name) ? NO_VALUE_DEFAULTS[name] : undefined;
    return value === undefined ? a : `${a}=${value}`;
  });
}

type ParsedValues = Record<string, string | boolean | (string | boolean)[] | undefined>;

/**
 * The command line as pflag reads it, with its error messages: `unknown flag: --nmae` (with
 * cobra's "Did you mean this?" when a flag is close), `unknown shorthand flag: 'x' in -x`,
 * `flag needs an argument: --ttl`; a boolean takes `--wait=false`. `command` names the help to see.
 */
export function parseFlags(
  command: string,
  args: string[],
  options: Options,
): { values: ParsedValues; positionals: string[] } {
  const usageOf = `kubectl accesskey ${command}`;
  args = withNoValueDefaults(args, options);
  const { tokens } = parseArgs({
    args,
    options,
    allowPositionals: true,
    strict: false,
    tokens: true,
  });
  const values: ParsedValues = {};
  const positionals: string[] = [];
  for (const token of tokens) {
    if (token.kind === "positional") positionals.push(token.value);
    if (token.kind !== "option") continue;
    const option = Object.hasOwn(options, token.name) ? options[token.name] : undefined;
    const long = token.rawName.startsWith("--");
    const shorthand = () => `'${token.rawName.slice(1)}' in ${args[token.index] ?? token.rawName}`;
    if (!option) {
      if (!long) throw new UsageError(`unknown shorthand flag: ${shorthand()}`, usageOf);
      throw new UsageError(
        `unknown flag: ${token.rawName}`,
        usageOf,
        suggestionsFor(token.name, Object.keys(options)).map((n) => `--${n}`),
      );
    }
    let value: string | boolean;
    if (option.type === "boolean") {
      value = token.inlineValue ? parseBool(token.rawName, token.value ?? "") : true;
    } else {
      if (token.value === undefined) {
        throw new UsageError(
          `flag needs an argument: ${long ? token.rawName : shorthand()}`,
          usageOf,
        );
      }
      value = token.value;
    }
    if (option.multiple) {
      const list = values[token.name];
      values[token.name] = [...(Array.isArray(list) ? list : []), value];
    } else values[token.name] = value;
  }
  return { values, positionals };
}

// strconv.ParseBool, which pflag's bool flags use.
function parseBool(flag: string, text: string): boolean {
  if (["1", "t", "T", "TRUE", "true", "True"].includes(text)) return true;
  if (["0", "f", "F", "FALSE", "false", "False"].includes(text)) return false;
  throw new CliError(
    `invalid argument ${JSON.stringify(text)} for "${flag}" flag: use true or false`,
  );
}
