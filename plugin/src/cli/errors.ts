// The plugin's failures, printed the way kubectl prints them (kubectl's StandardErrorMessage):
// `Error from server (Reason): message` for an API Status, `error: …` for the client's own errors,
// and kubectl's sentences for a server that cannot be reached. Every one exits with code 1.

import { KubeError } from "../../../webhook/src/shared/status.js";
import { ConnectionError, ResourceTypeError } from "../kube/errors.js";
import { escapeTerminal } from "../output/terminal-text.js";
import { systemErrorIn, systemErrorSentence } from "../os/system-errors.js";

export { KubeError } from "../../../webhook/src/shared/status.js";
export { ConnectionError } from "../kube/errors.js";

/** A failure of the plugin itself: bad flags, a file it cannot read. */
export class CliError extends Error {
  override readonly name: string = "CliError";
}

/**
 * A command line that cannot be run: an unknown flag or command, a flag without its value. Printed
 * as cobra prints one: the message, cobra's "Did you mean this?" block when something is close,
 * and where the usage is (`usageOf`: "kubectl accesskey create").
 */
export class UsageError extends CliError {
  override readonly name = "UsageError";
  constructor(
    message: string,
    readonly usageOf: string,
    readonly suggestions: readonly string[] = [],
  ) {
    super(message);
  }
}

/**
 * The line kubectl would print on stderr for this error. `redact` removes secrets we know. What
 * the server said (a Status message or reason, a TLS or socket error) is escaped whole, line
 * breaks included (docs/decisions.md OAK-30); the plugin's own messages keep their line breaks.
 */
export function errorLine(err: unknown, redact: (text: string) => string = (t) => t): string {
  const server = (text: string) => escapeTerminal(redact(text));
  if (err instanceof KubeError) {
    const { reason, message } = err;
    if (reason === "Unauthorized")
      return `error: You must be logged in to the server (${server(message)})`;
    if (reason) return `Error from server (${server(reason)}): ${server(message)}`;
    return `Error from server: ${server(message)}`;
  }
  if (err instanceof ConnectionError) {
    if (err.refused) {
      return `The connection to the server ${server(hostOf(err.server))} was refused - did you specify the right host or port?`;
    }
    return `Unable to connect to the server: ${server(err.message)}`;
  }
  if (err instanceof ResourceTypeError) return resourceTypeLines(err);
  if (err instanceof UsageError) return usageLines(err);
  const own = (text: string) => redact(text).split("\n").map(escapeTerminal).join("\n");
  // A system error nobody put in words (ENOENT, EISDIR, EACCES…): the operation, path and problem.
  const system = err instanceof CliError ? undefined : systemErrorIn(err);
  if (system) return `error: ${own(systemErrorSentence(system))}`;
  if (err instanceof Error) return `error: ${own(err.message)}`;
  return `error: ${own(String(err))}`;
}

function usageLines(err: UsageError): string {
  const lines = [`error: ${escapeTerminal(err.message)}`];
  if (err.suggestions.length > 0) {
    lines.push(
      "",
      "Did you mean this?",
      ...err.suggestions.map((s) => `\t${escapeTerminal(s)}`),
      "",
    );
  }
  lines.push(`See '${err.usageOf} --help' for usage.`);
  return lines.join("\n");
}

/** kubectl's sentence for a resource type discovery lacks, and what to do about it. */
function resourceTypeLines(err: ResourceTypeError): string {
  const domainOf = (group: string) => group.replace(/^management\./, "");
  const quoted = (text: string) => `"${escapeTerminal(text)}"`;
  const first = `error: ${escapeTerminal(err.message)}`;
  if (err.servedIn.length > 0) {
    const groups = err.servedIn.map(quoted).join(", ");
    const flags = err.servedIn.map((g) => `--group-domain ${escapeTerminal(domainOf(g))}`);
    return `${first}\nThe server has ${err.resource} in group ${groups}: pass the group domain vgate was installed with (${flags.join(" or ")}), or set VGATE_GROUP_DOMAIN.`;
  }
  return (
    `${first}\nThe OwnedAccessKey CRD is not installed for group domain ${quoted(domainOf(err.group))}. ` +
    "Install vgate (its CRD is manifests/crd-ownedaccesskeys.yaml in vgate's repository), or pass " +
    "the group domain vgate was installed with: --group-domain DOMAIN, or VGATE_GROUP_DOMAIN."
  );
}

function hostOf(server: string): string {
  try {
    return new URL(server).host;
  } catch {
    return server;
  }
}
