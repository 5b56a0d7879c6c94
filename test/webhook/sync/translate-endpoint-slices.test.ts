import assert from "node:assert/strict";
import { describe, it } from "mocha";
import { hostName } from "../../../webhook/src/patches/host-names.js";
import type { JsonObject } from "../../../webhook/src/patches/types.js";
import {
  hostSliceKey,
  SERVICE_NAME_LABEL,
  SLICE_MANAGED_BY_LABEL,
  sliceControlledElsewhere,
  translateEndpointSliceToHost,
  VGATE_SLICE_MANAGER,
  virtualSliceKeyFromHost,
} from "../../../webhook/src/sync/translate-endpoint-slices.js";

const vc = { name: "vc", namespace: "vcluster-vc", config: {} };

/** A virtual slice as the virtual cluster's EndpointSlice mirroring controller writes it. */
function virtualSlice(service = "db", namespace = "team"): JsonObject {
  return {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: {
      name: `${service}-7x2kq`,
      generateName: `${service}-`,
      namespace,
      uid: "0b7c0d0e-0000-4000-8000-000000000009",
      resourceVersion: "812",
      generation: 1,
      creationTimestamp: "2026-11-28T10:00:00Z",
      labels: {
        [SERVICE_NAME_LABEL]: service,
        [SLICE_MANAGED_BY_LABEL]: "endpointslicemirroring-controller.k8s.io",
        app: "db",
      },
      annotations: { "example.com/owner": "team-a" },
      ownerReferences: [
        { apiVersion: "v1", kind: "Endpoints", name: service, uid: "u-ep", controller: true },
      ],
    },
    addressType: "IPv4",
    endpoints: [
      {
        addresses: ["10.0.0.5"],
        conditions: { ready: true },
        hostname: "db-0",
        nodeName: "node-1",
        zone: "z1",
        targetRef: { kind: "Pod", name: "db-0", namespace, uid: "u-pod", resourceVersion: "7" },
      },
      { addresses: ["10.0.0.6"], conditions: { ready: false } },
    ],
    ports: [{ name: "pg", port: 5432, protocol: "TCP" }],
  };
}

