// The objects behind rewritten references: the host copy of a referenced virtual object, the
// virtual import of a referenced host object, and how host objects resolve back to virtual names.

import assert from "node:assert/strict";
import { describe, it } from "mocha";
import type { ResolvedReference } from "../../../../webhook/src/patches/reference.js";
import { resolverFromObjects } from "../../../../webhook/src/patches/reference-resolver.js";
import type { JsonObject } from "../../../../webhook/src/patches/types.js";
import {
  copyReferencesToHost,
  gvkString,
  hostCopyOf,
  referenceKinds,
  resolvableHostObjects,
  uniqueReferences,
  virtualImportOf,
} from "../../../../webhook/src/sync/controller/references.js";
import { vclusterFor } from "./reconcile-fixtures.js";

const reference: ResolvedReference = {
  patchIndex: 2,
  direction: "toHost",
  apiVersion: "v1",
  kind: "Secret",
  virtual: { namespace: "team", name: "db-cred" },
  host: { namespace: "vc-ns", name: "v5ri45ovgqam9c" },
};

/** A Secret as the API server returns it, with everything that belongs to it alone. */
const secret: JsonObject = {
  apiVersion: "v1",
  kind: "Secret",
  metadata: {
    name: "db-cred",
    namespace: "team",
    uid: "s-uid",
    resourceVersion: "42",
    generation: 1,
    creationTimestamp: "2026-11-01T10:00:00Z",
    ownerReferences: [{ apiVersion: "v1", kind: "ConfigMap", name: "o", uid: "o-uid" }],
    finalizers: ["example.com/keep"],
    managedFields: [{ manager: "kubectl" }],
    annotations: { note: "n", "vcluster.loft.sh/object-name": "forged" },
    labels: { app: "db", release: "r1" },
  },
  type: "Opaque",
  data: { password: "c2VjcmV0" },
};

