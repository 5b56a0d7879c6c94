// The one duration parser (webhook/src/shared/duration.ts) and the flags it reads. Until issue 24
// each flag family had a parser of its own; their code is kept below, word for word but for the
// error type, as the oracle that pins every flag's accepted inputs, values and messages.

import assert from "node:assert/strict";
import { once } from "node:events";
import { setTimeout as delay } from "node:timers/promises";
import { Worker } from "node:worker_threads";
import fc from "fast-check";
import {
  parseDuration as vgateDuration,
  parseLongDuration,
  parseSpan,
} from "../../../webhook/src/cli/duration.js";
import { CliError as VgateCliError, EXIT } from "../../../webhook/src/cli/errors.js";
import {
  GO_DURATION,
  parseDuration,
  parseGoDuration,
  readDuration,
  type DurationGrammar,
} from "../../../webhook/src/shared/duration.js";
import { parseDurationFlag, parseRequestTimeout } from "../../../plugin/src/cli/durations.js";
import { CliError as PluginCliError } from "../../../plugin/src/cli/errors.js";
import { parseTtl } from "../../../plugin/src/keys/ttl.js";

class Legacy extends Error {}

// webhook/src/cli/duration.ts: --timeout, --patch-timeout.
function legacyShort(text: string, flag: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s)$/.exec(text.trim());
  if (!m)
    throw new Legacy(`invalid ${flag} ${JSON.stringify(text)}: use a duration such as 100ms or 2s`);
  const ms = Number(m[1]) * (m[2] === "s" ? 1000 : 1);
  if (ms <= 0 || ms > 60_000)
    throw new Legacy(`invalid ${flag} ${JSON.stringify(text)}: must be between 1ms and 60s`);
  return ms;
}

// webhook/src/cli/serve-options.ts: --shutdown-delay, --shutdown-timeout, --admission-timeout, ...
const showMs = (v: number) => (v % 1000 === 0 ? `${v / 1000}s` : `${v}ms`);
function legacySpan(text: string, flag: string, minMs: number, maxMs: number): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)$/.exec(text.trim());
  if (!m && text.trim() !== "0")
    throw new Legacy(`invalid ${flag} ${JSON.stringify(text)}: use a duration such as 500ms or 5s`);
  const ms = m ? Math.round(Number(m[1]) * { ms: 1, s: 1000, m: 60_000 }[m[2] as "ms"]) : 0;
  if (ms < minMs || ms > maxMs) {
    throw new Legacy(
      `invalid ${flag} ${JSON.stringify(text)}: must be between ${showMs(minMs)} and ${showMs(maxMs)}`,
    );
  }
  return ms;
}

// webhook/src/cli/sync-options.ts: --leader-elect-*, --shutdown-timeout of `vgate sync`.
function legacyLong(text: string, flag: string, minMs: number, maxMs: number): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(text.trim());
  if (!m)
    throw new Legacy(
      `invalid ${flag} ${JSON.stringify(text)}: use a duration such as 500ms or 15s`,
    );
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] as "ms" | "s" | "m" | "h"];
  const ms = Math.round(Number(m[1]) * unit);
  if (ms < minMs || ms > maxMs) {
    throw new Legacy(
      `invalid ${flag} ${JSON.stringify(text)}: must be between ${minMs}ms and ${maxMs / 1000}s`,
    );
  }
  return ms;
}

