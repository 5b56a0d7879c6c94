// The authorization webhook in front of RBAC: SubjectAccessReviews out, Allow/Deny/no-opinion in,
// chained like kube's union authorizer, cached like kube's webhook authorizer.

import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { asKubeError } from "../../../webhook/src/api/status.js";
import { authorizeRequest, union, type AuthorizationAttributes } from "./authorizer.js";
import { webhookAuthorizerFromFile, webhookRuleResolver } from "./authz-webhook.js";
import { clientCa, clientCert } from "./client-certs.js";
import { handleSelfSubjectAccessReview } from "./subject-access-review.js";
import { selfSubjectRulesReview } from "./reviews.js";
import { startApiServer } from "./index.js";
import { call } from "./test-client.js";
import { servingCert } from "./tls.js";

type Body = Record<string, unknown>;

const attrs = (over: Partial<AuthorizationAttributes> = {}): AuthorizationAttributes => ({
  user: "alice",
  uid: "a-1",
  groups: ["devs", "system:authenticated"],
  verb: "delete",
  group: "management.loft.sh",
  version: "v1",
  resource: "ownedaccesskeys",
  subresource: "",
  name: "k1",
  namespace: "",
  ...over,
});

describe("apiserver authorization webhook", () => {
  let dir: string;
  let configPath: string;
  const seen: { body: Body; clientCn: string }[] = [];
  let answer: (spec: Body) => { status: number; body: unknown } = () => ({ status: 200, body: {} });
  let close: () => Promise<void>;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "authz-webhook-"));
    const [tls, ca] = await Promise.all([servingCert(), clientCa()]);
    const client = await clientCert(ca, "kube-apiserver");
    // The webhook requires the API server's client certificate, as a real one would.
    const server = https.createServer(
      { cert: tls.cert, key: tls.key, ca: ca.cert, requestCert: true, rejectUnauthorized: true },
      (req, res) => {
        const chunks: Buffer[] = [];
        req.on("data", (c: Buffer) => chunks.push(c));
        req.on("end", () => {
          const body = JSON.parse(Buffer.concat(chunks).toString()) as Body;
          const socket = req.socket as import("node:tls").TLSSocket;
          seen.push({ body, clientCn: String(socket.getPeerCertificate().subject.CN) });
          const reply = answer(body["spec"] as Body);
          res.writeHead(reply.status, { "Content-Type": "application/json" });
          res.end(JSON.stringify(reply.body));
        });
      },
    );
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    close = () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    const b64 = (s: string) => Buffer.from(s).toString("base64");
    configPath = join(dir, "authz.yaml");
    await writeFile(
      configPath,
      [
        "apiVersion: v1",
        "kind: Config",
        "clusters:",
        "- name: authz",
        "  cluster:",
        `    certificate-authority-data: ${b64(tls.cert)}`,
        `    server: https://127.0.0.1:${(server.address() as AddressInfo).port}/authorize`,
        "users:",
        "- name: apiserver",
        "  user:",
        `    client-certificate-data: ${b64(client.cert)}`,
        `    client-key-data: ${b64(client.key)}`,
        "",
      ].join("\n"),
    );
  });
  after(async () => {
    await close();
    await rm(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    seen.length = 0;
  });

  const verdict = (status: Body) => () => ({ status: 200, body: { status } });

  it("decides the server's requests ahead of RBAC (startApiServer option)", async () => {
    const server = await startApiServer({
      authorization: "rbac",
      authorizationWebhookConfigFile: configPath,
    });
    try {
      server.addToken("gina-token", { user: "gina", groups: [] });
      // Each check asks about another resource: the webhook's answers are cached, as in kube.
      const list = (resource: string) => `/api/v1/namespaces/default/${resource}`;
      answer = verdict({ allowed: false, denied: true, reason: "gina is on leave" });
      const denied = await call(server, "GET", list("configmaps"), { token: "gina-token" });
      assert.equal(denied.status, 403);
      assert.match(String(denied.body["message"]), /: gina is on leave$/);
      answer = verdict({ allowed: true, reason: "ok" });
      assert.equal(
        (await call(server, "GET", list("secrets"), { token: "gina-token" })).status,
        200,
      );
      // No opinion: RBAC decides, and gina has no binding.
      answer = verdict({ allowed: false });
      assert.equal(
        (await call(server, "GET", list("services"), { token: "gina-token" })).status,
        403,
      );
      assert.ok(seen.some((r) => (r.body["spec"] as Body)["user"] === "gina"));
    } finally {
      await server.close();
    }
  });

  it("POSTs a v1 SubjectAccessReview with the user and the resource attributes", async () => {
    answer = verdict({ allowed: true, reason: "the webhook likes alice" });
    const authorize = webhookAuthorizerFromFile(configPath);
    const decision = await authorize(attrs({ extra: { scopes: ["x"] } }));
    assert.deepEqual(decision, { allowed: true, reason: "the webhook likes alice" });
    assert.equal(seen[0]!.clientCn, "kube-apiserver");
    assert.deepEqual(seen[0]!.body, {
      apiVersion: "authorization.k8s.io/v1",
      kind: "SubjectAccessReview",
      metadata: { creationTimestamp: null },
      spec: {
        user: "alice",
        uid: "a-1",
        groups: ["devs", "system:authenticated"],
        extra: { scopes: ["x"] },
        resourceAttributes: {
          verb: "delete",
          group: "management.loft.sh",
          version: "v1",
          resource: "ownedaccesskeys",
          name: "k1",
        },
      },
      status: { allowed: false },
    });
    await authorize(attrs({ resource: "", path: "/metrics", verb: "get" }));
    assert.deepEqual((seen[1]!.body["spec"] as Body)["nonResourceAttributes"], {
      path: "/metrics",
      verb: "get",
    });
  });

  it("denies before RBAC is asked, with the webhook's reason in the 403", async () => {
    answer = verdict({ allowed: false, denied: true, reason: "keys are frozen" });
    let rbacAsked = false;
    const chain = union(webhookAuthorizerFromFile(configPath), () => {
      rbacAsked = true;
      return true;
    });
    const alice = { user: "alice", groups: ["system:authenticated"] };
    await assert.rejects(authorizeRequest(chain, alice, attrs()), (err: unknown) => {
      assert.equal(
        asKubeError(err).message,
        'ownedaccesskeys.management.loft.sh "k1" is forbidden: User "alice" cannot delete resource "ownedaccesskeys" in API group "management.loft.sh" at the cluster scope: keys are frozen',
      );
      return true;
    });
    assert.equal(rbacAsked, false);
  });

  it("leaves the decision to RBAC when it has no opinion or fails", async () => {
    answer = verdict({ allowed: false, reason: "not my business" });
    const rbac = () => ({ allowed: true, reason: "RBAC: allowed by test" });
    const chain = union(webhookAuthorizerFromFile(configPath), rbac);
    assert.deepEqual(await chain(attrs()), { allowed: true, reason: "RBAC: allowed by test" });
    answer = () => ({ status: 500, body: { message: "boom" } });
    const failing = union(webhookAuthorizerFromFile(configPath), () => false);
    const decision = await failing(attrs());
    assert.equal(decision.allowed, false);
    assert.match(decision.evaluationError ?? "", /500/);
    assert.equal((await union(webhookAuthorizerFromFile(configPath), rbac)(attrs())).allowed, true);
  });

  it("treats allowed and denied together as a denial with an error", async () => {
    answer = verdict({ allowed: true, denied: true });
    const decision = await webhookAuthorizerFromFile(configPath)(attrs());
    assert.equal(decision.allowed, false);
    assert.equal(decision.denied, true);
    assert.equal(
      decision.evaluationError,
      "webhook subject access review returned both allow and deny response",
    );
  });

  it("caches allowed and other answers for their own TTLs", async () => {
    answer = (spec) =>
      verdict({ allowed: (spec["resourceAttributes"] as Body)["verb"] === "get" })();
    const authorize = webhookAuthorizerFromFile(configPath, {
      authorizedTtlMs: 10_000,
      unauthorizedTtlMs: 50,
    });
    await authorize(attrs({ verb: "get" }));
    await authorize(attrs({ verb: "get" }));
    await authorize(attrs({ verb: "delete" }));
    await authorize(attrs({ verb: "delete" }));
    assert.equal(seen.length, 2);
    await new Promise((r) => setTimeout(r, 90));
    await authorize(attrs({ verb: "get" }));
    await authorize(attrs({ verb: "delete" }));
    assert.equal(seen.length, 3, "only the denial expired");
  });

  it("answers a SelfSubjectAccessReview through the chain, denied included", async () => {
    answer = verdict({ allowed: false, denied: true, reason: "nope" });
    const chain = union(webhookAuthorizerFromFile(configPath), () => true);
    const reply = await handleSelfSubjectAccessReview(
      chain,
      { user: "alice", groups: [] },
      { spec: { resourceAttributes: { verb: "get", resource: "pods", namespace: "x" } } },
    );
    assert.deepEqual((reply.body as Body)["status"], {
      allowed: false,
      denied: true,
      reason: "nope",
    });
  });

  it("makes a SelfSubjectRulesReview incomplete, as the webhook cannot list rules", () => {
    const reply = selfSubjectRulesReview(
      [webhookRuleResolver, () => ({ resourceRules: [], nonResourceRules: [], incomplete: false })],
      { user: "alice", groups: [] },
      { spec: { namespace: "default" } },
    );
    assert.deepEqual((reply.body as Body)["status"], {
      resourceRules: [],
      nonResourceRules: [],
      incomplete: true,
      evaluationError: "webhook authorizer does not support user rule resolution",
    });
  });
});
