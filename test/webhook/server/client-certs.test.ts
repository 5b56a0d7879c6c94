// Who may call which route, over real TLS: /authenticate and /authorize answer only a client that
// presents a certificate signed by --client-ca-file (and named in --client-allowed-names), as
// kube-apiserver does through its webhook kubeconfigs; everyone else gets 401 with the reason,
// counted by route and reason. Admission routes stay open unless --require-admission-client-cert.
// And metric labels come from the routes as registered: paths that differ in case or by a trailing
// slash are not routes (404) and make no series.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { startServe, type StartedServe } from "../../../webhook/src/cli/serve-runtime.js";
import { createApp, listen, type RunningServer } from "../../../webhook/src/server/app.js";
import { loadClientCa, type ClientCertPolicy } from "../../../webhook/src/server/client-auth.js";
import { createLogger } from "../../../webhook/src/server/logger.js";
import { createMetrics } from "../../../webhook/src/server/metrics.js";
import { selfSignedTls } from "../../../webhook/src/server/tls.js";
import { httpsRequest, type HttpResponse } from "../../support/https-client.js";
import { clientCert, testCa, type CertAndKey } from "../../support/kube/pki.js";
import { until } from "../../support/until.js";

const silent = () => createLogger("silent", new Writable({ write: (_c, _e, cb) => cb() }));

const TOKEN_REVIEW = JSON.stringify({
  apiVersion: "authentication.k8s.io/v1",
  kind: "TokenReview",
  spec: { token: "x".repeat(43) },
});

interface Status {
  kind: string;
  code: number;
  reason: string;
  message: string;
}

