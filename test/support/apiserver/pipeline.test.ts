// The request pipeline as wired in the server: client-certificate authentication, the RBAC
// authorizer with kube's bootstrap roles, and their order, seen by a real client (vgate's own
// kubeconfig loader and transport).

import assert from "node:assert/strict";
import { loadKubeConfig } from "../../../webhook/src/kube/kubeconfig.js";
import { KubeTransport } from "../../../webhook/src/kube/transport.js";
import { startApiServer, type TestApiServer } from "./index.js";
import { RBAC_V1 } from "./rbac.js";

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
    assert.deepEqual(res.body, {
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: "Unauthorized",
      reason: "Unauthorized",
      code: 401,
    });
  });

  it("keeps system:masters above RBAC (the admin token needs no binding)", async () => {
    const admin = await as(server.kubeconfigPath);
    assert.equal(
      (await admin.request("GET", "/api/v1/namespaces/kube-system/secrets")).status,
      200,
    );
  });
});
