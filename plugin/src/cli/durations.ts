// Durations on the command line, read as kubectl reads them: --request-timeout with client-go's
// clientcmd.ParseTimeout (a whole number of seconds, or a Go duration), delete's --timeout as a
// pflag Duration (a Go duration: time.ParseDuration). A duration goes back to the server as Go
// prints it (time.Duration.String), which is how client-go sends `?timeout=`.

import {
  GO_DURATION,
  parseDuration,
  type DurationFlag,
} from "../../../webhook/src/shared/duration.js";
import { CliError } from "./errors.js";

/** A Go duration flag: zero or more, finite (a number too long for a double is refused). */
const goFlag = (flag: string, hint: string, grammar = GO_DURATION): DurationFlag => ({
  flag,
  grammar,
  min: 0,
  max: Number.MAX_VALUE,
  hint,
  error: (message) => new CliError(message),
});

const REQUEST_TIMEOUT = goFlag(
  "--request-timeout",
  "give a whole number of seconds, or a number with a unit (e.g. 1s, 2m, 3h); 0 means no timeout",
  Object.freeze({ ...GO_DURATION, bare: "seconds" }),
);

/**
 * --request-timeout (client-go's clientcmd.ParseTimeout): "0" (the default) sets no deadline, a
 * whole number is seconds, anything else is a Go duration.
 */
export function parseRequestTimeout(value: string | undefined): number {
  return value === undefined ? 0 : parseDuration(value, REQUEST_TIMEOUT);
}

/** A Go duration flag such as delete's --timeout; 0 unless given. */
export function parseDurationFlag(flag: string, value: string | undefined): number {
  if (value === undefined) return 0;
  return parseDuration(
    value,
    goFlag(flag, "give a number with a unit (e.g. 30s, 5m, 1h30m); 0 means the default"),
  );
}