// plugin/src/kube/go-duration.ts and plugin/src/cli/durations.ts: --request-timeout, delete --timeout.
const GO_UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};
// The number as the plugin wrote it, `\d+\.?\d*|\.\d+`, backtracks through every split of a run of
// digits on a refused text (minutes on three long parts), so the copy below uses the same language
// written unambiguously; "Go's number is read as before" checks that the two accept the same texts.
const LEGACY_GO_NUMBER = /^(?:\d+\.?\d*|\.\d+)$/;
/** The same language, one way to match each text: the copy's number. */
const GO_NUMBER = String.raw`\d+(?:\.\d*)?|\.\d+`;
const LEGACY_GO = new RegExp(`^([+-]?)((?:(?:${GO_NUMBER})(?:ns|us|µs|μs|ms|s|m|h))+)$`);
function legacyGo(text: string): number | undefined {
  if (text === "0" || text === "+0" || text === "-0") return 0;
  const m = LEGACY_GO.exec(text);
  if (!m) return undefined;
  let ms = 0;
  for (const part of m[2]!.matchAll(/(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g)) {
    ms += Number(part[1]) * GO_UNIT_MS[part[2]!]!;
  }
  return m[1] === "-" ? -ms : ms;
}
function legacyRequestTimeout(value: string): number {
  const ms = /^\d+$/.test(value) ? Number(value) * 1000 : legacyGo(value);
  if (ms === undefined || ms < 0 || !Number.isFinite(ms)) {
    throw new Legacy(
      `invalid --request-timeout ${JSON.stringify(value)}: give a whole number of seconds, or a number with a unit (e.g. 1s, 2m, 3h); 0 means no timeout`,
    );
  }
  return ms;
}
function legacyGoFlag(flag: string, value: string): number {
  const ms = legacyGo(value);
  if (ms === undefined || ms < 0 || !Number.isFinite(ms)) {
    throw new Legacy(
      `invalid ${flag} ${JSON.stringify(value)}: give a number with a unit (e.g. 30s, 5m, 1h30m); 0 means the default`,
    );
  }
  return ms;
}

// plugin/src/keys/ttl.ts: create --ttl.
const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 };
function legacyTtl(text: string, flag = "--ttl"): number {
  const value = text.trim();
  const parts = [...value.matchAll(/(\d+)([smhdw])/g)];
  const whole = parts.map((p) => p[0]).join("");
  if (parts.length === 0 || whole !== value) {
    throw new Legacy(
      `invalid ${flag} ${JSON.stringify(text)}: use a number with a unit s, m, h, d or w (e.g. 90s, 30m, 12h, 30d, 2w)`,
    );
  }
  const seconds = parts.reduce((sum, p) => sum + Number(p[1]) * UNIT_SECONDS[p[2]!]!, 0);
  if (!Number.isSafeInteger(seconds) || seconds <= 0) {
    throw new Legacy(`invalid ${flag} ${JSON.stringify(text)}: must be more than 0 seconds`);
  }
  return seconds;
}

/** The value, or the message and the error's type. */
function outcome(read: () => number | undefined): unknown {
  try {
    return { value: read() };
  } catch (err) {
    assert.ok(err instanceof Error, String(err));
    return { message: err.message, type: err.constructor };
  }
}

// Text made of what duration grammars are built of, and of near misses.
const TOKENS = [
  ...["0", "1", "5", "9", "10", "12", "60", "007", "1.5", ".5", "1.", "3600", "1.0000001"],
  ...["ns", "us", "µs", "μs", "ms", "s", "m", "h", "d", "w", "y", "x", "S", "MS"],
  ...[".", "+", "-", " ", "\t", "\n", "e3", "1e3", "9".repeat(400), "9007199254740993"],
];
const durationText = fc.oneof(
  fc.array(fc.constantFrom(...TOKENS), { maxLength: 7 }).map((t) => t.join("")),
  fc.string({ maxLength: 8 }),
);

