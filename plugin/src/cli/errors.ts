// The plugin's failures, printed the way kubectl prints them (kubectl's StandardErrorMessage):
// `Error from server (Reason): message` for an API Status, `error: …` for the client's own errors,
// and kubectl's sentences for a server that cannot be reached. Every one exits with code 1.

import { KubeError } from "../../../webhook/src/api/status.js";
import { ConnectionError } from "../kube/errors.js";
import { escapeTerminal } from "../output/terminal-text.js";

export { KubeError } from "../../../webhook/src/api/status.js";
export { ConnectionError } from "../kube/errors.js";

/** A failure of the plugin itself: bad flags, a file it cannot read. */
export class CliError extends Error {
  override readonly name = "CliError";
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
  const own = (text: string) => redact(text).split("\n").map(escapeTerminal).join("\n");
  if (err instanceof Error) return `error: ${own(err.message)}`;
  return `error: ${own(String(err))}`;
}

function hostOf(server: string): string {
  try {
    return new URL(server).host;
  } catch {
    return server;
  }
}
