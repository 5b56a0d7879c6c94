// One webhook call over real HTTPS: the AdmissionReview kube sends, caBundle and server-name
// checks, service resolution, the timeout, and kube's checks of the answer.

import assert from "node:assert/strict";
import { generate } from "selfsigned";
import { sharedFixture } from "../fixtures.js";
import type { AdmissionAttributes } from "./admission-types.js";
import { webhookFromConfig } from "./admission-webhooks.js";
import { allow, startFakeWebhook, type FakeWebhook } from "./fake-webhook.js";
import { resourceType } from "./resources.js";
import type { KubeObject } from "./store.js";
import {
  callWebhook,
  resolveServiceEndpoint,
  type CallResult,
  type ServiceLookup,
} from "./webhook-call.js";
import { kindOf, type WebhookInvocation } from "./webhook-matching.js";

type Json = Record<string, unknown>;

const fixture = sharedFixture<{ request: Json }>("admission.k8s.io.v1.AdmissionReview.json");

const deployments = resourceType("apps/v1", "Deployment", "deployments", true, [
  "scale:Scale",
  "status",
]);

function attrs(over: Partial<AdmissionAttributes> = {}): AdmissionAttributes {
  return {
    type: deployments,
    subresource: "",
    operation: "CREATE",
    namespace: "default",
    name: "web",
    object: {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "web", namespace: "default" },
    },
    oldObject: null,
    user: { user: "alice", groups: ["devs", "system:authenticated"] },
    dryRun: false,
    options: { apiVersion: "meta.k8s.io/v1", kind: "CreateOptions" },
    ...over,
  };
}

function invocationFor(hook: Json, a = attrs()): WebhookInvocation {
  return {
    webhook: webhookFromConfig(
      "cfg",
      { name: "hook.example.com", admissionReviewVersions: ["v1"], ...hook },
      0,
    ),
    resource: { group: a.type.group, version: a.type.version, resource: a.type.resource },
    subresource: a.subresource,
    kind: kindOf(a.type, a.subresource)!,
  };
}

const noServices: ServiceLookup = () => undefined;

function services(objects: KubeObject[]): ServiceLookup {
  return (kind, namespace, name) =>
    objects.find(
      (o) => o.kind === kind && o.metadata.namespace === namespace && o.metadata.name === name,
    );
}

const svc = (name: string, ports: Json[], extra: Json = {}): KubeObject => ({
  kind: "Service",
  metadata: { name, namespace: "hooks" },
  spec: { ports, ...extra },
});
const eps = (name: string, subsets: Json[]): KubeObject => ({
  kind: "Endpoints",
  metadata: { name, namespace: "hooks" },
  subsets,
});

const callError = (r: CallResult): string => {
  assert.ok("callError" in r, `expected a call error, got ${JSON.stringify(r)}`);
  return r.callError;
};

