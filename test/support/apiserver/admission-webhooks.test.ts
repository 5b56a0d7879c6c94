// The dispatcher as kube-apiserver's MutatingAdmissionWebhook and ValidatingAdmissionWebhook
// plugins: configurations from the store, call order, kube's errors, patches, warnings, dry run
// and reinvocation, against real HTTPS webhooks started here.

import assert from "node:assert/strict";
import { KubeError } from "../../../webhook/src/api/status.js";
import type { AdmissionAttributes } from "./admission-types.js";
import {
  ADMISSIONREGISTRATION_V1,
  AdmissionWebhookError,
  AdmissionWebhooks,
  type AdmissionWebhooksOptions,
  type ConfigurationKind,
  webhooksOf,
} from "./admission-webhooks.js";
import {
  allow,
  deny,
  patch,
  putConfiguration,
  startFakeWebhook,
  webhookRegistry,
  type FakeWebhook,
} from "./fake-webhook.js";
import { ResourceRegistry, defaultResources, resourceType } from "./resources.js";
import { ObjectStore } from "./store.js";

type Json = Record<string, unknown>;

const keyType = () => webhookRegistry().lookup("management.loft.sh/v1", "OwnedAccessKey")!;

function attrs(over: Partial<AdmissionAttributes> = {}): AdmissionAttributes {
  return {
    type: keyType(),
    subresource: "",
    operation: "CREATE",
    namespace: "",
    name: "k1",
    object: {
      apiVersion: "management.loft.sh/v1",
      kind: "OwnedAccessKey",
      metadata: { name: "k1" },
      spec: { user: "alice" },
    },
    oldObject: null,
    user: { user: "alice", groups: ["system:authenticated"] },
    dryRun: false,
    options: { apiVersion: "meta.k8s.io/v1", kind: "CreateOptions" },
    ...over,
  };
}

const keyRules = [
  {
    operations: ["CREATE", "UPDATE", "DELETE"],
    apiGroups: ["management.loft.sh"],
    apiVersions: ["v1"],
    resources: ["ownedaccesskeys"],
  },
];

async function rejection(p: Promise<unknown>): Promise<AdmissionWebhookError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof AdmissionWebhookError, String(err));
    assert.ok(err instanceof KubeError);
    return err;
  }
  assert.fail("expected the request to be rejected");
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const requestOf = (review: Json): Json => review.request as Json;
const objectOf = (review: Json): Json => requestOf(review).object as Json;

