// A server that cannot be reached, said as kubectl says it (its StandardErrorMessage), with what to
// check: the refused connection in kubectl's own words, a name that does not resolve, or the
// socket's reason in words rather than its code.

import { getSystemErrorMap } from "node:util";
import { TransportError } from "../shared/transport.js";

const hostOf = (server: string): string => {
  try {
    return new URL(server).host;
  } catch {
    return server;
  }
};

/** The sentence for a TransportError from `server`; null when it is not a connection failure. */
export function connectionSentence(err: unknown, server: string): string | null {
  if (!(err instanceof TransportError) || err.timedOut) return null;
  const cause = err.cause as NodeJS.ErrnoException | undefined;
  const code = typeof cause?.code === "string" ? cause.code : undefined;
  if (code === undefined) return null;
  const host = hostOf(server);
  if (code === "ECONNREFUSED")
    return `The connection to the server ${host} was refused - did you specify the right host or port?`;
  if (code === "ENOTFOUND" || code === "EAI_AGAIN")
    return `Unable to connect to the server ${host}: the host name does not resolve; check the cluster's server in the kubeconfig`;
  const errno = typeof cause?.errno === "number" ? cause.errno : undefined;
  const reason = errno === undefined ? undefined : getSystemErrorMap().get(errno)?.[1];
  return reason ? `Unable to connect to the server ${host}: ${reason}` : null;
}
