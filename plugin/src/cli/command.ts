// What a subcommand is, and what it gets to run: its parsed flags, the connection (made on first
// use), and the terminal.

import { parseRequestTimeout } from "./durations.js";
import { GLOBAL_HELP, OUTPUT_HELP, type FlagHelp, type Options } from "./flags.js";
import { DEFAULT_GROUP_DOMAIN } from "../../../webhook/src/shared/ownedaccesskey.js";
import type { AccessKeyApi } from "../kube/api.js";
import type { Connection } from "../kube/connect.js";
import { escapeTerminal } from "../output/terminal-text.js";

export interface Command {
  name: string;
  /** One line for `kubectl accesskey --help`. */
  summary: string;
  /** e.g. `create [NAME] [flags]` */
  usage: string;
  /** A paragraph or two for `--help`. */
  description: string;
  /** Example command lines, each with a comment line above it. */
  examples: string;
  options: Options;
  flagHelp: FlagHelp[];
  /** Whether it takes -o, --no-headers, --sort-by, --show-key. */
  output?: boolean;
  run(ctx: CommandContext): Promise<number>;
}

export interface Io {
  out(text: string): void;
  err(text: string): void;
  /**
   * All of standard input. `what` says what is read ("the key"): when standard input is a
   * terminal, a line on stderr says so, with how to end it.
   */
  readStdin(what: string): Promise<string>;
}

export type Values = Record<string, string | boolean | (string | boolean)[] | undefined>;

export class CommandContext {
  private apiPromise: Promise<AccessKeyApi> | undefined;
  private connectionPromise: Promise<Connection> | undefined;
  private api_: AccessKeyApi | undefined;
  /** Keys this run generated, with their forms: never in an error, a warning or a printed object. */
  private readonly generated = new Map<string, readonly string[]>();

  constructor(
    /** The subcommand's name. */
    readonly commandName: string,
    readonly positionals: string[],
    readonly values: Values,
    readonly io: Io,
    readonly env: NodeJS.ProcessEnv,
  ) {}

  string(name: string): string | undefined {
    const v = this.values[name];
    return typeof v === "string" ? v : undefined;
  }

  strings(name: string): string[] {
    const v = this.values[name];
    if (Array.isArray(v)) return v.filter((x): x is string => typeof x === "string");
    return typeof v === "string" ? [v] : [];
  }

  flag(name: string): boolean {
    return this.values[name] === true;
  }

  get groupDomain(): string {
    return this.string("group-domain") ?? this.env["VGATE_GROUP_DOMAIN"] ?? DEFAULT_GROUP_DOMAIN;
  }

  /** vgate's namespace, where the ConfigMap vgate-info says how keys are stored. */
  get vgateNamespace(): string {
    return this.string("vgate-namespace") ?? this.env["VGATE_NAMESPACE"] ?? "vgate-system";
  }

  /** The kubeconfig and overrides in effect (for `kubeconfig` and `--kubeconfig-out`). */
  connection(): Promise<Connection> {
    this.connectionPromise ??= (async () => {
      const { connect } = await import("../kube/connect.js");
      // In `create`, --cluster and --user describe the key, not the kubeconfig.
      const keyFlags = this.commandName === "create";
      return connect(
        {
          kubeconfig: this.string("kubeconfig"),
          context: this.string("context"),
          cluster: keyFlags ? undefined : this.string("cluster"),
          user: keyFlags ? undefined : this.string("user"),
          server: this.string("server"),
          token: this.string("token"),
          insecureSkipTlsVerify: this.flag("insecure-skip-tls-verify"),
          as: this.string("as"),
          asGroups: this.strings("as-group"),
        },
        this.env,
      );
    })();
    return this.connectionPromise;
  }

  api(): Promise<AccessKeyApi> {
    this.apiPromise ??= (async () => {
      const timeoutMs = parseRequestTimeout(this.string("request-timeout"));
      const connection = await this.connection();
      const { AccessKeyApi } = await import("../kube/api.js");
      this.api_ = new AccessKeyApi(connection, {
        groupDomain: this.groupDomain,
        timeoutMs,
        // A server's warning is its text: escaped whole, and never with a key of ours in it.
        warn: (message) => this.io.err(`Warning: ${escapeTerminal(this.redactNow(message))}\n`),
      });
      return this.api_;
    })();
    return this.apiPromise;
  }

  /**
   * A key this run generated, and its forms (output/mask.ts keyForms: the key and the hashes the
   * plugin may send instead): from now on, masked in errors, warnings and printed objects. The
   * commands that generate keys compute the forms, so that this file does not load node:crypto
   * for every call (`--help` included).
   */
  addGeneratedKey(key: string, forms: readonly string[]): void {
    this.generated.set(key, [key, ...forms]);
  }

  get generatedKeys(): readonly string[] {
    return [...this.generated.keys()];
  }

  /** Removes the credentials sent so far, and the keys generated, from a message. */
  async redact(text: string): Promise<string> {
    if (this.apiPromise) await this.apiPromise.catch(() => undefined);
    return this.redactNow(text);
  }

  private redactNow(text: string): string {
    let out = this.api_ ? this.api_.redact(text) : text;
    // The key, and what the plugin may have sent instead of it: its hash (OAK-24).
    for (const forms of this.generated.values()) {
      for (const form of forms) out = out.split(form).join("<redacted>");
    }
    return out;
  }

  close(): void {
    void this.apiPromise?.then((api) => api.close()).catch(() => undefined);
  }
}

/** The whole --help text of a command. */
export function helpText(c: Command): string {
  const flags = [...c.flagHelp, ...(c.output ? OUTPUT_HELP : [])];
  const lines = [c.description.trimEnd(), "", "Examples:", indent(c.examples.trimEnd()), ""];
  if (flags.length > 0) lines.push("Options:", formatFlags(flags), "");
  lines.push("Global options:", formatFlags(GLOBAL_HELP), "");
  lines.push("Usage:", `  kubectl accesskey ${c.usage}`, "");
  return lines.join("\n") + "\n";
}

export function formatFlags(flags: readonly FlagHelp[]): string {
  return flags.map((f) => `    ${f.flag}:\n\t${f.text}`).join("\n\n");
}

function indent(text: string): string {
  return text
    .split("\n")
    .map((l) => (l ? `  ${l}` : l))
    .join("\n");
}
