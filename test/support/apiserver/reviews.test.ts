// The review APIs over HTTPS on the emulator, with RBAC deciding: what kubectl auth and
// client-node see from TokenReview, SelfSubjectReview and the access reviews.

import assert from "node:assert/strict";
import https from "node:https";
import { startApiServer, type TestApiServer } from "./index.js";
import { RBAC_V1 } from "./rbac.js";

type Body = Record<string, unknown>;

function post(
  server: TestApiServer,
  path: string,
  body: unknown,
  token = server.token,
): Promise<{ status: number; body: Body }> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      new URL(path, server.url),
      {
        method: "POST",
        ca: server.caPem,
        headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}` },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            body: JSON.parse(Buffer.concat(chunks).toString()) as Body,
          }),
        );
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify(body));
  });
}

const AUTHN = "/apis/authentication.k8s.io/v1";
const AUTHZ = "/apis/authorization.k8s.io/v1";

describe("apiserver review APIs", () => {
  let server: TestApiServer;
  before(async () => {
    server = await startApiServer({ authorization: "rbac" });
    server.put({
      apiVersion: RBAC_V1,
      kind: "Role",
      metadata: { name: "cm-reader", namespace: "team" },
      rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list"] }],
    });
    server.put({
      apiVersion: RBAC_V1,
      kind: "RoleBinding",
      metadata: { name: "bob-reads", namespace: "team" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "cm-reader" },
      subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "bob" }],
    });
    server.addToken("bob-token", { user: "bob", uid: "b-1", groups: ["system:authenticated"] });
  });
  after(() => server.close());

  describe("TokenReview", () => {
    it("reviews a token through the authenticator chain and echoes the request", async () => {
      const res = await post(server, `${AUTHN}/tokenreviews`, {
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenReview",
        spec: { token: "bob-token" },
      });
      assert.equal(res.status, 201);
      assert.deepEqual(res.body, {
        kind: "TokenReview",
        apiVersion: "authentication.k8s.io/v1",
        metadata: { creationTimestamp: null },
        spec: { token: "bob-token" },
        status: {
          authenticated: true,
          user: { username: "bob", uid: "b-1", groups: ["system:authenticated"] },
        },
      });
    });

    it("says no to an unknown token with an empty user, and 400 without one", async () => {
      const res = await post(server, `${AUTHN}/tokenreviews`, { spec: { token: "nope" } });
      assert.deepEqual(res.body["status"], { user: {} });
      const none = await post(server, `${AUTHN}/tokenreviews`, { spec: {} });
      assert.equal(none.status, 400);
      assert.equal(none.body["message"], "token is required for TokenReview in authentication");
    });

    it("needs create on tokenreviews", async () => {
      const res = await post(
        server,
        `${AUTHN}/tokenreviews`,
        { spec: { token: "x" } },
        "bob-token",
      );
      assert.equal(res.status, 403);
      assert.equal(
        res.body["message"],
        'tokenreviews.authentication.k8s.io is forbidden: User "bob" cannot create resource "tokenreviews" in API group "authentication.k8s.io" at the cluster scope',
      );
    });
  });

  it("answers a SelfSubjectReview with the caller's user info", async () => {
    const res = await post(server, `${AUTHN}/selfsubjectreviews`, {}, "bob-token");
    assert.equal(res.status, 201);
    assert.equal(res.body["kind"], "SelfSubjectReview");
    assert.match(String((res.body["metadata"] as Body)["creationTimestamp"]), /^\d{4}-.*Z$/);
    assert.deepEqual(res.body["status"], {
      userInfo: { username: "bob", uid: "b-1", groups: ["system:authenticated"] },
    });
  });

  describe("SelfSubjectAccessReview", () => {
    const ssar = (resource: string, namespace = "team") => ({
      apiVersion: "authorization.k8s.io/v1",
      kind: "SelfSubjectAccessReview",
      spec: { resourceAttributes: { namespace, verb: "get", resource } },
    });

    it("answers for the caller, with RBAC's reason", async () => {
      const res = await post(
        server,
        `${AUTHZ}/selfsubjectaccessreviews`,
        ssar("configmaps"),
        "bob-token",
      );
      assert.equal(res.status, 201);
      assert.deepEqual(res.body["spec"], ssar("configmaps").spec);
      assert.deepEqual(res.body["status"], {
        allowed: true,
        reason: 'RBAC: allowed by RoleBinding "bob-reads/team" of Role "cm-reader" to User "bob"',
      });
      const no = await post(
        server,
        `${AUTHZ}/selfsubjectaccessreviews`,
        ssar("secrets"),
        "bob-token",
      );
      assert.deepEqual(no.body["status"], { allowed: false });
      const elsewhere = await post(
        server,
        `${AUTHZ}/selfsubjectaccessreviews`,
        ssar("configmaps", "x"),
        "bob-token",
      );
      assert.deepEqual(elsewhere.body["status"], { allowed: false });
    });

    it("rejects both kinds of attributes at once as 422", async () => {
      const res = await post(
        server,
        `${AUTHZ}/selfsubjectaccessreviews`,
        {
          spec: {
            resourceAttributes: { verb: "get" },
            nonResourceAttributes: { path: "/x", verb: "get" },
          },
        },
        "bob-token",
      );
      assert.equal(res.status, 422);
      // The bad value's rendering is Go's %#v in kube; the field and the detail are what matter.
      assert.match(
        String(res.body["message"]),
        /^SelfSubjectAccessReview\.authorization\.k8s\.io "" is invalid: spec\.nonResourceAttributes: Invalid value: .+: cannot be specified in combination with resourceAttributes$/,
      );
    });
  });

  describe("LocalSubjectAccessReview", () => {
    it("answers inside the URL's namespace", async () => {
      const res = await post(server, `${AUTHZ}/namespaces/team/localsubjectaccessreviews`, {
        spec: {
          user: "bob",
          resourceAttributes: { namespace: "team", verb: "list", resource: "configmaps" },
        },
      });
      assert.equal(res.status, 201);
      assert.deepEqual(res.body["metadata"], { namespace: "team", creationTimestamp: null });
      assert.equal((res.body["status"] as Body)["allowed"], true);
    });

    it("rejects a spec namespace other than the URL's", async () => {
      const res = await post(server, `${AUTHZ}/namespaces/team/localsubjectaccessreviews`, {
        spec: {
          user: "bob",
          resourceAttributes: { namespace: "other", verb: "get", resource: "pods" },
        },
      });
      assert.equal(res.status, 422);
      assert.equal(
        res.body["message"],
        'LocalSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes.namespace: Invalid value: "other": must match metadata.namespace',
      );
    });
  });

  describe("SelfSubjectRulesReview", () => {
    it("lists the caller's rules in a namespace", async () => {
      const res = await post(
        server,
        `${AUTHZ}/selfsubjectrulesreviews`,
        { spec: { namespace: "team" } },
        "bob-token",
      );
      assert.equal(res.status, 201);
      assert.deepEqual(res.body["spec"], {});
      const status = res.body["status"] as { resourceRules: Body[]; incomplete: boolean };
      assert.equal(status.incomplete, false);
      assert.deepEqual(status.resourceRules.at(-1), {
        verbs: ["get", "list"],
        apiGroups: [""],
        resources: ["configmaps"],
      });
    });

    it("needs spec.namespace", async () => {
      const res = await post(server, `${AUTHZ}/selfsubjectrulesreviews`, { spec: {} }, "bob-token");
      assert.equal(res.status, 400);
      assert.equal(res.body["message"], "no namespace on request");
    });
  });
});
