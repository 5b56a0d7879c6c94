// Hundreds of slow and stalling clients against a real `vgate serve` process, from another process,
// while this one sends good AdmissionReviews: vgate's memory stays bounded, good requests are
// answered on time, and every slow client is cut off within seconds. The figures are printed.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { request } from "node:https";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { repoRoot } from "../../support/fixtures.js";
import { httpsRequest } from "../../support/https-client.js";
import { startDevServe, type DevServe } from "./dev-serve.js";
import { ATTACKERS, type AttackerKind, type KindReport } from "./slow-clients.js";

/** The issue's memory target for vgate, whatever clients do. */
const RSS_LIMIT_MB = 150;
/**
 * A good request takes a few to a few hundred milliseconds during the attack; this bound is loose
 * because the attackers, vgate and this test share a noisy 2-core machine, and a TLS handshake
 * under that load can take a second. Before the limits, good requests were answered too: the
 * failure mode was memory, not latency.
 */
const GOOD_LATENCY_MS = 3_000;
/**
 * Every slow connection is closed within this long: the longest limit (5 s for headers or a body)
 * plus Node's 1 s check and slack for a busy machine. Before the limits: 30 to 65 s.
 */
const CUT_OFF_MS = 10_000;
const ATTACK_SECONDS = 20;
const GOOD_EVERY_MS = 250;

const EXAMPLE = readFileSync(resolve(repoRoot, "webhook/examples/admission-review.json"));
const ATTACKER_SCRIPT = fileURLToPath(new URL("./slow-clients.js", import.meta.url));

interface Good {
  ok: boolean;
  ms: number;
  what: string;
}

/** One good AdmissionReview on a new connection (the slow path: a TLS handshake under load). */
function goodRequest(url: string): Promise<Good> {
  const started = Date.now();
  return new Promise((res) => {
    const req = request(
      `${url}/validate/ownedaccesskeys`,
      {
        method: "POST",
        agent: false,
        rejectUnauthorized: false,
        timeout: 20_000,
        headers: { "Content-Type": "application/json", "Content-Length": EXAMPLE.length },
      },
      (r) => {
        let text = "";
        r.on("data", (c: Buffer) => (text += String(c)));
        r.on("end", () => {
          const allowed = r.statusCode === 200 && /"allowed":true/.test(text);
          res({ ok: allowed, ms: Date.now() - started, what: `${r.statusCode} ${text}` });
        });
      },
    );
    req.on("timeout", () => req.destroy(new Error("timed out")));
    req.on("error", (e) => res({ ok: false, ms: Date.now() - started, what: e.message }));
    req.end(EXAMPLE);
  });
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;

describe("vgate serve under hundreds of slow clients", function () {
  this.timeout(ATTACK_SECONDS * 1000 + 60_000);
  let vgate: DevServe | undefined;
  after(async () => {
    await vgate?.stop();
  });

  it(`keeps RSS under ${RSS_LIMIT_MB} MB, answers good requests on time and cuts slow clients off within seconds`, async () => {
    vgate = await startDevServe();
    const idle = vgate.rssMb().now;
    const attackers = spawn(
      process.execPath,
      [ATTACKER_SCRIPT, String(vgate.port), String(ATTACK_SECONDS)],
      {
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    let out = "";
    attackers.stdout.on("data", (c: Buffer) => (out += String(c)));
    const finished = new Promise<void>((r) => attackers.once("exit", () => r()));
    let running = true;
    void finished.then(() => (running = false));

    const good: Good[] = [];
    // Let the attackers connect first.
    await new Promise((r) => setTimeout(r, 1_000));
    while (running) {
      good.push(await goodRequest(vgate.url));
      await new Promise((r) => setTimeout(r, GOOD_EVERY_MS));
    }
    await finished;
    const report = JSON.parse(out) as Record<AttackerKind, KindReport>;
    const peak = vgate.rssMb().peak;

    const ms = good.map((g) => g.ms).sort((a, b) => a - b);
    const clients = Object.values(ATTACKERS).reduce((a, b) => a + b, 0);
    const connections = Object.values(report).reduce((a, r) => a + r.closed + r.open, 0);
    console.log(
      `      ${clients} slow clients, ${connections} connections in ${ATTACK_SECONDS} s: vgate peak RSS ${peak.toFixed(0)} MB (${idle.toFixed(0)} MB idle); ` +
        `${good.length} good requests, p50 ${percentile(ms, 0.5)} ms, p99 ${percentile(ms, 0.99)} ms, max ${ms.at(-1)} ms; ` +
        `longest-lived slow connection per kind: ${Object.entries(report)
          .map(([k, r]) => `${k} ${(Math.max(r.longestMs, r.openLongestMs) / 1000).toFixed(1)} s`)
          .join(", ")}`,
    );

    assert.ok(peak < RSS_LIMIT_MB, `vgate's peak RSS was ${peak} MB`);
    assert.ok(good.length >= 10, `only ${good.length} good requests were sent`);
    for (const g of good) assert.ok(g.ok, `a good request failed: ${g.what}`);
    assert.ok(ms.at(-1)! < GOOD_LATENCY_MS, `a good request took ${ms.at(-1)} ms`);
    for (const [kind, r] of Object.entries(report)) {
      assert.ok(r.closed > 0, `vgate closed no ${kind} connection: ${JSON.stringify(r)}`);
      const longest = Math.max(r.longestMs, r.openLongestMs);
      assert.ok(longest < CUT_OFF_MS, `a ${kind} connection lived ${longest} ms`);
    }
    // Large bodies were turned away at once with 429, not held.
    assert.ok((report.slowBody.statuses["429"] ?? 0) > 0, JSON.stringify(report.slowBody));
    assert.equal((await httpsRequest(`${vgate.url}/healthz`)).status, 200);
    assert.equal(await vgate.stop(), 0, "vgate stops cleanly after the attack");
  });
});
