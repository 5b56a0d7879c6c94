// Durations on the command line, read as kubectl reads them: --request-timeout with client-go's
// clientcmd.ParseTimeout (a whole number of seconds, or a Go duration), delete's --timeout as a
// pflag Duration (a Go duration: time.ParseDuration). A duration goes back to the server as Go
// prints it (time.Duration.String), which is how client-go sends `?timeout=`.

import { parseGoDuration } from "../kube/go-duration.js";
import { CliError } from "./errors.js";

/**
 * --request-timeout (client-go's clientcmd.ParseTimeout): "0" (the default) sets no deadline, a
 * whole number is seconds, anything else is a Go duration.
 */
export function parseRequestTimeout(value: string | undefined): number {
  if (value === undefined) return 0;
  const ms = /^\d+$/.test(value) ? Number(value) * 1000 : parseGoDuration(value);
  if (ms === undefined || ms < 0 || !Number.isFinite(ms)) {
    throw new CliError(
      `invalid --request-timeout ${JSON.stringify(value)}: give a whole number of seconds, or a number with a unit (e.g. 1s, 2m, 3h); 0 means no timeout`,
    );
  }
  return ms;
}

/** A Go duration flag such as delete's --timeout; 0 unless given. */
export function parseDurationFlag(flag: string, value: string | undefined): number {
  if (value === undefined) return 0;
  const ms = parseGoDuration(value);
  if (ms === undefined || ms < 0 || !Number.isFinite(ms)) {
    throw new CliError(
      `invalid ${flag} ${JSON.stringify(value)}: give a number with a unit (e.g. 30s, 5m, 1h30m); 0 means the default`,
    );
  }
  return ms;
}
