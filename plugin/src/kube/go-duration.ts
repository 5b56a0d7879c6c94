// Go's durations: time.Duration.String, for the `?timeout=` client-go sends (time.ParseDuration
// is GO_DURATION in webhook/src/shared/duration.ts).

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