describe("sync: EndpointSlice translation (vCluster's EndpointSlice syncer)", () => {
  it("names the copy name-x-namespace-x-vc in the vCluster's namespace, with slice bookkeeping", () => {
    const host = translateEndpointSliceToHost(virtualSlice(), vc, { owner: { uid: "u-vc-svc" } });
    const meta = host["metadata"] as JsonObject;
    assert.equal(meta["name"], "db-7x2kq-x-team-x-vc");
    assert.equal(meta["namespace"], "vcluster-vc");
    for (const gone of [
      "uid",
      "resourceVersion",
      "generation",
      "creationTimestamp",
      "generateName",
    ])
      assert.equal(Object.hasOwn(meta, gone), false, gone);
    assert.deepEqual(meta["annotations"], {
      "example.com/owner": "team-a",
      "vcluster.loft.sh/managed-annotations": "example.com/owner",
      "vcluster.loft.sh/object-name": "db-7x2kq",
      "vcluster.loft.sh/object-namespace": "team",
      "vcluster.loft.sh/object-uid": "0b7c0d0e-0000-4000-8000-000000000009",
      "vcluster.loft.sh/object-kind": "discovery.k8s.io/v1, Kind=EndpointSlice",
      "vcluster.loft.sh/object-host-name": "db-7x2kq-x-team-x-vc",
      "vcluster.loft.sh/object-host-namespace": "vcluster-vc",
    });
    // The virtual slice has a controller owner (its Endpoints): vCluster's Service is a controller.
    assert.deepEqual(meta["ownerReferences"], [
      { apiVersion: "v1", kind: "Service", name: "vc", uid: "u-vc-svc", controller: true },
    ]);
  });

  it("points kubernetes.io/service-name at the host Service and names vgate sync as manager", () => {
    const host = translateEndpointSliceToHost(virtualSlice(), vc);
    assert.deepEqual((host["metadata"] as JsonObject)["labels"], {
      [SERVICE_NAME_LABEL]: "db-x-team-x-vc",
      [SLICE_MANAGED_BY_LABEL]: VGATE_SLICE_MANAGER,
      app: "db",
      "vcluster.loft.sh/managed-by": "vc",
      "vcluster.loft.sh/namespace": "team",
    });
  });

  it("uses the host Service's hashed name for a long Service name, where vCluster concatenates", () => {
    const service = "s".repeat(60);
    const host = translateEndpointSliceToHost(virtualSlice(service), vc);
    const label = ((host["metadata"] as JsonObject)["labels"] as JsonObject)[SERVICE_NAME_LABEL];
    assert.equal(label, hostName(service, "team", "vc"));
    assert.ok(String(label).length <= 63);
    assert.notEqual(label, `${service}-x-team-x-vc`);
  });

  it("uses the mapped namespace's own Service name in multi-namespace mode", () => {
    const multi = { ...vc, namespaceMappings: { team: "host-team" } };
    const host = translateEndpointSliceToHost(virtualSlice(), multi);
    const meta = host["metadata"] as JsonObject;
    assert.equal(meta["namespace"], "host-team");
    assert.equal(meta["name"], "db-7x2kq");
    assert.equal((meta["labels"] as JsonObject)[SERVICE_NAME_LABEL], "db");
  });

  it("translates Pod targetRefs only, keeping uid, zone, conditions and addresses", () => {
    const host = translateEndpointSliceToHost(virtualSlice(), vc);
    assert.deepEqual(host["endpoints"], [
      {
        addresses: ["10.0.0.5"],
        conditions: { ready: true },
        hostname: "db-0",
        nodeName: "node-1",
        zone: "z1",
        targetRef: {
          kind: "Pod",
          name: "db-0-x-team-x-vc",
          namespace: "vcluster-vc",
          uid: "u-pod",
          resourceVersion: "7",
        },
      },
      { addresses: ["10.0.0.6"], conditions: { ready: false } },
    ]);
    assert.equal(host["addressType"], "IPv4");
    assert.deepEqual(host["ports"], [{ name: "pg", port: 5432, protocol: "TCP" }]);
  });

  it("does not modify its input", () => {
    const input = virtualSlice();
    const before = structuredClone(input);
    translateEndpointSliceToHost(input, vc);
    assert.deepEqual(input, before);
  });

  it("maps a host copy back to its virtual slice, and nothing else", () => {
    const host = translateEndpointSliceToHost(virtualSlice(), vc);
    assert.deepEqual(virtualSliceKeyFromHost(host, vc), { namespace: "team", name: "db-7x2kq" });
    assert.deepEqual(hostSliceKey({ namespace: "team", name: "db-7x2kq" }, vc), {
      namespace: "vcluster-vc",
      name: "db-7x2kq-x-team-x-vc",
    });
    const other = structuredClone(host);
    ((other["metadata"] as JsonObject)["labels"] as JsonObject)["vcluster.loft.sh/managed-by"] =
      "other";
    assert.equal(virtualSliceKeyFromHost(other, vc), null);
    const endpointsKind = structuredClone(host);
    ((endpointsKind["metadata"] as JsonObject)["annotations"] as JsonObject)[
      "vcluster.loft.sh/object-kind"
    ] = "/v1, Kind=Endpoints";
    assert.equal(virtualSliceKeyFromHost(endpointsKind, vc), null);
    const renamed = structuredClone(host);
    (renamed["metadata"] as JsonObject)["name"] = "elsewhere";
    assert.equal(virtualSliceKeyFromHost(renamed, vc), null);
  });

  it("leaves slices controlled by another syncer alone, as vCluster's excludeVirtual does", () => {
    const slice = virtualSlice();
    assert.equal(sliceControlledElsewhere(slice), null);
    (slice["metadata"] as JsonObject)["annotations"] = {
      "vcluster.loft.sh/controlled-by": "endpointslice",
    };
    assert.equal(sliceControlledElsewhere(slice), null);
    (slice["metadata"] as JsonObject)["annotations"] = {
      "vcluster.loft.sh/controlled-by": "endpoints",
    };
    assert.match(String(sliceControlledElsewhere(slice)), /annotated/);
  });
});
