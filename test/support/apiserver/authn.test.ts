// The authentication chain: static tokens, x509 client certificates and the token webhook, with
// kube's 401 for everything that does not authenticate.

import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import https from "node:https";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { asKubeError } from "../../../webhook/src/api/status.js";
import { bearerTokenOf, createAuthenticator, type AuthenticatorOptions } from "./authn.js";
import type { UserIdentity } from "./authorizer.js";
import { clientCa, clientCert, type CertAndKey } from "./client-certs.js";
import { startApiServer } from "./index.js";
import { call, UNAUTHORIZED_STATUS as UNAUTHORIZED } from "./test-client.js";
import { servingCert } from "./tls.js";

interface Probe {
  url: string;
  caPem: string;
  close(): Promise<void>;
}

/** An HTTPS server that asks for (but does not require) a client cert, as kube-apiserver does. */
async function probeServer(opts: AuthenticatorOptions, clientCaPem?: string): Promise<Probe> {
  const tls = await servingCert();
  const authenticate = createAuthenticator(opts);
  const server = https.createServer(
    {
      cert: tls.cert,
      key: tls.key,
      requestCert: true,
      rejectUnauthorized: false,
      ...(clientCaPem ? { ca: clientCaPem } : {}),
    },
    (req: IncomingMessage, res: ServerResponse) => {
      authenticate(req).then(
        (id) => send(res, 200, id),
        (err: unknown) => send(res, asKubeError(err).code, asKubeError(err).toStatus()),
      );
    },
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `https://127.0.0.1:${port}/api`,
    caPem: tls.cert,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "Content-Type": "application/json" });
  res.end(JSON.stringify(body));
}

function get(
  probe: Probe,
  opts: { token?: string; header?: string; client?: CertAndKey } = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const headers: Record<string, string> = {};
  if (opts.token) headers["Authorization"] = `Bearer ${opts.token}`;
  if (opts.header) headers["Authorization"] = opts.header;
  const cert = opts.client ? { cert: opts.client.cert, key: opts.client.key } : {};
  return new Promise((resolve, reject) => {
    const req = https.request(
      probe.url,
      { ca: probe.caPem, headers, agent: false, ...cert },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            body: JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown>,
          }),
        );
      },
    );
    req.on("error", reject);
    req.end();
  });
}

