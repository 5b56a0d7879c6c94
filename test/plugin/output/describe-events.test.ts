// The Events section of describe at a fixed "now", for the forms kubectl's DescribeEvents prints
// that the cluster test (describe-events.test.ts in test/plugin) does not reach: an Event series
// (events.k8s.io's eventTime and series), missing timestamps, and the order on lastTimestamp.

import { strict as assert } from "node:assert";
import { describeAccessKey } from "../../../plugin/src/output/print.js";
import { eventLines } from "../../../plugin/src/output/describe-events.js";
import { ciKey, NOW } from "./fixtures.js";

const ago = (ms: number) => new Date(NOW - ms).toISOString();
const MIN = 60_000;

describe("describe's Events section", () => {
  it("prints kubectl's Age forms: once, xN over, a series, <unknown>", () => {
    const lines = eventLines(
      [
        {
          type: "Normal",
          reason: "Once",
          firstTimestamp: ago(5 * MIN),
          lastTimestamp: ago(5 * MIN),
        },
        {
          type: "Warning",
          reason: "Twice",
          count: 2,
          firstTimestamp: ago(5 * MIN),
          lastTimestamp: ago(3 * MIN),
        },
        {
          type: "Normal",
          reason: "Series",
          eventTime: ago(30 * MIN),
          firstTimestamp: ago(90 * MIN),
          series: { count: 4, lastObservedTime: ago(2.5 * MIN) },
          lastTimestamp: ago(MIN),
        },
        { type: "Normal", reason: "Unknown", reportingComponent: "rc", lastTimestamp: ago(0) },
      ],
      NOW,
    );
    assert.deepEqual(lines.slice(3), [
      "  Normal\tOnce\t5m\t\t",
      "  Warning\tTwice\t3m (x2 over 5m)\t\t",
      "  Normal\tSeries\t2m30s (x4 over 30m)\t\t",
      "  Normal\tUnknown\t<unknown>\trc\t",
    ]);
  });

  it("sorts on lastTimestamp, a missing one first, and keeps the list's order on ties", () => {
    const at = (reason: string, ms?: number) =>
      ms === undefined ? { reason } : { reason, lastTimestamp: ago(ms) };
    const lines = eventLines([at("b", MIN), at("a", 2 * MIN), at("none"), at("c", MIN)], NOW);
    assert.deepEqual(
      lines.slice(3).map((l) => l.split("\t")[1]),
      ["none", "a", "b", "c"],
    );
  });

  it("ends the describe: <none> aligned with the fields, a table after them, none when not asked", () => {
    const plain = describeAccessKey(ciKey, NOW);
    assert.doesNotMatch(plain, /Events:/);
    const none = describeAccessKey(ciKey, NOW, [], []);
    assert.ok(none.startsWith(plain.slice(0, plain.indexOf("\n"))), none);
    assert.match(none, /\nEvents: +<none>\n$/);
    const one = describeAccessKey(
      ciKey,
      NOW,
      [],
      [{ type: "Warning", reason: "AccessKeyExpiring", message: "soon", lastTimestamp: ago(MIN) }],
    );
    assert.ok(
      one.endsWith(
        "Events:\n" +
          "  Type     Reason             Age        From  Message\n" +
          "  ----     ------             ----       ----  -------\n" +
          "  Warning  AccessKeyExpiring  <unknown>        soon\n",
      ),
      one,
    );
  });
});
