// Durations read and written as Go does (time.ParseDuration, time.Duration.String), and
// --request-timeout as client-go's clientcmd.ParseTimeout reads it.

import assert from "node:assert/strict";
import { parseDurationFlag, parseRequestTimeout } from "../../../plugin/src/cli/durations.js";
import { goDuration } from "../../../plugin/src/kube/go-duration.js";
import { parseGoDuration } from "../../../webhook/src/shared/duration.js";

describe("plugin durations", () => {
  it("parseGoDuration reads what time.ParseDuration reads", () => {
    const cases: [string, number][] = [
      ["0", 0],
      ["1s", 1000],
      ["1.5s", 1500],
      ["300ms", 300],
      ["1h30m", 5_400_000],
      ["2m3.5s", 123_500],
      [".5s", 500],
      ["1000us", 1],
      ["1000000ns", 1],
      ["-2s", -2000],
    ];
    for (const [text, ms] of cases) assert.equal(parseGoDuration(text), ms, text);
    // Go: missing unit, unknown unit, empty, spaces.
    for (const bad of ["30", "5x", "", "1 s", "s", "1d"])
      assert.equal(parseGoDuration(bad), undefined, bad);
  });

  it("goDuration prints what time.Duration.String prints", () => {
    const cases: [number, string][] = [
      [0, "0s"],
      [500, "500ms"],
      [1000, "1s"],
      [1500, "1.5s"],
      [60_000, "1m0s"],
      [90_000, "1m30s"],
      [3_600_000, "1h0m0s"],
      [7_384_250, "2h3m4.25s"],
      [168 * 3_600_000, "168h0m0s"],
    ];
    for (const [ms, text] of cases) assert.equal(goDuration(ms), text, String(ms));
  });

  it("--request-timeout: a whole number is seconds, else a Go duration; negative is refused", () => {
    assert.equal(parseRequestTimeout(undefined), 0);
    assert.equal(parseRequestTimeout("0"), 0);
    assert.equal(parseRequestTimeout("5"), 5000);
    assert.equal(parseRequestTimeout("250ms"), 250);
    for (const bad of ["-1", "-1s", "5x", "1d"])
      assert.throws(() => parseRequestTimeout(bad), /invalid --request-timeout/);
  });

  it("a Go duration flag refuses a bare number, as pflag's DurationVar does", () => {
    assert.equal(parseDurationFlag("--timeout", undefined), 0);
    assert.equal(parseDurationFlag("--timeout", "0"), 0);
    assert.equal(parseDurationFlag("--timeout", "2m"), 120_000);
    assert.throws(() => parseDurationFlag("--timeout", "30"), /invalid --timeout "30"/);
  });
});
