// The fuzzer in short (make fuzz sends 100,000 requests): 3,000 generated requests against three
// real `vgate serve` processes on a rig of their own (keys stored plain, keys stored hashed, a key
// cache that never syncs), with six client certificates, and a fixed seed so CI is reproducible.
// See fuzz.ts.

import assert from "node:assert/strict";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../support/kube/binaries.js";
import { ROUTES } from "./bodies.js";
import { formatFuzzReport, runFuzz, UNSYNCED_READYZ } from "./fuzz.js";
import { IDENTITIES, TRUSTED } from "./identities.js";
import { TARGETS } from "./targets.js";

(HAVE_KUBE ? describe : describe.skip)(`fuzz, short${KUBE_SKIP_REASON}`, function () {
  this.timeout(300_000);

  it("3,000 generated requests to three vgates with six certificates: every answer as judged", async () => {
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
    const counts = Object.entries(report.outcomes);
    const sum = (rows: typeof counts) =>
      rows.flatMap(([, byTarget]) => Object.values(byTarget)).reduce((n, c) => n + c, 0);
    const reviews = sum(counts.filter(([k]) => k.startsWith("200 ")));
    assert.ok(reviews > 300, `only ${reviews} answers were reviews\n${summary}`);
    for (const route of ROUTES) {
      assert.ok(
        (report.byRoute[route]?.reviews ?? 0) > 20,
        `${route}: too few reviews\n${summary}`,
      );
    }
    // Each vgate got its share, and each judged rule met the answers it is about.
    for (const target of TARGETS) {
      const n = counts.reduce((total, [, byTarget]) => total + (byTarget[target] ?? 0), 0);
      assert.ok(n > 300, `${target}: only ${n} requests\n${summary}`);
    }
    const seen = (tag: string) =>
      assert.ok((report.tags[tag] ?? 0) > 0, `nothing judged as "${tag}"\n${summary}`);
    for (const identity of IDENTITIES.filter((i) => i !== TRUSTED)) {
      seen(`certificate refused: ${identity}`);
    }
    for (const tag of [
      // The exact answers of unmutated bodies (expectations.ts), each met at least once.
      "login refused until loaded",
      "key request refused until loaded",
      "new key refused until loaded",
      "unchanged key allowed while not loaded",
      "key hashed",
      "key shown elsewhere refused",
      "plaintext spec.key refused",
      "short key refused",
      // The rules every answer is held to, each applied at least once.
      "admitted object holds no plaintext key",
      "not loaded (503)",
      "new key refused (503)",
    ]) {
      seen(tag);
    }
    assert.equal(report.end.unsynced.readyz, UNSYNCED_READYZ, summary);
    assert.ok(report.failedLists > 0, summary);
    assert.ok(report.pass, summary);
  });
});
