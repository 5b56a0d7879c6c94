// The plugin's failures, printed the way kubectl prints them (kubectl's StandardErrorMessage):
// `Error from server (Reason): message` for an API Status, `error: …` for the client's own errors,
// and kubectl's sentences for a server that cannot be reached. Every one exits with code 1.

import { KubeError } from "../../../webhook/src/api/status.js";
import { ConnectionError } from "../kube/errors.js";

export { KubeError } from "../../../webhook/src/api/status.js";
export { ConnectionError } from "../kube/errors.js";

/** A failure of the plugin itself: bad flags, a file it cannot read. */
export class CliError extends Error {
  override readonly name = "CliError";
}

/** The line kubectl would print on stderr for this error. `redact` removes secrets we know. */
export function errorLine(err: unknown, redact: (text: string) => string = (t) => t): string {
  if (err instanceof KubeError) {
    const { reason, message } = err;
    if (reason === "Unauthorized")
      return `error: You must be logged in to the server (${redact(message)})`;
    if (reason) return `Error from server (${reason}): ${redact(message)}`;
    return `Error from server: ${redact(message)}`;
  }
  if (err instanceof ConnectionError) {
    if (err.refused) {
      return `The connection to the server ${hostOf(err.server)} was refused - did you specify the right host or port?`;
    }
    return `Unable to connect to the server: ${redact(err.message)}`;
  }
  if (err instanceof Error) return `error: ${redact(err.message)}`;
  return `error: ${redact(String(err))}`;
}

function hostOf(server: string): string {
  try {
    return new URL(server).host;
  } catch {
    return server;
  }
}
