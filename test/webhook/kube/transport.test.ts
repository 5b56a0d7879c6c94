import assert from "node:assert/strict";
import { KubeTransport } from "../../../webhook/src/kube/transport.js";
import { loadKubeConfig } from "../../../webhook/src/kube/kubeconfig.js";
import { startApiServer, type TestApiServer } from "../../support/apiserver/index.js";

describe("KubeTransport", () => {
  let server: TestApiServer;
  let transport: KubeTransport;
  before(async () => {
    server = await startApiServer();
    const kc = await loadKubeConfig({ kubeconfig: server.kubeconfigPath, env: {} });
    transport = new KubeTransport(kc!, { timeoutMs: 2000 });
  });
  after(async () => {
    transport.close();
    await server.close();
  });

  it("sends the kubeconfig's bearer token and parses JSON answers", async () => {
    const res = await transport.request("GET", "/version");
    assert.equal(res.status, 200);
    assert.equal((res.body as { major: string }).major, "1");
    assert.equal(server.requests.at(-1)?.user, "kubernetes-admin");
  });

  it("redacts the token it sent from any text", async () => {
    await transport.request("GET", "/api");
    const text = `oops Bearer ${server.token} and ${server.token}.`;
    const redacted = transport.redact(text);
    assert.ok(!redacted.includes(server.token));
    assert.equal(redacted, "oops <redacted> and <redacted>.");
    assert.equal(transport.redact("nothing secret"), "nothing secret");
  });

  it("sends JSON bodies", async () => {
    const body = {
      apiVersion: "management.loft.sh/v1",
      kind: "OwnedAccessKey",
      metadata: { name: "sent" },
    };
    const res = await transport.request(
      "POST",
      "/apis/management.loft.sh/v1/ownedaccesskeys",
      body,
    );
    assert.equal(res.status, 201);
    assert.deepEqual(server.requests.at(-1)?.body, body);
  });

  it("rejects with a timeout error when the answer is late", async () => {
    const quick = new KubeTransport(
      (await loadKubeConfig({ kubeconfig: server.kubeconfigPath, env: {} }))!,
      { timeoutMs: 50 },
    );
    server.setDelay(300);
    try {
      await assert.rejects(quick.request("GET", "/api"), {
        name: "TransportError",
        timedOut: true,
        message: "API server did not answer within 50 ms",
      });
    } finally {
      server.setDelay(0);
      quick.close();
    }
  });
});
