// Duration flags (--timeout, --patch-timeout): "100ms" or "2s", from 1 ms to 60 s.

import { usageError } from "./errors.js";

export function parseDuration(text: string, flag: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s)$/.exec(text.trim());
  if (!m)
    throw usageError(`invalid ${flag} ${JSON.stringify(text)}: use a duration such as 100ms or 2s`);
  const ms = Number(m[1]) * (m[2] === "s" ? 1000 : 1);
  if (ms <= 0 || ms > 60_000)
    throw usageError(`invalid ${flag} ${JSON.stringify(text)}: must be between 1ms and 60s`);
  return ms;
}
