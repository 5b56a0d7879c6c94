// --ttl: 90s, 30m, 12h, 30d, 2w (or several, 1d12h) to the seconds spec.ttl holds. Go's
// time.ParseDuration has no d or w, which is why the vendor CLI's `--expire-after 1d` fails; ours
// takes them.

import { CliError } from "../cli/errors.js";

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 };

export function parseTtl(text: string, flag = "--ttl"): number {
  const value = text.trim();
  const parts = [...value.matchAll(/(\d+)([smhdw])/g)];
  const whole = parts.map((p) => p[0]).join("");
  if (parts.length === 0 || whole !== value) {
    throw new CliError(
      `invalid ${flag} ${JSON.stringify(text)}: use a number with a unit s, m, h, d or w (e.g. 90s, 30m, 12h, 30d, 2w)`,
    );
  }
  const seconds = parts.reduce((sum, p) => sum + Number(p[1]) * UNIT_SECONDS[p[2]!]!, 0);
  if (!Number.isSafeInteger(seconds) || seconds <= 0) {
    throw new CliError(`invalid ${flag} ${JSON.stringify(text)}: must be more than 0 seconds`);
  }
  return seconds;
}
