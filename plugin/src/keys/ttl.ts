// --ttl: 90s, 30m, 12h, 30d, 2w (or several, 1d12h) to the seconds spec.ttl holds. Go's
// time.ParseDuration has no d or w, which is why the vendor CLI's `--expire-after 1d` fails; ours
// takes them.

import { parseDuration, type DurationFlag } from "../../../webhook/src/shared/duration.js";
import { CliError } from "../cli/errors.js";

const TTL: DurationFlag = {
  flag: "--ttl",
  // Whole numbers only: spec.ttl is whole seconds.
  grammar: Object.freeze({
    units: Object.freeze(["s", "m", "h", "d", "w"] as const),
    number: "integer",
    compound: true,
    sign: false,
    trim: true,
    bare: "none",
    result: "s",
    round: false,
  }),
  min: 0,
  minExclusive: true,
  max: Number.MAX_SAFE_INTEGER,
  hint: "use a number with a unit s, m, h, d or w (e.g. 90s, 30m, 12h, 30d, 2w)",
  rangeHint: "must be more than 0 seconds",
  error: (message) => new CliError(message),
};

export function parseTtl(text: string, flag = "--ttl"): number {
  return parseDuration(text, { ...TTL, flag });
}