describe("vgate serve: client certificates and route labels", function () {
  this.timeout(30_000);
  let ca: CertAndKey;
  let apiserver: CertAndKey;
  let server: RunningServer | undefined;
  let reviewsAnswered = 0;

  before(async () => {
    ca = await testCa("client-certs-test-ca");
    apiserver = await clientCert(ca, "kube-apiserver");
  });

  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  async function serve(
    policy: ClientCertPolicy,
    admission = false,
  ): Promise<{ server: RunningServer; metrics: () => Promise<string> }> {
    const metrics = createMetrics(false);
    const app = createApp({
      logger: silent(),
      metrics,
      routes: {
        "/validate/ownedaccesskeys": (req) =>
          Promise.resolve({ response: { uid: req.uid, allowed: true } } as never),
      },
      reviews: {
        "/authenticate": () => {
          reviewsAnswered++;
          return {
            body: { kind: "TokenReview", status: { authenticated: false } },
            log: { decision: "unauthenticated" },
          };
        },
      },
      clientCerts: { policy, admission },
    });
    const tls = { ...(await selfSignedTls()), ...(policy.configured ? { clientCa: ca.cert } : {}) };
    server = await listen(app, tls, 0, "127.0.0.1");
    return { server, metrics: () => metrics.registry.metrics() };
  }

  const post = (
    s: RunningServer,
    path: string,
    client?: CertAndKey,
    body = TOKEN_REVIEW,
  ): Promise<HttpResponse> =>
    httpsRequest(`${s.url}${path}`, {
      headers: { "Content-Type": "application/json" },
      body,
      ...(client ? { client } : {}),
    });

  function assertRefused(res: HttpResponse, message: RegExp): void {
    assert.equal(res.status, 401, res.text);
    const status = res.json<Status>();
    assert.equal(status.kind, "Status");
    assert.equal(status.code, 401);
    assert.equal(status.reason, "Unauthorized");
    assert.match(status.message, message);
  }

  it("answers kube-apiserver's certificate and refuses every other caller with the reason", async () => {
    const { server: s, metrics } = await serve({
      configured: true,
      allowedNames: ["kube-apiserver"],
    });
    const otherCa = await testCa("an-attackers-ca");
    const before = reviewsAnswered;

    assert.equal((await post(s, "/authenticate", apiserver)).status, 200);
    assert.equal(reviewsAnswered, before + 1);

    assertRefused(await post(s, "/authenticate"), /a client certificate is required/);
    assertRefused(
      await post(s, "/authenticate", await clientCert(otherCa, "kube-apiserver")),
      /not signed by a CA of --client-ca-file/,
    );
    assertRefused(
      await post(s, "/authenticate", await clientCert(ca, "system:node:worker-1")),
      /common name is not one of --client-allowed-names/,
    );
    // A certificate for the right name, but expired, is not trusted either.
    const expired = await clientCert(ca, "kube-apiserver", [], {
      notBefore: new Date(Date.now() - 48 * 3600_000),
      notAfter: new Date(Date.now() - 24 * 3600_000),
    });
    assertRefused(await post(s, "/authenticate", expired), /not signed by a CA/);
    // None of the refused requests reached the review.
    assert.equal(reviewsAnswered, before + 1);

    const text = await metrics();
    for (const reason of ["no-certificate", "untrusted", "name"]) {
      assert.match(
        text,
        new RegExp(
          `vgate_client_certificate_refusals_total\\{route="authenticate",reason="${reason}"\\} [1-9]`,
        ),
      );
    }
  });

  it("closes the review routes when no client CA is configured", async () => {
    const { server: s, metrics } = await serve({ configured: false, allowedNames: [] });
    const before = reviewsAnswered;
    assertRefused(await post(s, "/authenticate", apiserver), /without --client-ca-file/);
    assert.equal(reviewsAnswered, before);
    assert.match(
      await metrics(),
      /vgate_client_certificate_refusals_total\{route="authenticate",reason="not-configured"\} 1/,
    );
  });

  it("leaves admission routes open unless they are required to present the certificate too", async () => {
    const review = JSON.stringify({
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      request: {
        uid: "0b3a2f5e-8a0d-4c47-9d5d-2f0e8b5a9c11",
        kind: { group: "management.loft.sh", version: "v1", kind: "OwnedAccessKey" },
        resource: { group: "management.loft.sh", version: "v1", resource: "ownedaccesskeys" },
        operation: "CREATE",
        userInfo: { username: "alice" },
        object: {},
      },
    });
    const open = await serve({ configured: true, allowedNames: [] });
    assert.equal(
      (await post(open.server, "/validate/ownedaccesskeys", undefined, review)).status,
      200,
    );
    await server!.close();
    const closed = await serve({ configured: true, allowedNames: [] }, true);
    assertRefused(
      await post(closed.server, "/validate/ownedaccesskeys", undefined, review),
      /a client certificate is required/,
    );
    assert.equal(
      (await post(closed.server, "/validate/ownedaccesskeys", apiserver, review)).status,
      200,
    );
  });

  it("routes only the exact paths, and labels metrics with the registered routes only", async () => {
    const { server: s, metrics } = await serve({ configured: true, allowedNames: [] });
    const variants = [
      "/Authenticate",
      "/AUTHENTICATE",
      "/authenticate/",
      "/authenticate//",
      "/Validate/ownedaccesskeys",
      "/validate/ownedaccesskeys/",
      "/validate/OwnedAccessKeys",
      "/%61uthenticate",
      `/validate/${"x".repeat(300)}`,
    ];
    for (const path of variants) {
      const res = await post(s, path, apiserver);
      assert.equal(res.status, 404, `${path}: ${res.text}`);
    }
    // Refusals of every kind on the real routes too: wrong content type, no certificate.
    await httpsRequest(`${s.url}/authenticate`, {
      client: apiserver,
      headers: { "Content-Type": "text/plain" },
      body: "x",
    });
    await post(s, "/authenticate");
    await post(s, "/validate/ownedaccesskeys", undefined, "{");
    const routes = new Set([...(await metrics()).matchAll(/route="([^"]*)"/g)].map((m) => m[1]));
    assert.ok(routes.size > 0);
    for (const route of routes) {
      assert.ok(
        ["authenticate", "validate/ownedaccesskeys"].includes(route!),
        `a series for route ${JSON.stringify(route)}`,
      );
    }
  });
});

describe("vgate serve --client-ca-file", function () {
  this.timeout(30_000);
  let dir: string;
  let vgate: StartedServe | undefined;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "vgate-client-ca-"));
  });
  afterEach(async () => {
    await vgate?.stop();
    vgate = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  async function start(caFile: string): Promise<StartedServe> {
    return (vgate = await startServe(
      {
        port: 0,
        bindAddress: "127.0.0.1",
        groupDomain: "loft.sh",
        adminGroups: ["system:masters"],
        logLevel: "silent",
        dev: true,
        tlsReloadIntervalMs: 100,
        clientCerts: { caFile, allowedNames: [], admission: false },
      },
      silent(),
    ));
  }

  /**
   * Past the certificate check (no API server here, so the review itself is 503: the keys are not
   * loaded), or refused at it (401).
   */
  const review = async (v: StartedServe, client: CertAndKey) => {
    const res = await httpsRequest(`https://127.0.0.1:${v.server.port}/authenticate`, {
      client,
      headers: { "Content-Type": "application/json" },
      body: TOKEN_REVIEW,
    });
    if (res.status === 503) assert.match(res.text, /access keys are not loaded yet/);
    return { status: res.status === 503 ? "passed" : res.status };
  };

  it("trusts a rotated CA once the file changes, and keeps the old one until then", async () => {
    const first = await testCa("first-client-ca");
    const second = await testCa("second-client-ca");
    const caFile = join(dir, "ca.crt");
    writeFileSync(caFile, first.cert);
    const v = await start(caFile);
    const a = await clientCert(first, "kube-apiserver");
    const b = await clientCert(second, "kube-apiserver");
    assert.equal((await review(v, a)).status, "passed");
    assert.equal((await review(v, b)).status, 401);
    // A bundle with both, as `vgate certs` writes during a rotation; then the new one alone.
    writeFileSync(caFile, `${first.cert}\n${second.cert}`);
    await until(async () => (await review(v, b)).status === "passed", "the second CA is trusted");
    assert.equal((await review(v, a)).status, "passed");
    writeFileSync(caFile, second.cert);
    await until(async () => (await review(v, a)).status === 401, "the first CA is dropped");
    assert.equal((await review(v, b)).status, "passed");
  });

  it("refuses to start on a file that holds no CA, naming the file and never its content", async () => {
    const leaf = await clientCert(await testCa(), "kube-apiserver");
    const cases: [string, string, RegExp][] = [
      [
        "missing.crt",
        "",
        /cannot read --client-ca-file .*missing\.crt: no such file; check the path/,
      ],
      ["key.pem", leaf.key, /holds no PEM certificate/],
      ["leaf.crt", leaf.cert, /certificate 1 is not a CA/],
      [
        "garbage.crt",
        "-----BEGIN CERTIFICATE-----\nc2VjcmV0LXRva2VuLXZhbHVl\n-----END CERTIFICATE-----\n",
        /certificate 1 cannot be parsed/,
      ],
    ];
    for (const [name, content, message] of cases) {
      const file = join(dir, name);
      if (content) writeFileSync(file, content);
      await assert.rejects(loadClientCa(file), (err: Error) => {
        assert.match(err.message, message);
        assert.ok(err.message.includes(file), err.message);
        assert.ok(!err.message.includes("BEGIN"), err.message);
        assert.ok(!err.message.includes("c2VjcmV0"), err.message);
        return true;
      });
      await assert.rejects(start(file), (err: Error) => {
        assert.match(err.message, message);
        return true;
      });
    }
  });
});
