// KubeTransport against a real kube-apiserver, as a service account with a bound token: the server
// itself says who sent a request (SelfSubjectReview) and what body it read (the echoed spec of a
// SelfSubjectAccessReview).

import assert from "node:assert/strict";
import { createServer } from "node:net";
import { ClientConfig } from "../../../webhook/src/shared/client-config.js";
import { KubeTransport, TransportError } from "../../../webhook/src/shared/transport.js";
import { loadKubeConfig } from "../../../webhook/src/shared/kubeconfig.js";
import { sharedCluster, type VgateCluster } from "../../support/cluster.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../../support/kube/binaries.js";
import { serviceAccountWith, type TestServiceAccount } from "../../support/kube/service-account.js";

async function transportFor(kubeconfig: string, timeoutMs: number): Promise<KubeTransport> {
  const kc = await loadKubeConfig({ kubeconfig, env: {} });
  assert.ok(kc);
  return new KubeTransport(kc, { timeoutMs });
}

(HAVE_KUBE ? describe : describe.skip)(`KubeTransport${KUBE_SKIP_REASON}`, function () {
  this.timeout(60_000);
  let cluster: VgateCluster;
  let account: TestServiceAccount;
  let transport: KubeTransport;
  before(async function () {
    this.timeout(120_000);
    cluster = await sharedCluster();
    // No role: every authenticated user may read /version and review itself.
    account = await serviceAccountWith(cluster.plane, "transport", []);
    transport = await transportFor(await account.kubeconfig(), 10_000);
  });
  after(async () => {
    transport?.close();
    await account?.remove();
  });

  it("sends the kubeconfig's bearer token and parses JSON answers", async () => {
    const version = await transport.request("GET", "/version");
    assert.equal(version.status, 200);
    assert.equal((version.body as { major: string }).major, "1");
    const whoami = await transport.request(
      "POST",
      "/apis/authentication.k8s.io/v1/selfsubjectreviews",
      { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" },
    );
    assert.equal(whoami.status, 201);
    const user = (whoami.body as { status: { userInfo: { username: string } } }).status.userInfo;
    assert.equal(user.username, account.username);
  });

  it("redacts the token it sent from any text", async () => {
    await transport.request("GET", "/api");
    const token = account.token;
    const redacted = transport.redact(`oops Bearer ${token} and ${token}.`);
    assert.ok(!redacted.includes(token));
    assert.equal(redacted, "oops <redacted> and <redacted>.");
    assert.equal(transport.redact("nothing secret"), "nothing secret");
  });

  it("sends JSON bodies", async () => {
    const spec = {
      resourceAttributes: {
        group: "management.loft.sh",
        version: "v1",
        resource: "ownedaccesskeys",
        name: "sent",
        verb: "get",
      },
    };
    const res = await transport.request(
      "POST",
      "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
      { apiVersion: "authorization.k8s.io/v1", kind: "SelfSubjectAccessReview", spec },
    );
    assert.equal(res.status, 201);
    const answer = res.body as { spec: unknown; status: { allowed: boolean } };
    assert.deepEqual(answer.spec, spec, "the server read the body we sent");
    assert.equal(answer.status.allowed, false);
  });

  it("sends extra headers (repeated when an array) and returns the answer's headers", async () => {
    const admin = await transportFor(cluster.plane.adminKubeconfig, 10_000);
    try {
      const res = await admin.request(
        "POST",
        "/apis/authentication.k8s.io/v1/selfsubjectreviews",
        { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" },
        { headers: { "Impersonate-User": "carol", "Impersonate-Group": ["g1", "g2"] } },
      );
      assert.equal(res.status, 201);
      const user = (res.body as { status: { userInfo: { username: string; groups: string[] } } })
        .status.userInfo;
      assert.equal(user.username, "carol");
      assert.deepEqual(
        user.groups.filter((g) => g.startsWith("g")),
        ["g1", "g2"],
      );
      assert.match(String(res.headers?.["content-type"]), /^application\/json/);
      assert.ok(res.headers?.["audit-id"], "kube-apiserver's own headers come back");
    } finally {
      admin.close();
    }
  });

  it("sends the content type it is given, and extra headers never replace the credentials", async () => {
    const review = { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" };
    const path = "/apis/authentication.k8s.io/v1/selfsubjectreviews";
    const patchType = await transport.request("POST", path, review, {
      contentType: "application/json-patch+json",
    });
    assert.equal(patchType.status, 415, "kube read our Content-Type and refused it for a create");
    const forged = await transport.request("POST", path, review, {
      headers: { Authorization: "Bearer not-a-token" },
    });
    assert.equal(forged.status, 201);
    const user = (forged.body as { status: { userInfo: { username: string } } }).status.userInfo;
    assert.equal(user.username, account.username);
  });

  it("rejects with a timeout error when the answer is late", async () => {
    const proxy = await cluster.plane.faultProxy();
    const quick = await transportFor(await account.kubeconfig(proxy.url), 50);
    proxy.setDelay(1000);
    try {
      await assert.rejects(quick.request("GET", "/api"), {
        name: "TransportError",
        timedOut: true,
        message: "API server did not answer within 50 ms",
      });
    } finally {
      quick.close();
      await proxy.close();
    }
  });
});

describe("TransportError", () => {
  it("says what failed in `failure` and `detail`, apart from the message's prefix", async () => {
    // A port that was just free: nothing listens there now.
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as { port: number };
    await new Promise((resolve) => server.close(resolve));
    const kc = new ClientConfig();
    kc.loadFromClusterAndUser(
      { name: "closed", server: `http://127.0.0.1:${port}`, skipTLSVerify: false },
      { name: "nobody" },
    );
    const transport = new KubeTransport(kc, { timeoutMs: 10_000 });
    try {
      const err = await transport.request("GET", "/version").then(
        () => assert.fail("a closed port answered"),
        (e: unknown) => e,
      );
      assert.ok(err instanceof TransportError);
      assert.equal(err.failure, "ECONNREFUSED");
      assert.equal(err.timedOut, false);
      assert.equal((err.cause as NodeJS.ErrnoException).code, "ECONNREFUSED");
      assert.equal(err.detail, (err.cause as Error).message);
      assert.equal(err.message, `API server unreachable: ${err.detail}`);
    } finally {
      transport.close();
    }
  });
});