describe("webhook calls", function () {
  this.timeout(20_000);
  let hook: FakeWebhook;
  let other: FakeWebhook;
  let svcHook: FakeWebhook;

  before(async () => {
    [hook, other, svcHook] = await Promise.all([
      startFakeWebhook(),
      startFakeWebhook(),
      startFakeWebhook(["web-hook.hooks.svc"]),
    ]);
  });
  after(async () => {
    await Promise.all([hook?.close(), other?.close(), svcHook?.close()]);
  });
  beforeEach(() => {
    for (const h of [hook, other, svcHook]) {
      h.received.length = 0;
      h.handler = (review) => allow(review);
    }
  });

  const byUrl = (extra: Json = {}, path = "/validate"): Json => ({
    clientConfig: { url: hook.url(path), caBundle: hook.caBundle },
    ...extra,
  });

  describe("the AdmissionReview sent", () => {
    it("has the fields of kube's v1 AdmissionReview request, in kube's order", async () => {
      const a = attrs({
        operation: "UPDATE",
        subresource: "scale",
        object: { apiVersion: "autoscaling/v1", kind: "Scale", metadata: { name: "web" } },
        oldObject: { apiVersion: "autoscaling/v1", kind: "Scale", metadata: { name: "web" } },
        user: { user: "alice", uid: "u-1", groups: ["devs"], extra: { scopes: ["a"] } },
        dryRun: true,
        options: { apiVersion: "meta.k8s.io/v1", kind: "UpdateOptions" },
      });
      const r = await callWebhook(invocationFor(byUrl(), a), a, false, {
        lookup: noServices,
        uid: () => "uid-1",
      });
      assert.ok("answer" in r, JSON.stringify(r));
      const sent = hook.received[0]!.review;
      assert.equal(sent.apiVersion, "admission.k8s.io/v1");
      assert.equal(sent.kind, "AdmissionReview");
      const req = sent.request as Json;
      assert.deepEqual(Object.keys(req), Object.keys(fixture.request));
      assert.deepEqual(req, {
        uid: "uid-1",
        kind: { group: "apps", version: "v1", kind: "Scale" },
        resource: { group: "apps", version: "v1", resource: "deployments" },
        subResource: "scale",
        requestKind: { group: "apps", version: "v1", kind: "Scale" },
        requestResource: { group: "apps", version: "v1", resource: "deployments" },
        requestSubResource: "scale",
        name: "web",
        namespace: "default",
        operation: "UPDATE",
        userInfo: { username: "alice", uid: "u-1", groups: ["devs"], extra: { scopes: ["a"] } },
        object: a.object,
        oldObject: a.oldObject,
        dryRun: true,
        options: a.options,
      });
    });

    it("omits empty strings and sends null objects, as Go's JSON does", async () => {
      const a = attrs({ namespace: "", name: "", user: { user: "bob", groups: [] } });
      await callWebhook(invocationFor(byUrl(), a), a, false, { lookup: noServices });
      const req = hook.received[0]!.review.request as Json;
      for (const absent of ["subResource", "requestSubResource", "name", "namespace"]) {
        assert.equal(absent in req, false, absent);
      }
      assert.deepEqual(req.userInfo, { username: "bob" });
      assert.equal(req.oldObject, null);
      assert.equal(req.dryRun, false);
      assert.match(String(req.uid), /^[0-9a-f-]{36}$/);
    });

    it("POSTs JSON to the path with ?timeout= in whole seconds", async () => {
      const a = attrs();
      await callWebhook(invocationFor(byUrl({ timeoutSeconds: 7 }, "/hooks/x"), a), a, false, {
        lookup: noServices,
      });
      const got = hook.received[0]!;
      assert.equal(got.path, "/hooks/x?timeout=7s");
      assert.equal(got.headers["content-type"], "application/json");
      await callWebhook(invocationFor(byUrl({}, "/d"), a), a, false, {
        lookup: noServices,
        timeoutMs: 1500,
      });
      assert.equal(hook.received[1]!.path, "/d?timeout=2s");
    });

    it("rewrites the objects' apiVersion for an Equivalent version", async () => {
      const a = attrs();
      const inv = invocationFor(byUrl(), a);
      inv.resource = { ...inv.resource, version: "v1beta2" };
      inv.kind = { ...inv.kind, version: "v1beta2" };
      await callWebhook(inv, a, false, { lookup: noServices });
      const req = hook.received[0]!.review.request as Json;
      assert.equal((req.object as Json).apiVersion, "apps/v1beta2");
      assert.deepEqual(req.requestResource, {
        group: "apps",
        version: "v1",
        resource: "deployments",
      });
      assert.deepEqual(req.resource, {
        group: "apps",
        version: "v1beta2",
        resource: "deployments",
      });
    });

    it("speaks v1beta1 to a webhook that only accepts it, without the v1 checks", async () => {
      hook.handler = () => ({ response: { allowed: true } });
      const a = attrs();
      const r = await callWebhook(
        invocationFor(byUrl({ admissionReviewVersions: ["v1beta1"] }), a),
        a,
        false,
        {
          lookup: noServices,
        },
      );
      assert.ok("answer" in r, JSON.stringify(r));
      assert.equal(hook.received[0]!.review.apiVersion, "admission.k8s.io/v1beta1");
    });

    it("fails for a webhook that accepts no known version", async () => {
      const a = attrs();
      const r = await callWebhook(
        invocationFor(byUrl({ admissionReviewVersions: ["v2"] }), a),
        a,
        false,
        {
          lookup: noServices,
        },
      );
      assert.equal(
        callError(r),
        'failed calling webhook "hook.example.com": could not create admission objects: webhook does not accept known AdmissionReview versions (v1, v1beta1)',
      );
      assert.equal(hook.received.length, 0);
    });
  });

  describe("TLS", () => {
    it("trusts only the caBundle", async () => {
      const a = attrs();
      const wrongCa = { clientConfig: { url: hook.url("/v"), caBundle: other.caBundle } };
      assert.equal(
        callError(await callWebhook(invocationFor(wrongCa, a), a, false, { lookup: noServices })),
        `failed calling webhook "hook.example.com": failed to call webhook: Post "https://localhost:${hook.port}/v?timeout=10s": tls: failed to verify certificate: x509: certificate signed by unknown authority`,
      );
      const noCa = { clientConfig: { url: hook.url("/v") } };
      assert.match(
        callError(await callWebhook(invocationFor(noCa, a), a, false, { lookup: noServices })),
        /x509: certificate signed by unknown authority$/,
      );
      assert.equal(hook.received.length, 0);
    });

    it("checks an IP host against the certificate's IP SANs", async () => {
      const a = attrs();
      const ipUrl = (h: FakeWebhook) => ({
        clientConfig: { url: `https://127.0.0.1:${h.port}/v`, caBundle: h.caBundle },
      });
      // selfSignedTls adds the IP SANs 127.0.0.1 and ::1.
      const ok = await callWebhook(invocationFor(ipUrl(svcHook), a), a, false, {
        lookup: noServices,
      });
      assert.ok("answer" in ok, JSON.stringify(ok));
      const pems = await generate([{ name: "commonName", value: "dns-only" }], {
        keyType: "ec",
        algorithm: "sha256",
        extensions: [
          { name: "subjectAltName", altNames: [{ type: 2, value: "dns-only.example" }] },
        ],
      });
      const dnsOnly = await startFakeWebhook([], { cert: pems.cert, key: pems.private });
      try {
        const r = await callWebhook(invocationFor(ipUrl(dnsOnly), a), a, false, {
          lookup: noServices,
        });
        assert.match(
          callError(r),
          /tls: failed to verify certificate: x509: cannot validate certificate for 127\.0\.0\.1 because it doesn't contain any IP SANs$/,
        );
      } finally {
        await dnsOnly.close();
      }
    });

    it("reports a refused connection as Go's dialer does", async () => {
      const a = attrs();
      const r = await callWebhook(
        invocationFor({ clientConfig: { url: "https://127.0.0.1:1/v" } }, a),
        a,
        false,
        {
          lookup: noServices,
        },
      );
      assert.equal(
        callError(r),
        'failed calling webhook "hook.example.com": failed to call webhook: Post "https://127.0.0.1:1/v?timeout=10s": dial tcp 127.0.0.1:1: connect: connection refused',
      );
    });
  });

  describe("services", () => {
    const viaService = (port?: number, caBundle = svcHook.caBundle): Json => ({
      clientConfig: {
        service: {
          namespace: "hooks",
          name: "web-hook",
          path: "/mutate",
          ...(port ? { port } : {}),
        },
        caBundle,
      },
    });
    const wired = (): KubeObject[] => [
      svc("web-hook", [{ name: "https", port: 443, targetPort: 8443 }]),
      eps("web-hook", [
        { addresses: [], ports: [{ name: "https", port: 1 }] },
        {
          addresses: [{ ip: "127.0.0.1" }],
          ports: [
            { name: "metrics", port: 1 },
            { name: "https", port: svcHook.port },
          ],
        },
      ]),
    ];

    it("resolves the Service to an endpoint and verifies the name <name>.<namespace>.svc", async () => {
      const a = attrs();
      const r = await callWebhook(invocationFor(viaService(), a), a, true, {
        lookup: services(wired()),
      });
      assert.ok("answer" in r, JSON.stringify(r));
      const got = svcHook.received[0]!;
      assert.equal(got.path, "/mutate?timeout=10s");
      assert.equal(got.headers.host, "web-hook.hooks.svc:443");
    });

    it("rejects a certificate without the service's DNS name", async () => {
      const objects = wired();
      (objects[1]!.subsets as Json[])[1] = {
        addresses: [{ ip: "127.0.0.1" }],
        ports: [{ name: "https", port: hook.port }],
      };
      const a = attrs();
      const r = await callWebhook(invocationFor(viaService(undefined, hook.caBundle), a), a, true, {
        lookup: services(objects),
      });
      assert.equal(
        callError(r),
        'failed calling webhook "hook.example.com": failed to call webhook: Post "https://web-hook.hooks.svc:443/mutate?timeout=10s": tls: failed to verify certificate: x509: certificate is valid for localhost, not web-hook.hooks.svc',
      );
    });

    it("words resolution failures as kube's service resolver", () => {
      const ref = { namespace: "hooks", name: "web-hook" };
      assert.equal(resolveServiceEndpoint(ref, 443, services([])), 'service "web-hook" not found');
      assert.equal(
        resolveServiceEndpoint(ref, 8443, services(wired())),
        'no service port 8443 found for service "web-hook"',
      );
      assert.equal(
        resolveServiceEndpoint(ref, 443, services([wired()[0]!])),
        'endpoints "web-hook" not found',
      );
      assert.equal(
        resolveServiceEndpoint(ref, 443, services([wired()[0]!, eps("web-hook", [])])),
        'no endpoints available for service "web-hook"',
      );
      const external = svc("web-hook", [{ port: 443 }], { type: "ExternalName" });
      assert.equal(
        resolveServiceEndpoint(ref, 443, services([external])),
        'unsupported service type "ExternalName"',
      );
      // Unnamed ports match unnamed endpoint ports.
      const unnamed = [
        svc("web-hook", [{ port: 443 }]),
        eps("web-hook", [{ addresses: [{ ip: "10.0.0.9" }], ports: [{ port: 9443 }] }]),
      ];
      assert.deepEqual(resolveServiceEndpoint(ref, 443, services(unnamed)), {
        host: "10.0.0.9",
        port: 9443,
      });
    });

    it("reports a resolution failure as the Post's error", async () => {
      const a = attrs();
      const r = await callWebhook(invocationFor(viaService(), a), a, true, {
        lookup: services([]),
      });
      assert.equal(
        callError(r),
        'failed calling webhook "hook.example.com": failed to call webhook: Post "https://web-hook.hooks.svc:443/mutate?timeout=10s": service "web-hook" not found',
      );
    });

    it("needs a url or a service", async () => {
      const a = attrs();
      const r = await callWebhook(invocationFor({ clientConfig: {} }, a), a, true, {
        lookup: noServices,
      });
      assert.match(callError(r), /webhook configuration must have either service or URL$/);
    });
  });

  describe("timeout", () => {
    it("abandons a webhook that does not answer in time: context deadline exceeded", async () => {
      hook.handler = () => "hang";
      const a = attrs();
      const started = Date.now();
      const r = await callWebhook(invocationFor(byUrl({ timeoutSeconds: 30 })), a, false, {
        lookup: noServices,
        timeoutMs: 200,
      });
      assert.ok(Date.now() - started < 5000);
      assert.equal(
        callError(r),
        `failed calling webhook "hook.example.com": failed to call webhook: Post "https://localhost:${hook.port}/validate?timeout=1s": context deadline exceeded`,
      );
    });
  });

  describe("checking the answer", () => {
    const answerTo = async (
      handler: FakeWebhook["handler"],
      mutating = false,
    ): Promise<CallResult> => {
      hook.handler = handler;
      const a = attrs();
      return callWebhook(invocationFor(byUrl(), a), a, mutating, {
        lookup: noServices,
        uid: () => "the-uid",
      });
    };
    const prefix = 'failed calling webhook "hook.example.com": ';

    it("returns allowed, status and warnings", async () => {
      const r = await answerTo((rv) => allow(rv, { warnings: ["w1", "w2"] }));
      assert.ok("answer" in r);
      assert.deepEqual(r.answer, { allowed: true, patchType: "", warnings: ["w1", "w2"] });
    });

    it("requires the request's uid", async () => {
      const r = await answerTo(() => ({ response: { uid: "other", allowed: true } }));
      assert.equal(
        callError(r),
        `${prefix}received invalid webhook response: expected response.uid="the-uid", got "other"`,
      );
    });

    it("requires admission.k8s.io/v1 AdmissionReview", async () => {
      const r = await answerTo(() => ({
        status: 200,
        body: JSON.stringify({
          apiVersion: "admission.k8s.io/v1beta1",
          kind: "AdmissionReview",
          response: { uid: "the-uid", allowed: true },
        }),
      }));
      assert.equal(
        callError(r),
        `${prefix}received invalid webhook response: expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got admission.k8s.io/v1beta1, Kind=AdmissionReview`,
      );
    });

    it("requires a response", async () => {
      const r = await answerTo(() => ({
        status: 200,
        body: JSON.stringify({ apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview" }),
      }));
      assert.equal(
        callError(r),
        `${prefix}received invalid webhook response: webhook response was absent`,
      );
    });

    it("forbids a patch from a validating webhook", async () => {
      const withPatch = (rv: Json) =>
        allow(rv, { patch: Buffer.from("[]").toString("base64"), patchType: "JSONPatch" });
      assert.equal(
        callError(await answerTo(withPatch)),
        `${prefix}received invalid webhook response: validating webhook may not return response.patch`,
      );
      assert.equal(
        callError(await answerTo((rv) => allow(rv, { patchType: "JSONPatch" }))),
        `${prefix}received invalid webhook response: validating webhook may not return response.patchType`,
      );
      const r = await answerTo(withPatch, true);
      assert.ok("answer" in r);
      assert.equal(r.answer.patchType, "JSONPatch");
      assert.equal(r.answer.patch?.toString(), "[]");
    });

    it("requires patch and patchType together from a mutating webhook", async () => {
      assert.equal(
        callError(await answerTo((rv) => allow(rv, { patch: "W10=" }), true)),
        `${prefix}received invalid webhook response: webhook returned response.patch but not response.patchType`,
      );
      assert.equal(
        callError(await answerTo((rv) => allow(rv, { patchType: "JSONPatch" }), true)),
        `${prefix}received invalid webhook response: webhook returned response.patchType but not response.patch`,
      );
    });

    it("rejects a patch that is not base64", async () => {
      const r = await answerTo((rv) => allow(rv, { patch: "[{]", patchType: "JSONPatch" }), true);
      assert.equal(
        callError(r),
        `${prefix}failed to call webhook: illegal base64 data at input byte 0`,
      );
    });

    it("turns HTTP errors into client-go's errors", async () => {
      assert.equal(
        callError(
          await answerTo(() => ({ status: 500, body: "boom\n", contentType: "text/plain" })),
        ),
        `${prefix}failed to call webhook: an error on the server ("boom") has prevented the request from succeeding`,
      );
      assert.equal(
        callError(
          await answerTo(() => ({ status: 502, body: "<html>", contentType: "text/html" })),
        ),
        `${prefix}failed to call webhook: an error on the server ("unknown") has prevented the request from succeeding`,
      );
      assert.equal(
        callError(await answerTo(() => ({ status: 404, body: "" }))),
        `${prefix}failed to call webhook: the server could not find the requested resource`,
      );
      const status = {
        kind: "Status",
        apiVersion: "v1",
        status: "Failure",
        message: "nope",
        code: 403,
      };
      assert.equal(
        callError(await answerTo(() => ({ status: 403, body: JSON.stringify(status) }))),
        `${prefix}failed to call webhook: nope`,
      );
    });

    it("rejects a body that is not JSON or has no kind", async () => {
      assert.match(
        callError(await answerTo(() => ({ status: 200, body: "not json" }))),
        /^failed calling webhook "hook\.example\.com": failed to call webhook: couldn't get version\/kind; json parse error: /,
      );
      assert.equal(
        callError(await answerTo(() => ({ status: 200, body: '{"response":{}}' }))),
        `${prefix}failed to call webhook: Object 'Kind' is missing in '{"response":{}}'`,
      );
    });
  });
});
