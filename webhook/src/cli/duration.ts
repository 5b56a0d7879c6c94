// vgate's duration flags, each with the grammar it has always had, read by shared/duration.ts.

import { parseDuration as parse, type DurationGrammar } from "../shared/duration.js";
import { usageError } from "./errors.js";

/** A number (with a fraction or not) and one unit, spaces around it ignored; in milliseconds. */
const grammar = (units: DurationGrammar["units"], extra: Partial<DurationGrammar> = {}) =>
  Object.freeze<DurationGrammar>({
    units,
    number: "decimal",
    compound: false,
    sign: false,
    trim: true,
    bare: "none",
    result: "ms",
    round: true,
    ...extra,
  });

const SHORT = grammar(["ms", "s"], { round: false });
const SPAN = grammar(["ms", "s", "m"], { bare: "zero" });
const LONG = grammar(["ms", "s", "m", "h"]);

/** 5000 → "5s", 1500 → "1500ms": how vgate shows a span's bounds and defaults. */
export const showMs = (v: number) => (v % 1000 === 0 ? `${v / 1000}s` : `${v}ms`);

/** --timeout, --patch-timeout: "100ms" or "2s", from 1 ms to 60 s (more than 0, not rounded). */
export function parseDuration(text: string, flag: string): number {
  return parse(text, {
    flag,
    grammar: SHORT,
    min: 0,
    minExclusive: true,
    max: 60_000,
    hint: "use a duration such as 100ms or 2s",
    rangeHint: "must be between 1ms and 60s",
    error: usageError,
  });
}

/** `vgate serve`'s spans: "0", or a number and ms, s or m, within [minMs, maxMs]. */
export function parseSpan(text: string, flag: string, minMs: number, maxMs: number): number {
  return parse(text, {
    flag,
    grammar: SPAN,
    min: minMs,
    max: maxMs,
    hint: "use a duration such as 500ms or 5s",
    rangeHint: `must be between ${showMs(minMs)} and ${showMs(maxMs)}`,
    error: usageError,
  });
}

/** `vgate sync`'s: a Go-style duration of one unit: 500ms, 15s, 2m, 1h; within [minMs, maxMs]. */
export function parseLongDuration(
  text: string,
  flag: string,
  minMs: number,
  maxMs: number,
): number {
  return parse(text, {
    flag,
    grammar: LONG,
    min: minMs,
    max: maxMs,
    hint: "use a duration such as 500ms or 15s",
    rangeHint: `must be between ${minMs}ms and ${maxMs / 1000}s`,
    error: usageError,
  });
}

const LIFETIME = grammar(["s", "m", "h", "d"], { compound: true });

/**
 * A key's lifetimes (--expiry-warning-thresholds, --expired-key-retention): one or more parts of
 * a number and s, m, h or d, summed ("7d", "36h", "1d12h"); within [minMs, maxMs].
 */
export function parseLifetime(text: string, flag: string, minMs: number, maxMs: number): number {
  return parse(text, {
    flag,
    grammar: LIFETIME,
    min: minMs,
    max: maxMs,
    hint: "use a duration such as 7d, 24h or 1d12h",
    rangeHint: `must be between ${minMs / 1000}s and ${maxMs / 86_400_000}d`,
    error: usageError,
  });
}
