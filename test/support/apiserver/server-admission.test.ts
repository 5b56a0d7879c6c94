// Admission webhooks as the server runs them on every write (not the dispatcher alone): a
// configuration created through the API takes effect at once; failurePolicy, timeoutSeconds,
// patches, warnings and denials reach the client as kube sends them.

import assert from "node:assert/strict";
import { allow, deny, patch, startFakeWebhook, type FakeWebhook } from "./fake-webhook.js";
import { startApiServer, type TestApiServer } from "./index.js";
import { call } from "./test-client.js";

const CONFIGS = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations";
const MUTATING = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations";
const CONFIGMAPS = "/api/v1/namespaces/default/configmaps";

function webhook(url: string, caBundle: string, extra: Record<string, unknown> = {}) {
  return {
    name: "check.example.com",
    clientConfig: { url, caBundle },
    rules: [
      { operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["configmaps"] },
    ],
    admissionReviewVersions: ["v1"],
    sideEffects: "None",
    ...extra,
  };
}

describe("apiserver: admission webhooks on the write path", function () {
  this.timeout(30_000);
  let server: TestApiServer;
  let fake: FakeWebhook;
  let n = 0;
  const createConfigMap = () =>
    call(server, "POST", CONFIGMAPS, {
      body: {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: `cm-${++n}` },
        data: { a: "1" },
      },
    });

  before(async () => {
    server = await startApiServer();
    server.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: "default" } });
    fake = await startFakeWebhook();
  });
  after(async () => {
    await fake.close();
    await server.close();
  });
  afterEach(async () => {
    await call(server, "DELETE", `${CONFIGS}/check`);
    await call(server, "DELETE", `${MUTATING}/mutate`);
  });

  it("denies with kube's message and the webhook's code once a configuration is created", async () => {
    fake.handler = (review) => deny(review, { code: 403, message: "no configmaps today" });
    const created = await call(server, "POST", CONFIGS, {
      body: { metadata: { name: "check" }, webhooks: [webhook(fake.url("/v"), fake.caBundle)] },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const res = await createConfigMap();
    assert.equal(res.status, 403);
    assert.equal(
      res.body["message"],
      'admission webhook "check.example.com" denied the request: no configmaps today',
    );
  });

  it("failurePolicy Fail: an unreachable webhook is a 500; Ignore: the write goes through", async () => {
    const dead = "https://127.0.0.1:1/v";
    await call(server, "POST", CONFIGS, {
      body: { metadata: { name: "check" }, webhooks: [webhook(dead, fake.caBundle)] },
    });
    const failed = await createConfigMap();
    assert.equal(failed.status, 500);
    assert.match(
      String(failed.body["message"]),
      /^Internal error occurred: failed calling webhook "check.example.com": failed to call webhook: Post "https:\/\/127\.0\.0\.1:1\/v\?timeout=10s": .*connection refused/,
    );
    await call(server, "DELETE", `${CONFIGS}/check`);
    await call(server, "POST", CONFIGS, {
      body: {
        metadata: { name: "check" },
        webhooks: [webhook(dead, fake.caBundle, { failurePolicy: "Ignore" })],
      },
    });
    assert.equal((await createConfigMap()).status, 201);
  });

  it("timeoutSeconds: a webhook that does not answer in time fails the write under Fail", async () => {
    fake.handler = () => "hang";
    await call(server, "POST", CONFIGS, {
      body: {
        metadata: { name: "check" },
        webhooks: [webhook(fake.url("/slow"), fake.caBundle, { timeoutSeconds: 1 })],
      },
    });
    const started = Date.now();
    const res = await createConfigMap();
    assert.equal(res.status, 500);
    assert.match(String(res.body["message"]), /context deadline exceeded/);
    assert.ok(Date.now() - started < 10_000, "the 1 s timeout applies, not the 10 s default");
  });

  it("applies a mutating webhook's JSONPatch and returns its warnings as Warning headers", async () => {
    fake.handler = (review) =>
      patch(review, [{ op: "add", path: "/data/added", value: "by-webhook" }], {
        warnings: ["configmap mutated"],
      });
    await call(server, "POST", MUTATING, {
      body: {
        metadata: { name: "mutate" },
        webhooks: [{ ...webhook(fake.url("/m"), fake.caBundle), name: "mutate.example.com" }],
      },
    });
    const res = await createConfigMap();
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.deepEqual(res.body["data"], { a: "1", added: "by-webhook" });
    assert.equal(res.headers["warning"], '299 - "configmap mutated"');
    fake.handler = (review) => allow(review);
  });
});