describe("admission webhooks", function () {
  this.timeout(20_000);
  let hook: FakeWebhook;
  let store: ObjectStore;
  let registry: ResourceRegistry;

  before(async () => {
    hook = await startFakeWebhook();
  });
  after(async () => {
    await hook?.close();
  });
  beforeEach(() => {
    hook.received.length = 0;
    hook.handler = (review) => allow(review);
    store = new ObjectStore();
    registry = webhookRegistry();
  });

  const webhook = (name: string, path: string, extra: Json = {}): Json => ({
    name,
    admissionReviewVersions: ["v1"],
    sideEffects: "None",
    clientConfig: { url: hook.url(path), caBundle: hook.caBundle },
    rules: keyRules,
    ...extra,
  });
  const configure = (kind: ConfigurationKind, name: string, webhooks: Json[]) =>
    putConfiguration(store, registry, kind, name, webhooks);
  const dispatcher = (options: AdmissionWebhooksOptions = {}) =>
    new AdmissionWebhooks(store, registry, options);
  const paths = () => hook.received.map((r) => r.path.replace(/\?.*$/, ""));

  describe("configuration", () => {
    it("admits everything unchanged without configurations or their types", async () => {
      const a = attrs();
      assert.deepEqual(await dispatcher().mutate(a), { object: a.object, warnings: [] });
      const bare = new ResourceRegistry();
      for (const t of defaultResources("loft.sh")) bare.add(t);
      assert.deepEqual(await new AdmissionWebhooks(store, bare).validate(a), { warnings: [] });
      assert.equal(hook.received.length, 0);
    });

    it("orders webhooks by configuration name, then as listed", () => {
      const config = (name: string, hooks: string[]) => ({
        metadata: { name },
        webhooks: hooks.map((h) => ({ name: h })),
      });
      const names = webhooksOf([
        config("b", ["b1", "b0"]),
        config("a", ["a1"]),
        config("ab", ["x"]),
      ]).map((w) => w.uid);
      assert.deepEqual(names, ["a/a1/0", "ab/x/0", "b/b1/0", "b/b0/1"]);
    });

    it("reads configuration changes at once", async () => {
      const d = dispatcher();
      await d.validate(attrs());
      configure("ValidatingWebhookConfiguration", "v", [webhook("v.example.com", "/v")]);
      await d.validate(attrs());
      assert.deepEqual(paths(), ["/v"]);
    });

    it("skips webhooks whose rules do not match", async () => {
      configure("ValidatingWebhookConfiguration", "v", [
        webhook("v.example.com", "/v", { rules: [{ ...keyRules[0], operations: ["DELETE"] }] }),
      ]);
      await dispatcher().validate(attrs());
      assert.equal(hook.received.length, 0);
    });

    it("never sends writes of webhook configurations to webhooks", async () => {
      configure("ValidatingWebhookConfiguration", "v", [
        webhook("v.example.com", "/v", {
          rules: [{ operations: ["*"], apiGroups: ["*"], apiVersions: ["*"], resources: ["*"] }],
        }),
      ]);
      const type = registry.lookup(ADMISSIONREGISTRATION_V1, "ValidatingWebhookConfiguration")!;
      const a = attrs({ type, object: { metadata: { name: "v" } } });
      await dispatcher().validate(a);
      await dispatcher().mutate(a);
      assert.equal(hook.received.length, 0);
    });
  });

  describe("mutating webhooks", () => {
    it("run serially, configurations by name and webhooks in order, each seeing the last patch", async () => {
      let inFlight = 0;
      let maxInFlight = 0;
      hook.handler = async (review, path) => {
        inFlight += 1;
        maxInFlight = Math.max(maxInFlight, inFlight);
        await sleep(20);
        inFlight -= 1;
        const step = path.replace(/\?.*$/, "").slice(1);
        const seen = ((objectOf(review).metadata as Json).annotations ?? {}) as Json;
        return patch(review, [
          Object.keys(seen).length === 0
            ? { op: "add", path: "/metadata/annotations", value: { [step]: "1" } }
            : {
                op: "add",
                path: `/metadata/annotations/${step}`,
                value: String(Object.keys(seen).length + 1),
              },
        ]);
      };
      configure("MutatingWebhookConfiguration", "b-config", [
        webhook("b1.example.com", "/b1"),
        webhook("b2.example.com", "/b2"),
      ]);
      configure("MutatingWebhookConfiguration", "a-config", [
        webhook("a2.example.com", "/a2"),
        webhook("a1.example.com", "/a1"),
      ]);
      const out = await dispatcher().mutate(attrs());
      assert.deepEqual(paths(), ["/a2", "/a1", "/b1", "/b2"]);
      assert.equal(maxInFlight, 1);
      assert.deepEqual((out.object!.metadata as Json).annotations, {
        a2: "1",
        a1: "2",
        b1: "3",
        b2: "4",
      });
      assert.equal(out.object!.apiVersion, "management.loft.sh/v1");
    });

    it("leave the object as it was for an empty or no-op patch", async () => {
      hook.handler = (review, path) =>
        path.startsWith("/empty")
          ? patch(review, [])
          : patch(review, [{ op: "replace", path: "/spec/user", value: "alice" }]);
      configure("MutatingWebhookConfiguration", "m", [
        webhook("e.example.com", "/empty"),
        webhook("n.example.com", "/noop"),
      ]);
      const a = attrs();
      const out = await dispatcher().mutate(a);
      assert.deepEqual(out.object, a.object);
    });

    it("cannot patch a DELETE: 500, whatever the failurePolicy", async () => {
      hook.handler = (review) =>
        patch(review, [{ op: "add", path: "/metadata/labels", value: {} }]);
      configure("MutatingWebhookConfiguration", "m", [
        webhook("m.example.com", "/m", { failurePolicy: "Ignore" }),
      ]);
      const del = attrs({ operation: "DELETE", object: null, oldObject: attrs().object });
      const err = await rejection(dispatcher().mutate(del));
      assert.equal(err.code, 500);
      assert.equal(
        err.message,
        'Internal error occurred: admission webhook "m.example.com" attempted to modify the object, which is not supported for this operation',
      );
    });

    it("a patch that does not apply is a 500, whatever the failurePolicy", async () => {
      hook.handler = (review) =>
        patch(review, [{ op: "replace", path: "/spec/missing", value: 1 }]);
      configure("MutatingWebhookConfiguration", "m", [
        webhook("m.example.com", "/m", { failurePolicy: "Ignore" }),
      ]);
      const err = await rejection(dispatcher().mutate(attrs()));
      assert.equal(err.code, 500);
      assert.equal(err.reason, "InternalError");
      assert.equal(
        err.message,
        "Internal error occurred: replace operation does not apply: doc is missing key: /spec/missing: missing value",
      );
    });

    it("an undecodable patch or another patchType is a call failure", async () => {
      hook.handler = (review) =>
        allow(review, { patchType: "JSONPatch", patch: Buffer.from("{}").toString("base64") });
      configure("MutatingWebhookConfiguration", "m", [webhook("m.example.com", "/m")]);
      const err = await rejection(dispatcher().mutate(attrs()));
      assert.equal(err.code, 500);
      assert.equal(
        err.message,
        'Internal error occurred: failed calling webhook "m.example.com": received undecodable patch in webhook response: json: cannot unmarshal object into Go value of type jsonpatch.Patch',
      );
      hook.handler = (review) =>
        allow(review, {
          patchType: "MergePatch",
          patch: Buffer.from('[{"op":"remove","path":"/spec"}]').toString("base64"),
        });
      const other = await rejection(dispatcher().mutate(attrs()));
      assert.match(
        other.message,
        /failed calling webhook "m\.example\.com": unsupported patch type "MergePatch"$/,
      );
      configure("MutatingWebhookConfiguration", "m", [
        webhook("m.example.com", "/m", { failurePolicy: "Ignore" }),
      ]);
      const a = attrs();
      assert.deepEqual((await dispatcher().mutate(a)).object, a.object);
    });

    it("patch the object in the version the webhook asked for (matchPolicy Equivalent)", async () => {
      registry.add(
        resourceType("management.loft.sh/v2", "OwnedAccessKey", "ownedaccesskeys", false),
      );
      hook.handler = (review) => {
        assert.equal(objectOf(review).apiVersion, "management.loft.sh/v2");
        return patch(review, [{ op: "add", path: "/spec/type", value: "User" }]);
      };
      configure("MutatingWebhookConfiguration", "m", [
        webhook("m.example.com", "/m", { rules: [{ ...keyRules[0], apiVersions: ["v2"] }] }),
      ]);
      const out = await dispatcher().mutate(attrs());
      assert.equal(hook.received.length, 1);
      assert.equal(out.object!.apiVersion, "management.loft.sh/v1");
      assert.equal((out.object!.spec as Json).type, "User");
      assert.equal((requestOf(hook.received[0]!.review).requestResource as Json).version, "v1");
    });

    describe("reinvocationPolicy", () => {
      const setup = (policy: string) => {
        hook.handler = (review, path) =>
          path.startsWith("/later") && !(objectOf(review).spec as Json).changed
            ? patch(review, [{ op: "add", path: "/spec/changed", value: true }])
            : allow(review);
        configure("MutatingWebhookConfiguration", "a", [
          webhook("first.example.com", "/first", { reinvocationPolicy: policy }),
        ]);
        configure("MutatingWebhookConfiguration", "b", [
          webhook("later.example.com", "/later", { reinvocationPolicy: "IfNeeded" }),
        ]);
      };

      it("IfNeeded calls a webhook again after a later one changed the object", async () => {
        setup("IfNeeded");
        const out = await dispatcher().mutate(attrs());
        assert.deepEqual(paths(), ["/first", "/later", "/first"]);
        assert.equal((objectOf(hook.received[2]!.review).spec as Json).changed, true);
        assert.equal((out.object!.spec as Json).changed, true);
      });

      it("Never calls each webhook once", async () => {
        setup("Never");
        await dispatcher().mutate(attrs());
        assert.deepEqual(paths(), ["/first", "/later"]);
      });

      it("nothing is called again when nothing changed", async () => {
        hook.handler = (review) => allow(review);
        configure("MutatingWebhookConfiguration", "a", [
          webhook("first.example.com", "/first", { reinvocationPolicy: "IfNeeded" }),
        ]);
        configure("MutatingWebhookConfiguration", "b", [webhook("later.example.com", "/later")]);
        await dispatcher().mutate(attrs());
        assert.deepEqual(paths(), ["/first", "/later"]);
      });
    });
  });

  describe("validating webhooks", () => {
    it("run in parallel", async () => {
      let inFlight = 0;
      let maxInFlight = 0;
      hook.handler = async (review) => {
        inFlight += 1;
        maxInFlight = Math.max(maxInFlight, inFlight);
        await sleep(150);
        inFlight -= 1;
        return allow(review);
      };
      configure("ValidatingWebhookConfiguration", "v", [
        webhook("v1.example.com", "/v1"),
        webhook("v2.example.com", "/v2"),
        webhook("v3.example.com", "/v3"),
      ]);
      await dispatcher().validate(attrs());
      assert.equal(hook.received.length, 3);
      assert.equal(maxInFlight, 3);
    });

    it("reject with the first error to arrive", async () => {
      hook.handler = async (review, path) => {
        if (path.startsWith("/slow")) {
          await sleep(150);
          return deny(review, { message: "slow says no" });
        }
        return deny(review, { message: "fast says no" });
      };
      configure("ValidatingWebhookConfiguration", "v", [
        webhook("slow.example.com", "/slow"),
        webhook("fast.example.com", "/fast"),
      ]);
      const err = await rejection(dispatcher().validate(attrs()));
      assert.equal(
        err.message,
        'admission webhook "fast.example.com" denied the request: fast says no',
      );
    });

    it("see the object they are given and may not patch", async () => {
      hook.handler = (review) => patch(review, [{ op: "add", path: "/spec/x", value: 1 }]);
      configure("ValidatingWebhookConfiguration", "v", [webhook("v.example.com", "/v")]);
      const err = await rejection(dispatcher().validate(attrs()));
      assert.equal(err.code, 500);
      assert.equal(
        err.message,
        'Internal error occurred: failed calling webhook "v.example.com": received invalid webhook response: validating webhook may not return response.patch',
      );
    });
  });

  describe("denials", () => {
    const denied = async (status: Json | undefined): Promise<AdmissionWebhookError> => {
      hook.handler = (review) => deny(review, status);
      configure("ValidatingWebhookConfiguration", "v", [webhook("deny.example.com", "/deny")]);
      return rejection(dispatcher().validate(attrs()));
    };

    it("carry the webhook's code, reason and details with kube's message", async () => {
      const details = {
        name: "k1",
        group: "management.loft.sh",
        kind: "OwnedAccessKey",
        causes: [{ reason: "FieldValueInvalid", message: "bad", field: "spec.ttl" }],
      };
      const err = await denied({
        code: 422,
        reason: "Invalid",
        message: "spec.ttl: Invalid value",
        details,
      });
      assert.equal(err.code, 422);
      assert.equal(err.reason, "Invalid");
      assert.equal(
        err.message,
        'admission webhook "deny.example.com" denied the request: spec.ttl: Invalid value',
      );
      assert.deepEqual(err.details, details);
      const status = err.toStatus();
      assert.equal(status.status, "Failure");
      assert.equal(status.code, 422);
    });

    it("without a message use the reason, else say so", async () => {
      assert.equal(
        (await denied({ reason: "Forbidden", code: 403 })).message,
        'admission webhook "deny.example.com" denied the request: Forbidden',
      );
      const bare = await denied(undefined);
      assert.equal(
        bare.message,
        'admission webhook "deny.example.com" denied the request without explanation',
      );
      assert.equal(bare.code, 400);
    });

    it("never carry a code below 400", async () => {
      assert.equal((await denied({ code: 200, message: "no" })).code, 400);
      assert.equal((await denied({ message: "no" })).code, 400);
      assert.equal((await denied({ code: 409, reason: "Conflict", message: "no" })).code, 409);
    });

    it("from a mutating webhook stop the chain", async () => {
      hook.handler = (review, path) =>
        path.startsWith("/no")
          ? deny(review, { code: 403, reason: "Forbidden", message: "nope" })
          : allow(review);
      configure("MutatingWebhookConfiguration", "m", [
        webhook("no.example.com", "/no"),
        webhook("after.example.com", "/after"),
      ]);
      const err = await rejection(dispatcher().mutate(attrs()));
      assert.equal(err.code, 403);
      assert.equal(err.message, 'admission webhook "no.example.com" denied the request: nope');
      assert.deepEqual(paths(), ["/no"]);
    });
  });

  describe("failurePolicy", () => {
    const unreachable = (name: string, extra: Json = {}): Json => ({
      ...webhook(name, "/x"),
      clientConfig: { url: "https://127.0.0.1:1/x", caBundle: hook.caBundle },
      ...extra,
    });

    it("Fail (the default) turns a failed call into 500 InternalError", async () => {
      configure("ValidatingWebhookConfiguration", "v", [unreachable("down.example.com")]);
      const err = await rejection(dispatcher().validate(attrs()));
      const message =
        'failed calling webhook "down.example.com": failed to call webhook: Post "https://127.0.0.1:1/x?timeout=10s": dial tcp 127.0.0.1:1: connect: connection refused';
      assert.equal(err.code, 500);
      assert.equal(err.reason, "InternalError");
      assert.equal(err.message, `Internal error occurred: ${message}`);
      assert.deepEqual(err.toStatus().details, { causes: [{ message }] });
    });

    it("Ignore skips the webhook and goes on", async () => {
      configure("MutatingWebhookConfiguration", "m", [
        unreachable("down.example.com", { failurePolicy: "Ignore" }),
        webhook("up.example.com", "/up"),
      ]);
      hook.handler = (review) => patch(review, [{ op: "add", path: "/spec/type", value: "User" }]);
      const out = await dispatcher().mutate(attrs());
      assert.equal((out.object!.spec as Json).type, "User");
      configure("ValidatingWebhookConfiguration", "v", [
        unreachable("down.example.com", { failurePolicy: "Ignore" }),
      ]);
      assert.deepEqual(await dispatcher().validate(attrs()), { warnings: [] });
    });

    it("applies to timeouts", async () => {
      hook.handler = () => "hang";
      configure("ValidatingWebhookConfiguration", "v", [
        webhook("slow.example.com", "/slow", { timeoutSeconds: 1 }),
      ]);
      const started = Date.now();
      const err = await rejection(dispatcher({ timeoutMs: 150 }).validate(attrs()));
      assert.ok(Date.now() - started < 3000);
      assert.equal(err.code, 500);
      assert.match(
        err.message,
        /^Internal error occurred: failed calling webhook "slow\.example\.com": failed to call webhook: Post "https:\/\/localhost:\d+\/slow\?timeout=1s": context deadline exceeded$/,
      );
      configure("ValidatingWebhookConfiguration", "v", [
        webhook("slow.example.com", "/slow", { failurePolicy: "Ignore" }),
      ]);
      assert.deepEqual(await dispatcher({ timeoutMs: 150 }).validate(attrs()), { warnings: [] });
    });

    it("does not cover denials", async () => {
      hook.handler = (review) => deny(review, { message: "no" });
      configure("ValidatingWebhookConfiguration", "v", [
        webhook("v.example.com", "/v", { failurePolicy: "Ignore" }),
      ]);
      assert.equal((await rejection(dispatcher().validate(attrs()))).code, 400);
    });

    it("does not cover a missing namespace: 404", async () => {
      const pods = registry.lookup("v1", "Pod")!;
      configure("ValidatingWebhookConfiguration", "v", [
        webhook("v.example.com", "/v", {
          failurePolicy: "Ignore",
          rules: [{ operations: ["*"], apiGroups: [""], apiVersions: ["v1"], resources: ["pods"] }],
          namespaceSelector: { matchLabels: { hooks: "on" } },
        }),
      ]);
      const a = attrs({
        type: pods,
        namespace: "ghost",
        object: { metadata: { name: "p", namespace: "ghost" } },
      });
      const err = await rejection(dispatcher().validate(a));
      assert.equal(err.code, 404);
      assert.equal(err.message, 'namespaces "ghost" not found');
      store.put(registry.lookup("v1", "Namespace")!, {
        metadata: { name: "ghost", labels: { hooks: "on" } },
      });
      await dispatcher().validate(a);
      assert.equal(hook.received.length, 1);
    });
  });

  describe("dry run", () => {
    for (const sideEffects of ["Unknown", "Some"]) {
      it(`rejects it for sideEffects ${sideEffects} with 400, whatever the failurePolicy`, async () => {
        configure("ValidatingWebhookConfiguration", "v", [
          webhook("fx.example.com", "/fx", { sideEffects, failurePolicy: "Ignore" }),
        ]);
        configure("MutatingWebhookConfiguration", "m", [
          webhook("fx.example.com", "/fx", { sideEffects }),
        ]);
        for (const run of [
          (a: AdmissionAttributes) => dispatcher().validate(a),
          (a: AdmissionAttributes) => dispatcher().mutate(a),
        ]) {
          const err = await rejection(run(attrs({ dryRun: true })));
          assert.equal(err.code, 400);
          assert.equal(err.reason, "BadRequest");
          assert.equal(err.message, 'admission webhook "fx.example.com" does not support dry run');
        }
        assert.equal(hook.received.length, 0);
        await dispatcher().validate(attrs());
        assert.equal(hook.received.length, 1, "without dry run the webhook is called");
      });
    }

    for (const sideEffects of ["None", "NoneOnDryRun"]) {
      it(`calls a webhook with sideEffects ${sideEffects}, telling it dryRun`, async () => {
        configure("ValidatingWebhookConfiguration", "v", [
          webhook("ok.example.com", "/ok", { sideEffects }),
        ]);
        await dispatcher().validate(attrs({ dryRun: true }));
        assert.equal(requestOf(hook.received[0]!.review).dryRun, true);
      });
    }

    it("a missing sideEffects is a call failure", async () => {
      const noSideEffects = webhook("nil.example.com", "/nil");
      delete noSideEffects.sideEffects;
      configure("ValidatingWebhookConfiguration", "v", [noSideEffects]);
      const err = await rejection(dispatcher().validate(attrs({ dryRun: true })));
      assert.equal(err.code, 500);
      assert.equal(
        err.message,
        'Internal error occurred: failed calling webhook "nil.example.com": Webhook SideEffects is nil',
      );
    });
  });

  describe("warnings", () => {
    it("are collected in webhook order from mutating and validating webhooks", async () => {
      hook.handler = async (review, path) => {
        const name = path.replace(/\?.*$/, "").slice(1);
        if (name === "v1") await sleep(60);
        return allow(review, { warnings: [`${name} a`, `${name} b`] });
      };
      configure("MutatingWebhookConfiguration", "m", [
        webhook("m1.example.com", "/m1"),
        webhook("m2.example.com", "/m2"),
      ]);
      configure("ValidatingWebhookConfiguration", "v", [
        webhook("v1.example.com", "/v1"),
        webhook("v2.example.com", "/v2"),
      ]);
      const d = dispatcher();
      assert.deepEqual((await d.mutate(attrs())).warnings, ["m1 a", "m1 b", "m2 a", "m2 b"]);
      assert.deepEqual((await d.validate(attrs())).warnings, ["v1 a", "v1 b", "v2 a", "v2 b"]);
    });

    it("come with a rejection, including the denying webhook's", async () => {
      hook.handler = (review, path) =>
        path.startsWith("/no")
          ? deny(review, { message: "no" }, { warnings: ["from no"] })
          : allow(review, { warnings: ["from ok"] });
      configure("MutatingWebhookConfiguration", "m", [
        webhook("ok.example.com", "/ok"),
        webhook("no.example.com", "/no"),
      ]);
      const err = await rejection(dispatcher().mutate(attrs()));
      assert.deepEqual(err.warnings, ["from ok", "from no"]);
    });
  });
});
