// The request pipeline as wired in the server: client-certificate authentication, the RBAC
// authorizer with kube's bootstrap roles, and their order, seen by a real client (vgate's own
// kubeconfig loader and transport).

import assert from "node:assert/strict";
import { loadKubeConfig } from "../../../webhook/src/kube/kubeconfig.js";
import { KubeTransport } from "../../../webhook/src/kube/transport.js";
import { startApiServer, type TestApiServer } from "./index.js";
import { RBAC_V1 } from "./rbac.js";
import { call, UNAUTHORIZED_STATUS } from "./test-client.js";

async function transportFor(kubeconfig: string): Promise<KubeTransport> {
  const kc = await loadKubeConfig({ kubeconfig, env: {} });
  return new KubeTransport(kc!, { timeoutMs: 5000 });
}

describe("apiserver request pipeline", () => {
  let server: TestApiServer;
  const transports: KubeTransport[] = [];
  const as = async (kubeconfig: string) => {
    const t = await transportFor(kubeconfig);
    transports.push(t);
    return t;
  };
  before(async () => {
    server = await startApiServer({ authorization: "rbac", clientCertificates: true });
  });
  after(async () => {
    for (const t of transports) t.close();
    await server.close();
  });

  it("authenticates a client certificate as CN in the O groups, and RBAC decides", async () => {
    const dave = await as(await server.clientCertKubeconfig("dave", ["ops"]));
    const denied = await dave.request("GET", "/api/v1/namespaces");
    assert.equal(denied.status, 403);
    assert.match(
      (denied.body as { message: string }).message,
      /^namespaces is forbidden: User "dave" cannot list resource "namespaces" in API group "" at the cluster scope/,
    );
    server.put({
      apiVersion: RBAC_V1,
      kind: "ClusterRoleBinding",
      metadata: { name: "ops-view" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "ns-reader" },
      subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "ops" }],
    });
    server.put({
      apiVersion: RBAC_V1,
      kind: "ClusterRole",
      metadata: { name: "ns-reader" },
      rules: [{ apiGroups: [""], resources: ["namespaces"], verbs: ["list"] }],
    });
    const allowed = await dave.request("GET", "/api/v1/namespaces");
    assert.equal(allowed.status, 200);
    const last = server.requests.at(-1);
    assert.equal(last?.user, "dave");
  });

  it("lets every authenticated user read discovery (system:discovery), and nobody without credentials", async () => {
    const erin = await as(await server.clientCertKubeconfig("erin"));
    assert.equal((await erin.request("GET", "/apis")).status, 200);
    assert.equal((await erin.request("GET", "/version")).status, 200);
    const secret = await erin.request("GET", "/api/v1/namespaces/default/secrets");
    assert.equal(secret.status, 403);
    const anonymous = await as(await server.writeKubeconfig("wrong-token", "anon"));
    const res = await anonymous.request("GET", "/apis");
    assert.equal(res.status, 401);
    assert.deepEqual(res.body, UNAUTHORIZED_STATUS);
  });

  it("keeps system:masters above RBAC (the admin token needs no binding)", async () => {
    const admin = await as(server.kubeconfigPath);
    assert.equal(
      (await admin.request("GET", "/api/v1/namespaces/kube-system/secrets")).status,
      200,
    );
  });

  describe("impersonation (kubectl --as)", () => {
    const whoami = "/apis/authentication.k8s.io/v1/selfsubjectreviews";
    const review = { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" };

    it("lets system:masters act as another user and groups", async () => {
      const res = await call(server, "POST", whoami, {
        body: review,
        headers: { "Impersonate-User": "alice", "Impersonate-Group": ["devs", "qa"] },
      });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      const userInfo = (res.body["status"] as { userInfo: unknown }).userInfo;
      assert.deepEqual(userInfo, {
        username: "alice",
        groups: ["devs", "qa", "system:authenticated"],
      });
      assert.equal(server.requests.at(-1)?.user, "alice");
    });

    it("gives a service account its groups, and refuses groups without a user", async () => {
      const sa = "system:serviceaccount:ci:deployer";
      const res = await call(server, "POST", whoami, {
        body: review,
        headers: { "Impersonate-User": sa },
      });
      const userInfo = (res.body["status"] as { userInfo: { groups: string[] } }).userInfo;
      assert.deepEqual(userInfo.groups, [
        "system:serviceaccounts",
        "system:serviceaccounts:ci",
        "system:authenticated",
      ]);
      const bad = await call(server, "POST", whoami, {
        body: review,
        headers: { "Impersonate-Group": "devs" },
      });
      assert.equal(bad.status, 400);
    });

    it("needs the impersonate verb: 403 in kube's words, then allowed by RBAC", async () => {
      server.addToken("frank-token", { user: "frank", groups: [] });
      const asFrank = { token: "frank-token", body: review };
      const denied = await call(server, "POST", whoami, {
        ...asFrank,
        headers: { "Impersonate-User": "alice" },
      });
      assert.equal(denied.status, 403);
      assert.match(
        String(denied.body["message"]),
        /^users "alice" is forbidden: User "frank" cannot impersonate resource "users" in API group "" at the cluster scope/,
      );
      server.put({
        apiVersion: RBAC_V1,
        kind: "ClusterRole",
        metadata: { name: "impersonate-alice" },
        rules: [
          {
            apiGroups: [""],
            resources: ["users"],
            verbs: ["impersonate"],
            resourceNames: ["alice"],
          },
        ],
      });
      server.put({
        apiVersion: RBAC_V1,
        kind: "ClusterRoleBinding",
        metadata: { name: "frank-impersonates" },
        roleRef: {
          apiGroup: "rbac.authorization.k8s.io",
          kind: "ClusterRole",
          name: "impersonate-alice",
        },
        subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "frank" }],
      });
      const allowed = await call(server, "POST", whoami, {
        ...asFrank,
        headers: { "Impersonate-User": "alice" },
      });
      assert.equal(allowed.status, 201);
      const groups = await call(server, "POST", whoami, {
        ...asFrank,
        headers: { "Impersonate-User": "alice", "Impersonate-Group": "admins" },
      });
      assert.equal(groups.status, 403, "groups need their own impersonate permission");
    });
  });
});
