// Go's durations: time.ParseDuration and time.Duration.String, for flags read as kubectl reads
// them (cli/durations.ts) and for the `?timeout=` client-go sends.

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
