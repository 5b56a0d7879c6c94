// Durations on the command line, read as kubectl reads them: --request-timeout with client-go's
// clientcmd.ParseTimeout (a whole number of seconds, or a Go duration), delete's --timeout as a
// pflag Duration (a Go duration: time.ParseDuration). A duration goes back to the server as Go
// prints it (time.Duration.String), which is how client-go sends `?timeout=`.

import { CliError } from "./errors.js";

const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/** Go's time.ParseDuration, in milliseconds; undefined when Go would refuse the text. */
export function parseGoDuration(text: string): number | undefined {
  if (text === "0" || text === "+0" || text === "-0") return 0;
  const m = /^([+-]?)((?:(?:\d+\.?\d*|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+)$/.exec(text);
  if (!m) return undefined;
  let ms = 0;
  for (const part of m[2]!.matchAll(/(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g)) {
    ms += Number(part[1]) * UNIT_MS[part[2]!]!;
  }
  return m[1] === "-" ? -ms : ms;
}

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

/** Go's time.Duration.String for a whole number of milliseconds: 5s, 1m0s, 1.5s, 500ms, 2h0m0s. */
export function goDuration(ms: number): string {
  const whole = Math.round(ms);
  if (whole === 0) return "0s";
  if (whole < 1000) return `${whole}ms`;
  const h = Math.floor(whole / 3_600_000);
  const m = Math.floor((whole % 3_600_000) / 60_000);
  const rest = whole % 60_000;
  const s = `${Math.floor(rest / 1000)}${
    rest % 1000
      ? `.${String(rest % 1000)
          .padStart(3, "0")
          .replace(/0+$/, "")}`
      : ""
  }s`;
  if (h > 0) return `${h}h${m}m${s}`;
  if (m > 0) return `${m}m${s}`;
  return s;
}