describe("one duration parser", () => {
  // What each flag read before the parsers were one (issue 24): same values, same messages.
  const pairs: [string, (t: string) => number | undefined, (t: string) => number | undefined][] = [
    ["--timeout", (t) => vgateDuration(t, "--timeout"), (t) => legacyShort(t, "--timeout")],
    [
      "--shutdown-delay",
      (t) => parseSpan(t, "--shutdown-delay", 0, 300_000),
      (t) => legacySpan(t, "--shutdown-delay", 0, 300_000),
    ],
    [
      "--tls-reload-interval",
      (t) => parseSpan(t, "--tls-reload-interval", 100, 600_000),
      (t) => legacySpan(t, "--tls-reload-interval", 100, 600_000),
    ],
    [
      "--leader-elect-lease-duration",
      (t) => parseLongDuration(t, "--leader-elect-lease-duration", 1000, 3_600_000),
      (t) => legacyLong(t, "--leader-elect-lease-duration", 1000, 3_600_000),
    ],
    ["--request-timeout", parseRequestTimeout, legacyRequestTimeout],
    [
      "delete --timeout",
      (t) => parseDurationFlag("--timeout", t),
      (t) => legacyGoFlag("--timeout", t),
    ],
    ["parseGoDuration", parseGoDuration, legacyGo],
    ["--ttl", parseTtl, legacyTtl],
  ];
  for (const [name, now, before] of pairs) {
    it(`${name} reads what it read before, with the same messages`, () => {
      fc.assert(
        fc.property(durationText, (text) => {
          const a = outcome(() => now(text)) as { value?: number; message?: string };
          const b = outcome(() => before(text)) as { value?: number; message?: string };
          // Object.is: -0 stays -0 ("-0s" to --request-timeout), as before.
          assert.ok(
            Object.is(a.value, b.value),
            `${JSON.stringify(text)}: ${a.value} ≠ ${b.value}`,
          );
          assert.equal(a.message, b.message, JSON.stringify(text));
        }),
        { numRuns: 3000 },
      );
    });
  }

  it("Go's number is read as before", () => {
    const number = fc.array(fc.constantFrom("0", "7", ".", "9", "x"), { maxLength: 12 });
    fc.assert(
      fc.property(number, (chars) => {
        const text = chars.join("");
        const now = new RegExp(`^(?:${GO_NUMBER})$`).test(text);
        assert.equal(now, LEGACY_GO_NUMBER.test(text), JSON.stringify(text));
        assert.equal(parseGoDuration(`${text}s`) !== undefined, now, JSON.stringify(text));
      }),
      { numRuns: 3000 },
    );
  });

  it("refuses a text of many long parts without trying every split of its digits", async () => {
    // Six parts of 400 digits, then a character no grammar takes: an ambiguous number pattern
    // backtracks through 400^6 splits and never returns; an unambiguous one refuses at once. The
    // parse runs in a worker, so that the old pattern fails this test instead of hanging the run.
    const text = `${"9".repeat(400)}s`.repeat(6) + "x";
    const module = new URL("../../../webhook/src/shared/duration.js", import.meta.url).href;
    const worker = new Worker(
      `const { parentPort, workerData } = require("node:worker_threads");
       import(workerData.module).then((m) => parentPort.postMessage(m.parseGoDuration(workerData.text) ?? null));`,
      { eval: true, workerData: { module, text } },
    );
    const stop = new AbortController();
    const answer = await Promise.race([
      once(worker, "message").then(([value]) => ({ value })),
      delay(15_000, "still parsing after 15 s", { signal: stop.signal }),
    ]).finally(() => stop.abort());
    await worker.terminate();
    assert.deepEqual(answer, { value: null });
    assert.throws(() => parseRequestTimeout(text), /invalid --request-timeout/);
  });

  it("each side reports its own error type: vgate's usage error (exit 2), the plugin's CliError", () => {
    const vgate = outcome(() => parseSpan("5", "--shutdown-delay", 0, 300_000)) as {
      type: unknown;
    };
    assert.equal(vgate.type, VgateCliError);
    assert.throws(
      () => parseLongDuration("soon", "--leader-elect-retry-period", 1, 3_600_000),
      (err: unknown) => err instanceof VgateCliError && err.exitCode === EXIT.USAGE,
    );
    assert.throws(() => parseTtl("1y"), PluginCliError);
    assert.throws(() => parseRequestTimeout("-1s"), PluginCliError);
  });

  it("n of a unit is n times the unit, in the grammar's result unit", () => {
    const ms = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1_000_000 }),
        fc.constantFrom("ms", "s", "m", "h"),
        (n, u) => {
          assert.equal(parseGoDuration(`${n}${u}`), n * ms[u]);
          // Whole seconds stay exact when the result is in seconds (spec.ttl's unit).
          const inSeconds: DurationGrammar = { ...GO_DURATION, result: "s" };
          if (u !== "ms") assert.equal(readDuration(`${n}${u}`, inSeconds), (ms[u] * n) / 1000);
        },
      ),
    );
  });

  it("a compound duration is the sum of its parts, and a sign negates it all", () => {
    const part = fc.tuple(
      fc.integer({ min: 0, max: 10_000 }),
      fc.constantFrom("h", "m", "s", "ms"),
    );
    const ms = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;
    fc.assert(
      fc.property(fc.array(part, { minLength: 1, maxLength: 5 }), (parts) => {
        const text = parts.map(([n, u]) => `${n}${u}`).join("");
        const sum = parts.reduce((s, [n, u]) => s + n * ms[u], 0);
        assert.equal(parseGoDuration(text), sum);
        assert.ok(Object.is(parseGoDuration(`-${text}`), -sum));
        const single: DurationGrammar = { ...GO_DURATION, compound: false };
        assert.equal(readDuration(text, single), parts.length === 1 ? sum : undefined);
      }),
    );
  });

  it("options change only what they say", () => {
    const g: DurationGrammar = {
      units: ["s"],
      number: "integer",
      compound: false,
      sign: false,
      trim: false,
      bare: "none",
      result: "ms",
      round: false,
    };
    assert.equal(readDuration("2s", g), 2000);
    assert.equal(readDuration(" 2s", g), undefined);
    assert.equal(readDuration(" 2s ", { ...g, trim: true }), 2000);
    assert.equal(readDuration("1.5s", g), undefined);
    assert.equal(readDuration("1.5s", { ...g, number: "decimal" }), 1500);
    assert.equal(readDuration(".5s", { ...g, number: "decimal" }), undefined);
    assert.equal(readDuration(".5s", { ...g, number: "go" }), 500);
    assert.equal(readDuration("2m", g), undefined);
    assert.equal(readDuration("2m", { ...g, units: ["s", "m"] }), 120_000);
    assert.equal(readDuration("0", g), undefined);
    assert.equal(readDuration("0", { ...g, bare: "zero" }), 0);
    assert.equal(readDuration("7", { ...g, bare: "zero" }), undefined);
    assert.equal(readDuration("7", { ...g, bare: "seconds" }), 7000);
    assert.equal(readDuration("-2s", g), undefined);
    assert.equal(readDuration("-2s", { ...g, sign: true }), -2000);
    assert.equal(readDuration("0.0004s", { ...g, number: "decimal" }), 0.4);
    assert.equal(readDuration("0.0004s", { ...g, number: "decimal", round: true }), 0);
  });

  it("ranges: inclusive bounds, an exclusive minimum, and the range's own words", () => {
    const flag = {
      flag: "--x",
      grammar: { ...GO_DURATION, trim: true },
      min: 1000,
      max: 2000,
      hint: "a duration",
      rangeHint: "from 1s to 2s",
      error: (message: string) => new Legacy(message),
    };
    assert.equal(parseDuration("1s", flag), 1000);
    assert.equal(parseDuration("2s", flag), 2000);
    assert.throws(() => parseDuration("2001ms", flag), {
      message: 'invalid --x "2001ms": from 1s to 2s',
    });
    assert.throws(() => parseDuration("1s", { ...flag, minExclusive: true }), /from 1s to 2s/);
    assert.throws(() => parseDuration(" soon ", flag), {
      message: 'invalid --x " soon ": a duration',
    });
    assert.throws(() => parseDuration("3s", { ...flag, rangeHint: undefined }), {
      message: 'invalid --x "3s": a duration',
    });
  });
});
