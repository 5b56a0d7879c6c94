// How much vgate takes on at once, and how long a decision may take: past --max-in-flight a review
// request gets 429 with Retry-After, as kube-apiserver's own limiter answers (probes are never
// refused); an admission decision that takes longer than --admission-timeout is denied with a 504
// Timeout inside its AdmissionReview (fail closed), never left hanging.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { Writable } from "node:stream";
import { serveCommand } from "../../../webhook/src/cli/serve.js";
import { parseServeArgs } from "../../../webhook/src/cli/serve-options.js";
import { createApp, listen, type RunningServer } from "../../../webhook/src/server/app.js";
import { DEFAULT_MAX_IN_FLIGHT } from "../../../webhook/src/server/limits.js";
import { createLogger } from "../../../webhook/src/server/logger.js";
import { createMetrics } from "../../../webhook/src/server/metrics.js";
import { selfSignedTls } from "../../../webhook/src/server/tls.js";
import { repoRoot } from "../../support/fixtures.js";
import { httpsRequest } from "../../support/https-client.js";
import { postHead, rawConnect, type RawExchange } from "./dev-serve.js";
import { clientCert, testCa, type CertAndKey } from "../../support/kube/pki.js";

const EXAMPLE = readFileSync(resolve(repoRoot, "webhook/examples/admission-review.json"));
const silent = () => createLogger("silent", new Writable({ write: (_c, _e, cb) => cb() }));

/** A request whose head and first bytes are sent, and whose body is finished by `finish()`. */
async function held(
  port: number,
  path: string,
  client?: CertAndKey,
): Promise<RawExchange & { finish(): void }> {
  const ex = rawConnect(port, postHead({ "Content-Length": EXAMPLE.length }, path), client);
  await new Promise((r) => ex.socket.once("secureConnect", r));
  ex.socket.write(EXAMPLE.subarray(0, 10));
  return { ...ex, finish: () => ex.socket.write(EXAMPLE.subarray(10)) };
}

describe("vgate serve: limits", function () {
  this.timeout(30_000);
  let server: RunningServer | undefined;
  /** kube-apiserver's client certificate, which the review routes require, and its CA. */
  let client: CertAndKey;
  let clientCa: string;

  before(async () => {
    const ca = await testCa("limits-client-ca");
    clientCa = ca.cert;
    client = await clientCert(ca, "kube-apiserver");
  });

  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  async function serveApp(more: Partial<Parameters<typeof createApp>[0]>): Promise<RunningServer> {
    const app = createApp({
      logger: silent(),
      metrics: createMetrics(false),
      routes: { "/validate/ownedaccesskeys": () => new Promise(() => undefined) },
      clientCerts: { policy: { configured: true, allowedNames: [] }, admission: false },
      ...more,
    });
    const tls = { ...(await selfSignedTls()), clientCa };
    return (server = await listen(app, tls, 0, "127.0.0.1"));
  }

  it("answers 429 with Retry-After past the in-flight limit, and serves probes regardless", async () => {
    const s = await serveApp({
      maxInFlight: 2,
      routes: { "/validate/ownedaccesskeys": () => Promise.reject(new Error("unused")) },
      reviews: {
        "/authenticate": () => ({
          body: { kind: "TokenReview", status: { authenticated: false } },
          log: { decision: "unauthenticated" },
        }),
      },
    });
    const a = await held(s.port, "/validate/ownedaccesskeys");
    const b = await held(s.port, "/authenticate", client);
    await new Promise((r) => setTimeout(r, 200));
    const over = await httpsRequest(`${s.url}/authenticate`, {
      client,
      headers: { "Content-Type": "application/json" },
      body: "{}",
    });
    assert.equal(over.status, 429);
    assert.equal(over.headers["retry-after"], "1");
    const status = over.json<{ kind: string; reason: string; code: number; details: unknown }>();
    assert.equal(status.kind, "Status");
    assert.equal(status.reason, "TooManyRequests");
    assert.equal(status.code, 429);
    assert.deepEqual(status.details, { retryAfterSeconds: 1 });
    assert.equal((await httpsRequest(`${s.url}/healthz`)).status, 200);
    assert.equal((await httpsRequest(`${s.url}/readyz`)).status, 200);

    // The held requests are answered; their slots are free again.
    a.finish();
    b.finish();
    assert.equal((await a.answer).status, 200);
    assert.equal((await b.answer).status, 200);
    const after = await httpsRequest(`${s.url}/authenticate`, {
      client,
      headers: { "Content-Type": "application/json" },
      body: "{}",
    });
    assert.equal(after.status, 200);
  });

  it("denies an admission request not decided within the deadline with a 504 Timeout", async () => {
    const s = await serveApp({ admissionTimeoutMs: 300 });
    const started = Date.now();
    const res = await httpsRequest(`${s.url}/validate/ownedaccesskeys`, {
      headers: { "Content-Type": "application/json" },
      body: EXAMPLE,
    });
    const ms = Date.now() - started;
    assert.equal(res.status, 200, "an AdmissionReview answer, with the decision inside");
    const review = res.json<{
      response: {
        uid: string;
        allowed: boolean;
        status: { code: number; reason: string; message: string };
      };
    }>();
    assert.equal(review.response.allowed, false);
    assert.equal(review.response.status.code, 504);
    assert.equal(review.response.status.reason, "Timeout");
    assert.match(review.response.status.message, /took longer than 0.3s/);
    assert.ok(ms >= 300 && ms < 3_000, `answered after ${ms} ms`);
  });

  it("readiness fails with a reason once draining", async () => {
    let draining = false;
    const s = await serveApp({ draining: () => draining });
    assert.equal((await httpsRequest(`${s.url}/readyz`)).status, 200);
    draining = true;
    const res = await httpsRequest(`${s.url}/readyz`);
    assert.equal(res.status, 503);
    assert.equal(res.text, "not ready: shutting down");
  });
});