describe("sync/controller/references", () => {
  it("gvkString is Go's GroupVersionKind.String()", () => {
    assert.equal(gvkString("v1", "Secret"), "/v1, Kind=Secret");
    assert.equal(gvkString("apps/v1", "Deployment"), "apps/v1, Kind=Deployment");
  });

  it("the host copy: reset metadata, the translated name, vCluster-style bookkeeping, data kept", () => {
    const copy = hostCopyOf(secret, reference, { name: "vc", namespace: "vc-ns" });
    assert.deepEqual(copy, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: "v5ri45ovgqam9c",
        namespace: "vc-ns",
        annotations: {
          note: "n",
          "vcluster.loft.sh/managed-annotations": "note",
          "vcluster.loft.sh/object-name": "db-cred",
          "vcluster.loft.sh/object-namespace": "team",
          "vcluster.loft.sh/object-uid": "s-uid",
          // The source's resourceVersion: a later change of the source is told from it.
          "vgate.loft.sh/source-resource-version": "42",
          "vcluster.loft.sh/object-kind": "/v1, Kind=Secret",
          "vcluster.loft.sh/object-host-name": "v5ri45ovgqam9c",
          "vcluster.loft.sh/object-host-namespace": "vc-ns",
        },
        labels: {
          app: "db",
          "vcluster.loft.sh/label-vc-x-a4d451ec23": "r1",
          "vcluster.loft.sh/managed-by": "vc",
          "vcluster.loft.sh/namespace": "team",
        },
      },
      type: "Opaque",
      data: { password: "c2VjcmV0" },
    });
    assert.equal((secret.metadata as JsonObject).uid, "s-uid", "the source is not modified");
  });

  it("the virtual import: object-imported, and object-name/namespace pointing back at the host object", () => {
    const hostObject: JsonObject = {
      ...secret,
      metadata: { ...(secret.metadata as JsonObject), name: "host-made", namespace: "vc-ns" },
      status: { ignored: true },
    };
    const imported = virtualImportOf(hostObject, {
      ...reference,
      direction: "toVirtual",
      virtual: { namespace: "team", name: "host-made" },
      host: { namespace: "vc-ns", name: "host-made" },
    });
    assert.deepEqual(imported, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: "host-made",
        namespace: "team",
        annotations: {
          note: "n",
          "vcluster.loft.sh/object-imported": "true",
          "vcluster.loft.sh/object-name": "host-made",
          "vcluster.loft.sh/object-namespace": "vc-ns",
        },
        labels: { app: "db", release: "r1" },
      },
      type: "Opaque",
      data: { password: "c2VjcmV0" },
    });
  });

  it("a copy carries data, not credentials: built from an allow-list, both ways (EPS-21)", () => {
    // What a tenant would add to a Secret to have the host's controllers fill or keep it.
    const loaded: JsonObject = {
      ...secret,
      metadata: {
        ...(secret.metadata as JsonObject),
        annotations: {
          note: "n",
          "kubernetes.io/service-account.name": "vc-my-vcluster",
          "kubernetes.io/service-account.uid": "sa-uid",
          "kubectl.kubernetes.io/last-applied-configuration": "{}",
          "example.k8s.io/anything": "x",
          "notkubernetes.io/kept": "y",
        },
      },
      status: { phase: "x" },
      stringData: { token: "planted" },
      spec: { anything: true },
      immutable: true,
    };
    const scope = { name: "vc", namespace: "vc-ns" };
    const copy = hostCopyOf(loaded, reference, scope);
    const imported = virtualImportOf(loaded, { ...reference, direction: "toVirtual" });
    for (const out of [copy, imported]) {
      assert.deepEqual(Object.keys(out).sort(), [
        "apiVersion",
        "data",
        "immutable",
        "kind",
        "metadata",
        "type",
      ]);
      const meta = out.metadata as JsonObject;
      assert.deepEqual(Object.keys(meta).sort(), ["annotations", "labels", "name", "namespace"]);
      const annotations = Object.keys(meta.annotations as JsonObject);
      assert.ok(annotations.includes("note") && annotations.includes("notkubernetes.io/kept"));
      for (const key of annotations) {
        assert.doesNotMatch(key, /(^|\.)(kubernetes\.io|k8s\.io)\//, `${key} is not copied`);
      }
    }
    const managed = (copy.metadata as JsonObject).annotations as Record<string, string>;
    assert.equal(managed["vcluster.loft.sh/managed-annotations"], "note\nnotkubernetes.io/kept");
    // A ConfigMap keeps its own data fields; a kind vgate has no list for keeps all but status.
    const configMap = hostCopyOf(
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: {},
        data: { a: "1" },
        binaryData: { b: "Ag==" },
        status: {},
      },
      { ...reference, kind: "ConfigMap" },
      scope,
    );
    assert.deepEqual(configMap.data, { a: "1" });
    assert.deepEqual(configMap.binaryData, { b: "Ag==" });
    const custom = hostCopyOf(
      {
        apiVersion: "example.com/v1",
        kind: "Widget",
        metadata: { ownerReferences: [], finalizers: ["f"] },
        spec: { size: 1 },
        status: { ready: true },
      },
      { ...reference, apiVersion: "example.com/v1", kind: "Widget" },
      scope,
    );
    assert.deepEqual(custom.spec, { size: 1 });
    assert.equal(custom.status, undefined);
    assert.deepEqual(Object.keys(custom.metadata as JsonObject).sort(), [
      "annotations",
      "labels",
      "name",
      "namespace",
    ]);
  });

  it("referenceKinds: the static kinds of the config's reference patches, once each", () => {
    const vc = vclusterFor([
      { path: "a", reference: { apiVersion: "v1", kind: "Secret" } },
      { path: "b", reference: { apiVersion: "v1", kind: "Secret", namePath: "name" } },
      { path: "c", reference: { apiVersion: "v1", kind: "ConfigMap" } },
      { path: "d", expression: "value" },
    ]);
    assert.deepEqual(referenceKinds(vc), [
      { apiVersion: "v1", kind: "Secret" },
      { apiVersion: "v1", kind: "ConfigMap" },
    ]);
    assert.deepEqual(referenceKinds({ name: "vc", namespace: "vc-ns", config: null }), []);
  });

  it("host objects resolve: a copy by its bookkeeping, any other under its own name in the referencing namespace (or the mapped one)", () => {
    const copy = {
      kind: "Secret",
      metadata: {
        name: "v5ri45ovgqam9c",
        namespace: "vc-ns",
        annotations: {
          "vcluster.loft.sh/object-name": "db-cred",
          "vcluster.loft.sh/object-namespace": "team",
        },
      },
    };
    const other = { kind: "Secret", metadata: { name: "host-made", namespace: "vc-ns" } };
    const mappedOther = { kind: "Secret", metadata: { name: "x", namespace: "host-b" } };
    const vc = { name: "vc", namespace: "vc-ns", config: {}, namespaceMappings: { b: "host-b" } };
    const resolver = resolverFromObjects(
      resolvableHostObjects([copy, other, mappedOther], "team", vc),
    );
    const ref = { apiVersion: "v1", kind: "Secret" };
    assert.deepEqual(resolver.hostToVirtual(ref, "vc-ns", "v5ri45ovgqam9c"), {
      namespace: "team",
      name: "db-cred",
    });
    assert.deepEqual(resolver.hostToVirtual(ref, "vc-ns", "host-made"), {
      namespace: "team",
      name: "host-made",
    });
    assert.deepEqual(resolver.hostToVirtual(ref, "host-b", "x"), { namespace: "b", name: "x" });
    assert.equal(resolver.hostToVirtual(ref, "vc-ns", "unknown"), null);
    assert.equal(resolver.hostToVirtual({ ...ref, kind: "ConfigMap" }, "vc-ns", "host-made"), null);
  });

  it("one ensure per referenced object; a missing one is a warning", async () => {
    assert.equal(uniqueReferences([reference, { ...reference, patchIndex: 3 }]).length, 1);
    const gets: string[] = [];
    const deps = {
      get: (_side: "virtual" | "host", r: { namespace: string; name: string }) => {
        gets.push(`${r.namespace}/${r.name}`);
        return Promise.resolve(r.name === "db-cred" ? secret : null);
      },
    };
    const missing = {
      ...reference,
      virtual: { namespace: "team", name: "nope" },
      host: { namespace: "vc-ns", name: "vxyz" },
    };
    const out = await copyReferencesToHost([reference, reference, missing], deps, {
      name: "vc",
      namespace: "vc-ns",
    });
    assert.deepEqual(gets, ["team/db-cred", "team/nope"]);
    assert.deepEqual(
      out.actions.map((a) => `${a.type} ${a.side}`),
      ["ensure host"],
    );
    assert.deepEqual(out.warnings, [
      "Secret team/nope (patches[2]) is referenced but does not exist in the virtual cluster; the host reference vc-ns/vxyz points at nothing until it does",
    ]);
  });
});
