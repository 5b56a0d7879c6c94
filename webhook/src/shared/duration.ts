// One parser for every duration a person types (vgate's and kubectl accesskey's flags). The flags
// keep the grammars they always had, so each states its own: the units it takes, whether a number
// may have a fraction, several parts ("1h30m"), a sign, what a bare number means, the range, and
// the words of its errors. GO_DURATION is Go's time.ParseDuration, which pflag's Duration flags
// and client-go read.

/** The unit suffixes; Go spells microseconds "us", "µs" (U+00B5) or "μs" (U+03BC). */
export type DurationUnit = "ns" | "us" | "µs" | "μs" | "ms" | "s" | "m" | "h" | "d" | "w";

const UNIT_MS: Record<DurationUnit, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

// Seconds are kept exact for whole-second units (no division of the millisecond table).
const UNIT_S: Record<DurationUnit, number> = {
  ns: 1e-9,
  us: 1e-6,
  µs: 1e-6,
  μs: 1e-6,
  ms: 1e-3,
  s: 1,
  m: 60,
  h: 3600,
  d: 86_400,
  w: 604_800,
};

const NUMBER = {
  /** 90 */
  integer: String.raw`\d+`,
  /** 90, 1.5 */
  decimal: String.raw`\d+(?:\.\d+)?`,
  /**
   * Go's: 1, 1.5, 1., .5. Written so that a run of digits matches one way only: `\d+\.?\d*` could
   * split "999" between its two runs, and on a refused text of several long parts the backtracking
   * tried every split of every part (three parts of 400 digits took 72 s of CPU).
   */
  go: String.raw`\d+(?:\.\d*)?|\.\d+`,
} as const;

export interface DurationGrammar {
  /** The suffixes taken. */
  units: readonly DurationUnit[];
  /** How a number is written (before its unit). */
  number: keyof typeof NUMBER;
  /** Several number-unit parts in a row, summed: "1h30m", "1d12h". */
  compound: boolean;
  /** A leading + or -, as Go takes ("-2s", "+0"). */
  sign: boolean;
  /** Spaces around the text are ignored. */
  trim: boolean;
  /**
   * A number without a unit: "none" refuses it, "zero" takes "0" alone (signed if `sign`, as Go
   * does), "seconds" takes a whole number as seconds (client-go's clientcmd.ParseTimeout) and
   * Go's signed zero.
   */
  bare: "none" | "zero" | "seconds";
  /** The unit of the result. */
  result: "ms" | "s";
  /** Round the result to a whole number of `result`. */
  round: boolean;
}

/** time.ParseDuration: "300ms", "1.5h", "2h45m", "-1.5s", "0"; in milliseconds, not rounded. */
export const GO_DURATION: DurationGrammar = Object.freeze({
  units: Object.freeze(["ns", "us", "µs", "μs", "ms", "s", "m", "h"] as const),
  number: "go",
  compound: true,
  sign: true,
  trim: false,
  bare: "zero",
  result: "ms",
  round: false,
});

const compiled = new WeakMap<DurationGrammar, { whole: RegExp; part: RegExp }>();

function compile(grammar: DurationGrammar): { whole: RegExp; part: RegExp } {
  let regexps = compiled.get(grammar);
  if (!regexps) {
    // Longest first, so that "ms" is never read as "m" followed by "s".
    const units = [...grammar.units].sort((a, b) => b.length - a.length).join("|");
    const part = `(?:${NUMBER[grammar.number]})(?:${units})`;
    const body = grammar.compound ? `(?:${part})+` : part;
    regexps = {
      whole: new RegExp(`^(${grammar.sign ? "[+-]?" : ""})(${body})$`),
      part: new RegExp(`(${NUMBER[grammar.number]})(${units})`, "g"),
    };
    compiled.set(grammar, regexps);
  }
  return regexps;
}

/** The duration `text` says, in `grammar.result` units; undefined when the grammar refuses it. */
export function readDuration(text: string, grammar: DurationGrammar): number | undefined {
  const value = grammar.trim ? text.trim() : text;
  const factor = grammar.result === "ms" ? UNIT_MS : UNIT_S;
  if (grammar.bare === "seconds" && /^\d+$/.test(value)) return Number(value) * factor.s;
  if (grammar.bare !== "none" && (value === "0" || (grammar.sign && /^[+-]0$/.test(value)))) {
    return 0;
  }
  const { whole, part } = compile(grammar);
  const m = whole.exec(value);
  if (!m) return undefined;
  let sum = 0;
  for (const p of m[2]!.matchAll(part)) sum += Number(p[1]) * factor[p[2] as DurationUnit];
  if (grammar.round) sum = Math.round(sum);
  return m[1] === "-" ? -sum : sum;
}

/** Go's time.ParseDuration, in milliseconds; undefined when Go would refuse the text. */
export const parseGoDuration = (text: string): number | undefined =>
  readDuration(text, GO_DURATION);

/** One duration flag: its grammar, its range and its errors. */
export interface DurationFlag {
  /** As the user types it: "--timeout". */
  flag: string;
  grammar: DurationGrammar;
  /** The smallest value taken (in `grammar.result` units); above it only, when `minExclusive`. */
  min: number;
  minExclusive?: boolean;
  /** The largest value taken. */
  max: number;
  /** What follows `invalid --flag "text": ` when the text is not a duration. */
  hint: string;
  /** What follows it when the duration is out of range; `hint` when absent. */
  rangeHint?: string;
  /** The error the flag's command line reports (exit codes differ between vgate and the plugin). */
  error: (message: string) => Error;
}

/** The duration `text` gives `flag`, in `flag.grammar.result` units; throws `flag.error(…)`. */
export function parseDuration(text: string, flag: DurationFlag): number {
  const fail = (hint: string) =>
    flag.error(`invalid ${flag.flag} ${JSON.stringify(text)}: ${hint}`);
  const value = readDuration(text, flag.grammar);
  if (value === undefined) throw fail(flag.hint);
  const low = flag.minExclusive ? value <= flag.min : value < flag.min;
  if (low || value > flag.max) throw fail(flag.rangeHint ?? flag.hint);
  return value;
}
