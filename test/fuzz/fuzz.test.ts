// The fuzzer in short (make fuzz sends 100,000 requests): 3,000 generated requests against a real
// `vgate serve` on a rig of its own, with a fixed seed so CI is reproducible. See fuzz.ts.

import assert from "node:assert/strict";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../support/kube/binaries.js";
import { ROUTES } from "./bodies.js";
import { formatFuzzReport, runFuzz } from "./fuzz.js";

(HAVE_KUBE ? describe : describe.skip)(`fuzz, short${KUBE_SKIP_REASON}`, function () {
  this.timeout(300_000);

  it("3,000 generated requests: no crash, no hang, every answer a review or a 4xx Status", async () => {
    const report = await runFuzz({
      requests: 3000,
      seed: 20261125,
      lanes: 4,
      timeoutMs: 10_000,
      failureFile: join(tmpdir(), `vgate-fuzz-failures-${process.pid}.json`),
    });
    const summary = formatFuzzReport(report);
    console.log(summary.replace(/^/gm, "      "));
    assert.ok(report.sent >= 3000, summary);
    // Not only refusals: most mutated bodies must still reach vgate's review logic.
    const reviews = Object.entries(report.outcomes)
      .filter(([k]) => k.startsWith("200 "))
      .reduce((n, [, c]) => n + c, 0);
    assert.ok(reviews > 300, `only ${reviews} answers were reviews\n${summary}`);
    for (const route of ROUTES) {
      assert.ok(
        (report.byRoute[route]?.reviews ?? 0) > 20,
        `${route}: too few reviews\n${summary}`,
      );
    }
    assert.ok(report.pass, summary);
  });
});