describe("vgate serve: operations flags", () => {
  const parse = (...flags: string[]) => parseServeArgs(["--dev", ...flags]);

  it("has defaults sized for a pod, and no shutdown delay with --dev", () => {
    const dev = parse();
    assert.ok(dev !== "help");
    assert.deepEqual(dev.operations, {
      shutdownDelayMs: 0,
      shutdownTimeoutMs: 25_000,
      maxInFlight: DEFAULT_MAX_IN_FLIGHT,
      admissionTimeoutMs: 9_000,
    });
    const pod = parseServeArgs(["--tls-cert-file", "c", "--tls-private-key-file", "k"]);
    assert.ok(pod !== "help");
    assert.equal(pod.operations?.shutdownDelayMs, 5_000);
  });

  it("are described in serve --help", () => {
    for (const flag of [
      "--shutdown-delay",
      "--shutdown-timeout",
      "--max-in-flight",
      "--admission-timeout",
      "--tls-reload-interval",
    ]) {
      assert.match(serveCommand.help, new RegExp(`\\n\\s+${flag} (duration|int)\\s+\\S`), flag);
    }
  });

  it("takes durations and counts", () => {
    const o = parse(
      "--shutdown-delay",
      "1.5s",
      "--shutdown-timeout",
      "1m",
      "--max-in-flight",
      "50",
      "--admission-timeout",
      "500ms",
    );
    assert.ok(o !== "help");
    assert.deepEqual(o.operations, {
      shutdownDelayMs: 1_500,
      shutdownTimeoutMs: 60_000,
      maxInFlight: 50,
      admissionTimeoutMs: 500,
    });
  });

  for (const [flags, message] of [
    [["--shutdown-delay", "5"], /invalid --shutdown-delay "5": use a duration such as 500ms or 5s/],
    [
      ["--shutdown-delay", "30s", "--shutdown-timeout", "25s"],
      /--shutdown-delay must be shorter than --shutdown-timeout/,
    ],
    [["--shutdown-timeout", "0"], /invalid --shutdown-timeout "0": must be between 1ms and 600s/],
    [["--max-in-flight", "0"], /invalid --max-in-flight "0": an integer from 1 to 999999/],
    [["--max-in-flight", "ten"], /invalid --max-in-flight "ten"/],
    [
      ["--admission-timeout", "31s"],
      /invalid --admission-timeout "31s": must be between 1ms and 30s/,
    ],
  ] as const) {
    it(`refuses ${flags.join(" ")}`, () => {
      assert.throws(
        () => parse(...flags),
        (err: Error & { exitCode?: number }) => {
          assert.match(err.message, message);
          assert.equal(err.exitCode, 2);
          return true;
        },
      );
    });
  }
});
