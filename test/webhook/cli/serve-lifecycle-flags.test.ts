// `vgate serve`'s key lifecycle flags (cli/serve-options.ts): off by default, the thresholds and
// retention as durations with days, and leader election as `vgate sync` takes it.

import assert from "node:assert/strict";
import { parseServeArgs, type ServeOptions } from "../../../webhook/src/cli/serve-options.js";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

function parse(args: string[]): ServeOptions {
  const opts = parseServeArgs(["--dev", ...args]);
  assert.ok(opts !== "help");
  return opts;
}

function usage(args: string[], message: RegExp): void {
  assert.throws(
    () => parseServeArgs(["--dev", ...args]),
    (err: Error & { exitCode?: number }) => {
      assert.match(err.message, message);
      assert.equal(err.exitCode, 2);
      return true;
    },
  );
}

describe("vgate serve key lifecycle flags", () => {
  it("writes nothing by default: no warnings, no retention, no Lease", () => {
    const { lifecycle } = parse([]);
    assert.equal(lifecycle?.warnings, false);
    assert.equal(lifecycle?.retentionMs, undefined);
    assert.deepEqual(lifecycle?.thresholdsMs, [7 * DAY, DAY]);
    assert.equal(lifecycle?.metricMaxSeries, 1000);
    assert.equal(lifecycle?.leaderElection.enabled, false);
  });

  it("elects a leader in the namespace vgate runs in when it writes", () => {
    const { lifecycle } = parse(["--expiry-warnings", "--namespace=vgate-system"]);
    assert.deepEqual(lifecycle?.leaderElection, {
      enabled: true,
      id: "vgate-key-lifecycle",
      namespace: "vgate-system",
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
    });
    const other = parse([
      "--expired-key-retention=30d",
      "--leader-election-namespace=ops",
      "--leader-election-id=keys",
    ]).lifecycle?.leaderElection;
    assert.equal(other?.namespace, "ops");
    assert.equal(other?.id, "keys");
    assert.equal(
      parse(["--expiry-warnings", "--leader-elect=false"]).lifecycle?.leaderElection.enabled,
      false,
    );
  });

  it("needs a namespace for the Lease, unless there is no election", () => {
    const saved = process.env.POD_NAMESPACE;
    delete process.env.POD_NAMESPACE;
    try {
      usage(["--expiry-warnings"], /--leader-election-namespace .* or --leader-elect=false/);
    } finally {
      if (saved !== undefined) process.env.POD_NAMESPACE = saved;
    }
    usage(["--expiry-warnings", "--leader-elect=maybe"], /invalid --leader-elect "maybe"/);
  });

  it("takes thresholds and retention in days, hours or both", () => {
    const { lifecycle } = parse([
      "--expiry-warning-thresholds=2h, 1d12h ,2h",
      "--expired-key-retention=1d6h",
      "--leader-elect=false",
    ]);
    assert.deepEqual(lifecycle?.thresholdsMs, [36 * HOUR, 2 * HOUR]);
    assert.equal(lifecycle?.retentionMs, 30 * HOUR);
    usage(["--expiry-warning-thresholds=soon"], /invalid --expiry-warning-thresholds "soon"/);
    usage(["--expiry-warning-thresholds=,"], /one to ten durations/);
    usage(["--expiry-metric-max-series=-1"], /invalid --expiry-metric-max-series/);
  });

  it("keeps a retention no shorter than a replica's unwritten activity", () => {
    usage(
      ["--expired-key-retention=30s", "--leader-elect=false"],
      /--expired-key-retention must be at least --activity-write-interval/,
    );
    const ok = parse([
      "--expired-key-retention=30s",
      "--activity-write-interval=30s",
      "--leader-elect=false",
    ]);
    assert.equal(ok.lifecycle?.retentionMs, 30_000);
  });
});
