// `kubectl-accesskey __complete ARGS… WORD`: Cobra's completion protocol, which kubectl (>= 1.26)
// speaks with plugins through kubectl_complete-accesskey. One candidate per line (`value<TAB>help`),
// then `:<directive>`: 4 = no file completion, 0 = the shell may complete file names.

import type { Io } from "./cli/command.js";
import {
  GLOBAL_OPTIONS,
  OUTPUT_OPTIONS,
  normalize,
  splitCommand,
  valueFlags,
  type Options,
} from "./cli/flags.js";
import { COMMANDS, findCommand } from "./commands/registry.js";

const NO_SPACE = 2;
const NO_FILES = 4;
const FILES = 0;

const NAMED = new Set([
  "get",
  "describe",
  "delete",
  "disable",
  "enable",
  "rotate",
  "annotate",
  "edit",
  "kubeconfig",
]);
/** Accepted for kubectl's sake, and ignored: not worth offering. */
const HIDDEN_FLAGS = new Set(["namespace", "cache-dir"]);
const OUTPUT_FORMATS = ["json", "yaml", "name", "wide", "jsonpath=", "custom-columns="];
/** create prints no table (kubectl create's printers). */
const CREATE_OUTPUT_FORMATS = ["json", "yaml", "name", "jsonpath="];
const SELECTABLE_FIELDS = ["metadata.name", "spec.user", "spec.team", "spec.type"];
/** A selector typed already (names and selectors do not mix): no names to offer. */
const SELECTOR_FLAG = /^(-l|-A|--all|--selector(=.*)?|--field-selector(=.*)?)$/;
const SUBDOMAIN = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export async function complete(
  args: readonly string[],
  io: Io,
  env: NodeJS.ProcessEnv,
  descriptions: boolean,
): Promise<number> {
  const words = normalize(args.slice(0, -1));
  const current = args.at(-1) ?? "";
  const { candidates, directive } = await candidatesFor(words, current, env);
  const matching = candidates.filter((c) => c.value.startsWith(current));
  const lines = matching.map((c) => (descriptions && c.help ? `${c.value}\t${c.help}` : c.value));
  // No space after `jsonpath=`, but after `yaml`.
  const open = matching.length > 0 && matching.every((c) => c.value.endsWith("="));
  const final = open ? directive : directive & ~NO_SPACE;
  io.out(`${lines.map((l) => `${l}\n`).join("")}:${final}\n`);
  return 0;
}

interface Candidate {
  value: string;
  help?: string;
}

async function candidatesFor(
  words: string[],
  current: string,
  env: NodeJS.ProcessEnv,
): Promise<{ candidates: Candidate[]; directive: number }> {
  const globals: Options = { ...GLOBAL_OPTIONS, ...OUTPUT_OPTIONS };
  const { command: name, rest } = splitCommand(words, valueFlags(globals));
  const entry = name ? findCommand(name) : undefined;
  const command = entry ? await entry.load() : undefined;
  const options: Options = {
    ...GLOBAL_OPTIONS,
    ...(command?.output ? OUTPUT_OPTIONS : {}),
    ...command?.options,
  };
  const previous = words.at(-1);
  if (previous && valueFlags(options).has(previous)) {
    return flagValue(previous, options, env, name === "create");
  }
  if (current.startsWith("-")) {
    const flags = Object.keys(options)
      .filter((f) => !HIDDEN_FLAGS.has(f))
      .map((f) => ({ value: `--${f}` }));
    return { candidates: flags, directive: NO_FILES };
  }
  if (!name) {
    return {
      candidates: COMMANDS.map((c) => ({ value: c.name, help: c.summary })),
      directive: NO_FILES,
    };
  }
  if (name === "completion")
    return {
      candidates: ["bash", "zsh", "fish", "powershell"].map((value) => ({ value })),
      directive: NO_FILES,
    };
  if (!NAMED.has(name)) return { candidates: [], directive: NO_FILES };
  const positionals = rest.filter(
    (w, i) => !w.startsWith("-") && !valueFlags(options).has(rest[i - 1] ?? ""),
  );
  if (["rotate", "edit", "kubeconfig", "annotate"].includes(name) && positionals.length > 0) {
    return { candidates: [], directive: NO_FILES };
  }
  if (rest.some((w) => SELECTOR_FLAG.test(w))) return { candidates: [], directive: NO_FILES };
  return {
    candidates: await keyNames(rest, options, env, new Set(positionals)),
    directive: NO_FILES,
  };
}

async function flagValue(
  flag: string,
  options: Options,
  env: NodeJS.ProcessEnv,
  create: boolean,
): Promise<{ candidates: Candidate[]; directive: number }> {
  if (flag === "-o" || flag === "--output") {
    return {
      candidates: (create ? CREATE_OUTPUT_FORMATS : OUTPUT_FORMATS).map((value) => ({ value })),
      directive: NO_FILES | NO_SPACE,
    };
  }
  if (flag === "--field-selector") {
    // The fields the CRD declares selectable, and the name every resource has.
    return {
      candidates: SELECTABLE_FIELDS.map((field) => ({ value: `${field}=` })),
      directive: NO_FILES | NO_SPACE,
    };
  }
  if (flag === "--context")
    return { candidates: await contexts(options, env), directive: NO_FILES };
  if (flag === "--kubeconfig" || flag === "--key-file" || flag === "--kubeconfig-out") {
    return { candidates: [], directive: FILES };
  }
  return { candidates: [], directive: NO_FILES };
}

async function contexts(_options: Options, env: NodeJS.ProcessEnv): Promise<Candidate[]> {
  try {
    const { connect } = await import("./kube/connect.js");
    const { config } = await connect({}, env);
    return config.contexts
      .filter((c) => c.name !== "kubectl-accesskey")
      .map((c) => ({ value: c.name }));
  } catch {
    return [];
  }
}

/** The names of the keys, from the server, with the connection flags typed so far; none on error. */
async function keyNames(
  rest: string[],
  options: Options,
  env: NodeJS.ProcessEnv,
  taken: Set<string>,
): Promise<Candidate[]> {
  try {
    const { parseArgs } = await import("node:util");
    const { values } = parseArgs({ args: rest, options, allowPositionals: true, strict: false });
    const { CommandContext } = await import("./cli/command.js");
    const ctx = new CommandContext(
      "__complete",
      [],
      { ...(values as Record<string, string | boolean>), "request-timeout": "5s" },
      { out: () => undefined, err: () => undefined, readStdin: async () => "" },
      env,
    );
    const api = await ctx.api();
    try {
      const items = await api.list();
      // Only names Kubernetes allows (DNS-1123 subdomains): a candidate is typed into the shell,
      // and one line per candidate is the protocol (docs/decisions.md OAK-30).
      return items
        .map((o) => o.metadata?.name ?? "")
        .filter((n) => SUBDOMAIN.test(n) && !taken.has(n))
        .map((value) => ({ value }));
    } finally {
      api.close();
    }
  } catch {
    return [];
  }
}
