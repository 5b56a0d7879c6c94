import assert from "node:assert/strict";
import { describe, it } from "mocha";
import type { JsonObject } from "../../../webhook/src/patches/types.js";
import {
  BOOKKEEPING_ANNOTATIONS,
  controlledElsewhere,
  isSyncedHostEndpoints,
  ownerServiceFor,
  rebuildVirtualFromHost,
  translateEndpointsToHost,
  virtualRefFromHost,
} from "../../../webhook/src/sync/translate-endpoints.js";

const vc = { name: "my-vcluster", namespace: "vcluster-my-vcluster", config: {} };

/** A realistic virtual Endpoints, shaped like core.v1.Endpoints.json in the wire fixtures. */
function virtualEndpoints(): JsonObject {
  return {
    kind: "Endpoints",
    apiVersion: "v1",
    metadata: {
      name: "db",
      generateName: "db-",
      namespace: "default",
      selfLink: "/api/v1/namespaces/default/endpoints/db",
      uid: "6f1c2a3e-0000-4000-8000-000000000001",
      resourceVersion: "4711",
      generation: 3,
      creationTimestamp: "2024-05-01T10:00:00Z",
      deletionTimestamp: "2024-06-01T10:00:00Z",
      deletionGracePeriodSeconds: 30,
      labels: { app: "db", release: "r1" },
      annotations: {
        "example.com/owner": "team-a",
        "control-plane.alpha.kubernetes.io/leader": '{"holderIdentity":"x"}',
        "vcluster.loft.sh/object-name": "spoofed",
        "a.example.com/first": "1",
      },
      ownerReferences: [
        { apiVersion: "v1", kind: "Service", name: "db", uid: "u-svc", controller: true },
      ],
      finalizers: ["example.com/keep"],
      managedFields: [
        {
          manager: "kubectl",
          operation: "Update",
          apiVersion: "v1",
          fieldsType: "FieldsV1",
          fieldsV1: {},
        },
      ],
    },
    subsets: [
      {
        addresses: [
          {
            ip: "10.0.0.5",
            hostname: "db-0",
            nodeName: "node-1",
            targetRef: {
              kind: "Pod",
              namespace: "default",
              name: "db-0",
              uid: "u-pod-0",
              apiVersion: "v1",
              resourceVersion: "99",
            },
          },
          { ip: "10.0.0.9", targetRef: { kind: "Node", name: "node-1", uid: "u-node" } },
        ],
        notReadyAddresses: [
          {
            ip: "10.0.0.6",
            targetRef: {
              kind: "Pod",
              namespace: "default",
              name: "db-1",
              uid: "u-pod-1",
              fieldPath: "spec",
            },
          },
        ],
        ports: [{ name: "pg", port: 5432, protocol: "TCP" }],
      },
    ],
  };
}

const HOST_NAME = "db-x-default-x-my-vcluster";
const RELEASE_KEY = "vcluster.loft.sh/label-my-vcluster-x-a4d451ec23";

function expectedHost(): JsonObject {
  return {
    kind: "Endpoints",
    apiVersion: "v1",
    metadata: {
      name: HOST_NAME,
      namespace: "vcluster-my-vcluster",
      labels: {
        app: "db",
        [RELEASE_KEY]: "r1",
        "vcluster.loft.sh/managed-by": "my-vcluster",
        "vcluster.loft.sh/namespace": "default",
      },
      annotations: {
        "example.com/owner": "team-a",
        "a.example.com/first": "1",
        "vcluster.loft.sh/managed-annotations": "a.example.com/first\nexample.com/owner",
        "vcluster.loft.sh/object-name": "db",
        "vcluster.loft.sh/object-namespace": "default",
        "vcluster.loft.sh/object-uid": "6f1c2a3e-0000-4000-8000-000000000001",
        "vcluster.loft.sh/object-kind": "/v1, Kind=Endpoints",
        "vcluster.loft.sh/object-host-name": HOST_NAME,
        "vcluster.loft.sh/object-host-namespace": "vcluster-my-vcluster",
      },
    },
    subsets: [
      {
        addresses: [
          {
            ip: "10.0.0.5",
            hostname: "db-0",
            nodeName: "node-1",
            targetRef: {
              kind: "Pod",
              namespace: "vcluster-my-vcluster",
              name: "db-0-x-default-x-my-vcluster",
              apiVersion: "v1",
            },
          },
          { ip: "10.0.0.9", targetRef: { kind: "Node", name: "node-1", uid: "u-node" } },
        ],
        notReadyAddresses: [
          {
            ip: "10.0.0.6",
            targetRef: {
              kind: "Pod",
              namespace: "vcluster-my-vcluster",
              name: "db-1-x-default-x-my-vcluster",
              fieldPath: "spec",
            },
          },
        ],
        ports: [{ name: "pg", port: 5432, protocol: "TCP" }],
      },
    ],
  };
}