describe("apiserver authentication", () => {
  describe("bearer token parsing", () => {
    it("takes `Bearer <token>` with any case of the scheme, and nothing else", () => {
      assert.equal(bearerTokenOf("Bearer abc"), "abc");
      assert.equal(bearerTokenOf("bearer abc"), "abc");
      assert.equal(bearerTokenOf("  Bearer abc  "), "abc");
      assert.equal(bearerTokenOf("Bearer abc def"), "abc");
      assert.equal(bearerTokenOf("Basic abc"), null);
      assert.equal(bearerTokenOf("Bearer"), null);
      assert.equal(bearerTokenOf("Bearer  abc"), null, "kube splits on single spaces");
      assert.equal(bearerTokenOf(undefined), null);
    });
  });

  describe("static tokens", () => {
    const tokens = new Map<string, UserIdentity>([
      ["alice-token", { user: "alice", uid: "u-1", groups: ["devs"] }],
    ]);
    let probe: Probe;
    before(async () => {
      probe = await probeServer({ tokens });
    });
    after(() => probe.close());

    it("names the token's user and adds system:authenticated", async () => {
      const res = await get(probe, { token: "alice-token" });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, {
        user: "alice",
        uid: "u-1",
        groups: ["devs", "system:authenticated"],
      });
    });

    it("authenticates tokens added to the live map later", async () => {
      tokens.set("late", { user: "late", groups: [] });
      const res = await get(probe, { token: "late" });
      assert.deepEqual(res.body["groups"], ["system:authenticated"]);
    });

    it("answers an unknown token with kube's exact 401 Status", async () => {
      const res = await get(probe, { token: "nope" });
      assert.equal(res.status, 401);
      assert.deepEqual(res.body, UNAUTHORIZED);
    });

    it("answers a request without credentials 401 (anonymous auth is off)", async () => {
      assert.deepEqual((await get(probe)).body, UNAUTHORIZED);
      assert.equal((await get(probe, { header: "Basic YTpi" })).status, 401);
    });
  });

  describe("x509 client certificates", () => {
    let ca: CertAndKey;
    let otherCa: CertAndKey;
    let probe: Probe;
    before(async () => {
      [ca, otherCa] = await Promise.all([clientCa(), clientCa("another-ca")]);
      probe = await probeServer(
        { clientCaPem: ca.cert, tokens: new Map([["t", { user: "token-user", groups: [] }]]) },
        ca.cert,
      );
    });
    after(() => probe.close());

    it("takes the user from CN and the groups from every O", async () => {
      const cert = await clientCert(ca, "carol", ["system:masters", "team-a"]);
      const res = await get(probe, { client: cert });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, {
        user: "carol",
        groups: ["system:masters", "team-a", "system:authenticated"],
      });
    });

    it("wins over a bearer token sent with it (x509 comes first in kube's chain)", async () => {
      const cert = await clientCert(ca, "carol");
      const res = await get(probe, { client: cert, token: "t" });
      assert.equal(res.body["user"], "carol");
    });

    it("rejects a certificate signed by another CA; a valid token still authenticates", async () => {
      const cert = await clientCert(otherCa, "mallory", ["system:masters"]);
      const res = await get(probe, { client: cert });
      assert.equal(res.status, 401);
      assert.deepEqual(res.body, UNAUTHORIZED);
      const withToken = await get(probe, { client: cert, token: "t" });
      assert.equal(withToken.body["user"], "token-user");
    });

    it("rejects an expired certificate and one not meant for client auth", async () => {
      const expired = await clientCert(ca, "old", [], {
        notBefore: new Date(Date.now() - 3 * 86400_000),
        notAfter: new Date(Date.now() - 86400_000),
      });
      assert.equal((await get(probe, { client: expired })).status, 401);
      const serverOnly = await clientCert(ca, "srv", [], { serverAuthOnly: true });
      assert.equal((await get(probe, { client: serverOnly })).status, 401);
    });

    it("verifies against its own CA bundle even when the TLS layer trusts others", async () => {
      // The server's TLS `ca` is the other CA: the handshake accepts mallory, the chain does not.
      const loose = await probeServer({ clientCaPem: ca.cert }, otherCa.cert);
      try {
        const cert = await clientCert(otherCa, "mallory", ["system:masters"]);
        assert.equal((await get(loose, { client: cert })).status, 401);
      } finally {
        await loose.close();
      }
    });
  });

  describe("token webhook", () => {
    let dir: string;
    let hook: { url: string; caPem: string; close(): Promise<void> };
    const calls: { auth: string | undefined; body: Record<string, unknown> }[] = [];
    let failWith = 0;

    before(async () => {
      dir = await mkdtemp(join(tmpdir(), "authn-webhook-"));
      const tls = await servingCert();
      const server = https.createServer({ cert: tls.cert, key: tls.key }, (req, res) => {
        const chunks: Buffer[] = [];
        req.on("data", (c: Buffer) => chunks.push(c));
        req.on("end", () => {
          const body = JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown>;
          calls.push({ auth: req.headers.authorization, body });
          if (failWith) return send(res, failWith, { message: "boom" });
          const spec = body["spec"] as { token: string };
          const status =
            spec.token === "good"
              ? {
                  authenticated: true,
                  user: {
                    username: "dave@example.com",
                    uid: "42",
                    groups: ["developers"],
                    extra: { scopes: ["a", "b"] },
                  },
                }
              : { authenticated: false, error: "token expired" };
          send(res, 200, { ...body, status });
        });
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      hook = {
        url: `https://127.0.0.1:${(server.address() as AddressInfo).port}/authenticate`,
        caPem: tls.cert,
        close: () =>
          new Promise((resolve) => {
            server.closeAllConnections();
            server.close(() => resolve());
          }),
      };
    });
    after(async () => {
      await hook.close();
      await rm(dir, { recursive: true, force: true });
    });
    beforeEach(() => {
      calls.length = 0;
      failWith = 0;
    });

    /** A config file as kube-apiserver takes it; the CA as a file path relative to the file. */
    async function configFile(name: string): Promise<string> {
      await writeFile(join(dir, "webhook-ca.crt"), hook.caPem);
      const path = join(dir, `${name}.yaml`);
      await writeFile(
        path,
        [
          "apiVersion: v1",
          "kind: Config",
          "clusters:",
          "- name: authn",
          "  cluster:",
          "    certificate-authority: webhook-ca.crt",
          `    server: ${hook.url}`,
          "users:",
          "- name: kube-apiserver",
          "  user:",
          "    token: apiserver-secret",
          "current-context: webhook",
          "contexts:",
          "- context:",
          "    cluster: authn",
          "    user: kube-apiserver",
          "  name: webhook",
          "",
        ].join("\n"),
      );
      return path;
    }

    it("authenticates the server's requests through the webhook (startApiServer option)", async () => {
      const server = await startApiServer({
        tokenWebhookConfigFile: await configFile("server"),
        authorization: "rbac",
      });
      try {
        const review = { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" };
        const path = "/apis/authentication.k8s.io/v1/selfsubjectreviews";
        const good = await call(server, "POST", path, { body: review, token: "good" });
        assert.equal(good.status, 201, JSON.stringify(good.body));
        const info = (good.body["status"] as { userInfo: { username: string; groups: string[] } })
          .userInfo;
        assert.equal(info.username, "dave@example.com");
        assert.deepEqual(info.groups, ["developers", "system:authenticated"]);
        assert.equal(calls.at(-1)?.auth, "Bearer apiserver-secret");
        const bad = await call(server, "POST", path, { body: review, token: "expired" });
        assert.equal(bad.status, 401);
        // The static admin token still works, and never reaches the webhook.
        const before = calls.length;
        assert.equal((await call(server, "GET", "/version")).status, 200);
        assert.equal(calls.length, before);
      } finally {
        await server.close();
      }
    });

    it("POSTs a TokenReview and takes username, uid, groups and extra from its status", async () => {
      const authn = createAuthenticator({ webhookConfigFile: await configFile("a") });
      const result = await authn.token("good");
      assert.deepEqual(result.user, {
        user: "dave@example.com",
        uid: "42",
        groups: ["developers", "system:authenticated"],
        extra: { scopes: ["a", "b"] },
      });
      assert.equal(calls.length, 1);
      assert.equal(calls[0]!.auth, "Bearer apiserver-secret");
      assert.deepEqual(calls[0]!.body, {
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenReview",
        metadata: { creationTimestamp: null },
        spec: { token: "good" },
        status: { user: {} },
      });
    });

    it("sends the API audiences and turns a rejection into a 401", async () => {
      const authn = createAuthenticator({
        webhookConfigFile: await configFile("b"),
        webhook: { audiences: ["https://kubernetes.default.svc"] },
      });
      const result = await authn.token("bad");
      assert.deepEqual(result, { authenticated: false, error: "token expired" });
      const spec = calls[0]!.body["spec"] as Record<string, unknown>;
      assert.deepEqual(spec["audiences"], ["https://kubernetes.default.svc"]);
      const req = { headers: { authorization: "Bearer bad" }, socket: {} } as IncomingMessage;
      await assert.rejects(authn(req), (err: unknown) => {
        assert.deepEqual(asKubeError(err).toStatus(), UNAUTHORIZED);
        return true;
      });
    });

    it("caches answers for the TTL, yes and no alike", async () => {
      const authn = createAuthenticator({
        webhookConfigFile: await configFile("c"),
        webhook: { cacheTtlMs: 60 },
      });
      await authn.token("good");
      await authn.token("good");
      await authn.token("bad");
      await authn.token("bad");
      assert.equal(calls.length, 2);
      await new Promise((r) => setTimeout(r, 100));
      await authn.token("good");
      assert.equal(calls.length, 3, "asked again once the TTL passed");
    });

    it("does not cache a failing webhook, and falls back to the static tokens first", async () => {
      const authn = createAuthenticator({
        tokens: new Map([["static", { user: "s", groups: [] }]]),
        webhookConfigFile: await configFile("d"),
      });
      failWith = 500;
      const failed = await authn.token("good");
      assert.equal(failed.authenticated, false);
      assert.match(failed.error ?? "", /500/);
      failWith = 0;
      assert.equal((await authn.token("good")).authenticated, true);
      assert.equal((await authn.token("static")).user?.user, "s");
      assert.equal(calls.length, 2, "the static token never reached the webhook");
    });
  });
});