describe("sync/translate-endpoints", () => {
  describe("translateEndpointsToHost (docs/reference.md#endpoints-syncer-create)", () => {
    it("single-namespace mode: the exact host object", () => {
      assert.deepEqual(translateEndpointsToHost(virtualEndpoints(), vc), expectedHost());
    });

    it("does not modify its input", () => {
      const input = virtualEndpoints();
      translateEndpointsToHost(input, vc);
      assert.deepEqual(input, virtualEndpoints());
    });

    it("uses targetNamespace when it differs from the vCluster namespace", () => {
      const host = translateEndpointsToHost(virtualEndpoints(), {
        ...vc,
        targetNamespace: "tenants",
      });
      const meta = host["metadata"] as JsonObject;
      assert.equal(meta["namespace"], "tenants");
      assert.equal(
        (meta["annotations"] as JsonObject)[BOOKKEEPING_ANNOTATIONS.hostNamespace],
        "tenants",
      );
    });

    it("multi-namespace mode: same name in the mapped namespace, Pods too", () => {
      const host = translateEndpointsToHost(virtualEndpoints(), {
        ...vc,
        namespaceMappings: { "*": "h-*" },
      });
      const meta = host["metadata"] as JsonObject;
      assert.equal(meta["name"], "db");
      assert.equal(meta["namespace"], "h-default");
      const ann = meta["annotations"] as JsonObject;
      assert.equal(ann[BOOKKEEPING_ANNOTATIONS.hostName], "db");
      assert.equal(ann[BOOKKEEPING_ANNOTATIONS.hostNamespace], "h-default");
      const subset = (host["subsets"] as JsonObject[])[0]!;
      const ref = (subset["addresses"] as JsonObject[])[0]!["targetRef"] as JsonObject;
      assert.deepEqual(ref, {
        kind: "Pod",
        namespace: "h-default",
        name: "db-0",
        apiVersion: "v1",
      });
    });

    it("an unmapped namespace falls back to single-namespace naming", () => {
      const host = translateEndpointsToHost(virtualEndpoints(), {
        ...vc,
        namespaceMappings: { other: "h-other" },
      });
      assert.equal((host["metadata"] as JsonObject)["name"], HOST_NAME);
    });

    it("hashes long names and omits managed-annotations when nothing is copied", () => {
      const name = "legacy-database-primary-endpoint-for-reporting-east.internal";
      const host = translateEndpointsToHost(
        { kind: "Endpoints", apiVersion: "v1", metadata: { name, namespace: "default" } },
        vc,
      );
      assert.deepEqual(host, {
        kind: "Endpoints",
        apiVersion: "v1",
        metadata: {
          name: "legacy-database-primary-endpoint-for-reporting-east-aa187a42eb",
          namespace: "vcluster-my-vcluster",
          labels: {
            "vcluster.loft.sh/managed-by": "my-vcluster",
            "vcluster.loft.sh/namespace": "default",
          },
          annotations: {
            "vcluster.loft.sh/object-name": name,
            "vcluster.loft.sh/object-namespace": "default",
            "vcluster.loft.sh/object-uid": "",
            "vcluster.loft.sh/object-kind": "/v1, Kind=Endpoints",
            "vcluster.loft.sh/object-host-name":
              "legacy-database-primary-endpoint-for-reporting-east-aa187a42eb",
            "vcluster.loft.sh/object-host-namespace": "vcluster-my-vcluster",
          },
        },
      });
    });

    // The differences test/cluster/vcluster-translation.test.ts found against vCluster v0.34.0's
    // own syncer; each test below is one of them.
    it("keeps the virtual object's managed-labels annotation, without listing it", () => {
      const v: JsonObject = {
        metadata: {
          name: "db",
          namespace: "default",
          annotations: {
            [BOOKKEEPING_ANNOTATIONS.managedLabels]: "x\ny",
            [BOOKKEEPING_ANNOTATIONS.managedAnnotations]: "spoofed",
            "vcluster.loft.sh/other": "o",
          },
        },
      };
      const ann = (translateEndpointsToHost(v, vc)["metadata"] as JsonObject)[
        "annotations"
      ] as JsonObject;
      assert.equal(ann[BOOKKEEPING_ANNOTATIONS.managedLabels], "x\ny");
      assert.equal(ann[BOOKKEEPING_ANNOTATIONS.managedAnnotations], "vcluster.loft.sh/other");
    });

    it("a Pod targetRef without a namespace keeps none; one without a name loses both", () => {
      const v: JsonObject = {
        metadata: { name: "db", namespace: "ns-a" },
        subsets: [
          {
            addresses: [
              { ip: "10.9.0.2", targetRef: { kind: "Pod", namespace: "ns-a", uid: "u" } },
              { ip: "10.9.0.3", targetRef: { kind: "Pod", name: "nons", resourceVersion: "4" } },
            ],
          },
        ],
      };
      const subset = (translateEndpointsToHost(v, vc)["subsets"] as JsonObject[])[0]!;
      assert.deepEqual(subset["addresses"], [
        { ip: "10.9.0.2", targetRef: { kind: "Pod" } },
        { ip: "10.9.0.3", targetRef: { kind: "Pod", name: "nons-x--x-my-vcluster" } },
      ]);
    });

    it("names vCluster's Service as owner, a controller when the virtual object has one", () => {
      const owner = { uid: "80b1eb85-6bb8-46d6-bd20-efe54741c2be" };
      const ownerRef = (controller: boolean) => [
        { apiVersion: "v1", kind: "Service", name: "my-vcluster", uid: owner.uid, controller },
      ];
      const refsOf = (host: JsonObject) => (host["metadata"] as JsonObject)["ownerReferences"];
      // virtualEndpoints() has a controller owner reference.
      assert.deepEqual(
        refsOf(translateEndpointsToHost(virtualEndpoints(), vc, { owner })),
        ownerRef(true),
      );
      const plain: JsonObject = { metadata: { name: "db", namespace: "default" } };
      assert.deepEqual(refsOf(translateEndpointsToHost(plain, vc, { owner })), ownerRef(false));
      // Without the Service's uid, with setOwner false, in multi-namespace mode, or outside the
      // Service's namespace: none.
      assert.equal(refsOf(translateEndpointsToHost(plain, vc)), undefined);
      const noOwner = { ...vc, config: { experimental: { syncSettings: { setOwner: false } } } };
      assert.equal(refsOf(translateEndpointsToHost(plain, noOwner, { owner })), undefined);
      const multi = { ...vc, config: { sync: { toHost: { namespaces: { enabled: true } } } } };
      assert.equal(refsOf(translateEndpointsToHost(plain, multi, { owner })), undefined);
      const elsewhere = { ...vc, targetNamespace: "tenants" };
      assert.equal(refsOf(translateEndpointsToHost(plain, elsewhere, { owner })), undefined);
    });

    it("ownerServiceFor: the vCluster's Service unless setOwner is false or namespaces are synced", () => {
      assert.deepEqual(ownerServiceFor(vc), {
        namespace: "vcluster-my-vcluster",
        name: "my-vcluster",
      });
      const on = { ...vc, config: { experimental: { syncSettings: { setOwner: true } } } };
      assert.deepEqual(ownerServiceFor(on), {
        namespace: "vcluster-my-vcluster",
        name: "my-vcluster",
      });
      const off = { ...vc, config: { experimental: { syncSettings: { setOwner: false } } } };
      assert.equal(ownerServiceFor(off), null);
      const multi = { ...vc, config: { sync: { toHost: { namespaces: { enabled: true } } } } };
      assert.equal(ownerServiceFor(multi), null);
    });

    it("controlledElsewhere: a controlled-by label, or an annotation naming another syncer", () => {
      const withMeta = (meta: JsonObject): JsonObject => ({ metadata: { name: "db", ...meta } });
      const key = "vcluster.loft.sh/controlled-by";
      assert.equal(controlledElsewhere(virtualEndpoints()), null);
      assert.match(controlledElsewhere(withMeta({ labels: { [key]: "c" } }))!, /labelled/);
      assert.equal(controlledElsewhere(withMeta({ labels: { [key]: "" } })), null);
      assert.match(
        controlledElsewhere(withMeta({ annotations: { [key]: "other" } }))!,
        /annotated/,
      );
      assert.equal(controlledElsewhere(withMeta({ annotations: { [key]: "endpoints" } })), null);
      assert.equal(controlledElsewhere(withMeta({ annotations: { [key]: "" } })), null);
    });

    it("survives wrong types without crashing", () => {
      const odd = {
        metadata: { name: "x", namespace: 5, labels: ["a"], annotations: { ok: "1", bad: 2 } },
        subsets: [null, { addresses: "no" }, { addresses: [null, { targetRef: "Pod" }] }],
      } as unknown as JsonObject;
      const host = translateEndpointsToHost(odd, vc);
      const meta = host["metadata"] as JsonObject;
      assert.equal(meta["name"], "x-x-default-x-my-vcluster");
      assert.equal(
        (meta["annotations"] as JsonObject)["vcluster.loft.sh/managed-annotations"],
        "ok",
      );
      assert.ok(!Object.hasOwn(meta["annotations"] as JsonObject, "bad"));
      assert.deepEqual(host["subsets"], odd["subsets"]);
    });
  });

  describe("host bookkeeping", () => {
    it("isSyncedHostEndpoints needs both object-name and managed-by", () => {
      const host = translateEndpointsToHost(virtualEndpoints(), vc);
      assert.equal(isSyncedHostEndpoints(host), true);
      const noLabel = structuredClone(host);
      delete ((noLabel["metadata"] as JsonObject)["labels"] as JsonObject)[
        "vcluster.loft.sh/managed-by"
      ];
      assert.equal(isSyncedHostEndpoints(noLabel), false);
      const noName = structuredClone(host);
      delete ((noName["metadata"] as JsonObject)["annotations"] as JsonObject)[
        "vcluster.loft.sh/object-name"
      ];
      assert.equal(isSyncedHostEndpoints(noName), false);
      assert.equal(isSyncedHostEndpoints({ metadata: null }), false);
    });

    it("virtualRefFromHost reads name, namespace and uid", () => {
      const host = translateEndpointsToHost(virtualEndpoints(), vc);
      assert.deepEqual(virtualRefFromHost(host), {
        name: "db",
        namespace: "default",
        uid: "6f1c2a3e-0000-4000-8000-000000000001",
      });
      const noUid = translateEndpointsToHost({ metadata: { name: "a", namespace: "n" } }, vc);
      assert.deepEqual(virtualRefFromHost(noUid), { name: "a", namespace: "n" });
      assert.equal(virtualRefFromHost({ metadata: { name: "plain" } }), null);
    });

    it("rebuildVirtualFromHost reverses the translation as far as bookkeeping tells", () => {
      const host = translateEndpointsToHost(virtualEndpoints(), vc);
      ((host["metadata"] as JsonObject)["annotations"] as JsonObject)["host-only"] = "x";
      ((host["metadata"] as JsonObject)["labels"] as JsonObject)["host-label"] = "y";
      assert.deepEqual(rebuildVirtualFromHost(host), {
        kind: "Endpoints",
        apiVersion: "v1",
        metadata: {
          name: "db",
          namespace: "default",
          uid: "6f1c2a3e-0000-4000-8000-000000000001",
          annotations: { "example.com/owner": "team-a", "a.example.com/first": "1" },
          // Host values win for ordinary keys (VirtualLabelsMap), so host-label shows up.
          labels: { app: "db", release: "r1", "host-label": "y" },
        },
        subsets: [
          {
            addresses: [
              {
                ip: "10.0.0.5",
                hostname: "db-0",
                nodeName: "node-1",
                targetRef: { kind: "Pod", namespace: "default", name: "db-0", apiVersion: "v1" },
              },
              { ip: "10.0.0.9", targetRef: { kind: "Node", name: "node-1", uid: "u-node" } },
            ],
            notReadyAddresses: [
              {
                ip: "10.0.0.6",
                targetRef: { kind: "Pod", namespace: "default", name: "db-1", fieldPath: "spec" },
              },
            ],
            ports: [{ name: "pg", port: 5432, protocol: "TCP" }],
          },
        ],
      });
    });

    it("leaves hashed Pod names alone and reverses multi-namespace refs", () => {
      const longPod = "p".repeat(60);
      const v: JsonObject = {
        metadata: { name: "db", namespace: "default" },
        subsets: [
          {
            addresses: [
              { ip: "1.1.1.1", targetRef: { kind: "Pod", namespace: "default", name: longPod } },
            ],
          },
        ],
      };
      const single = rebuildVirtualFromHost(translateEndpointsToHost(v, vc));
      const ref = (single["subsets"] as JsonObject[])[0]!["addresses"] as JsonObject[];
      assert.equal((ref[0]!["targetRef"] as JsonObject)["namespace"], "vcluster-my-vcluster");
      const multi = rebuildVirtualFromHost(
        translateEndpointsToHost(v, { ...vc, namespaceMappings: { default: "h" } }),
      );
      const mref = (multi["subsets"] as JsonObject[])[0]!["addresses"] as JsonObject[];
      assert.deepEqual(mref[0]!["targetRef"], { kind: "Pod", namespace: "default", name: longPod });
    });
  });
});
