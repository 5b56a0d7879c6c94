// The Endpoints view of an EndpointSlice (EPS-28). The oracle is the EndpointSlice mirroring
// controller's mapping, written here from kube's pkg/controller/endpointslicemirroring
// (addressToEndpoint): patching a mirrored slice through its view must give the slice the
// controller mirrors from the patched Endpoints, or the two rewrite the host slice for ever.

import assert from "node:assert/strict";
import fc from "fast-check";
import type { Json, JsonObject } from "../../../webhook/src/patches/types.js";
import {
  applyEndpointsView,
  endpointsView,
  keepStoredOrder,
  SliceViewError,
} from "../../../webhook/src/sync/endpoint-slice-view.js";

interface Address {
  ip: string;
  hostname?: string;
  nodeName?: string;
  targetRef?: JsonObject;
}

/** The mirroring controller's endpoint for an Endpoints address. */
function mirrored(address: Address, ready: boolean): JsonObject {
  const endpoint: JsonObject = { addresses: [address.ip], conditions: { ready } };
  if (address.targetRef) endpoint["targetRef"] = address.targetRef;
  if (address.nodeName) endpoint["nodeName"] = address.nodeName;
  if (address.hostname) endpoint["hostname"] = address.hostname;
  return endpoint;
}

function mirror(ready: Address[], notReady: Address[], ports: Json): JsonObject {
  return {
    addressType: "IPv4",
    endpoints: [...ready.map((a) => mirrored(a, true)), ...notReady.map((a) => mirrored(a, false))],
    ports,
  };
}

const canonicalSet = (endpoints: Json | undefined) =>
  ((endpoints as Json[] | undefined) ?? [])
    .map((e) => JSON.stringify(e, Object.keys(e as object).sort()))
    .sort();

const PORTS = [{ name: "http", port: 80, protocol: "TCP" }];

describe("the Endpoints view of an EndpointSlice", () => {
  it("maps ready endpoints to addresses and the others to notReadyAddresses", () => {
    const slice = mirror(
      [{ ip: "10.0.0.1", hostname: "a" }],
      [{ ip: "10.0.0.2", nodeName: "n1" }],
      PORTS,
    );
    assert.deepEqual(endpointsView(slice as { endpoints: Json; ports: Json }).view, {
      subsets: [
        {
          addresses: [{ ip: "10.0.0.1", hostname: "a" }],
          notReadyAddresses: [{ ip: "10.0.0.2", nodeName: "n1" }],
          ports: PORTS,
        },
      ],
    });
  });

  it("drops a Pod targetRef's uid and resourceVersion, as vCluster's Endpoints syncer does", () => {
    const ref = {
      kind: "Pod",
      name: "web-0-x-default-x-vc",
      namespace: "vc-ns",
      uid: "u",
      resourceVersion: "7",
    };
    const slice = mirror([{ ip: "10.0.0.1", targetRef: ref }], [], PORTS);
    const from = endpointsView(slice as { endpoints: Json });
    const back = applyEndpointsView(slice, from, from.view);
    assert.deepEqual((back["endpoints"] as JsonObject[])[0]!["targetRef"], {
      kind: "Pod",
      name: "web-0-x-default-x-vc",
      namespace: "vc-ns",
    });
    // Another kind's reference is no Pod's: kept as it is.
    const other = mirror(
      [{ ip: "10.0.0.1", targetRef: { kind: "Node", name: "n", uid: "u" } }],
      [],
      PORTS,
    );
    const o = endpointsView(other as { endpoints: Json });
    assert.deepEqual(applyEndpointsView(other, o, o.view), other);
  });

  it("keeps what Endpoints cannot say (zone, hints, more addresses) when addresses map back", () => {
    const slice: JsonObject = {
      endpoints: [
        {
          addresses: ["10.0.0.1", "10.0.0.9"],
          conditions: { ready: true, serving: true, terminating: false },
          zone: "z1",
          hints: { forZones: [{ name: "z1" }] },
        },
      ],
    };
    const from = endpointsView(slice as { endpoints: Json });
    const view = structuredClone(from.view) as unknown as { subsets: { addresses: Address[] }[] };
    view.subsets[0]!.addresses[0]!.ip = "10.9.9.9";
    const back = applyEndpointsView(slice, from, view as unknown as JsonObject);
    assert.deepEqual(back["endpoints"], [
      {
        addresses: ["10.9.9.9", "10.0.0.9"],
        conditions: { ready: true, serving: true, terminating: false },
        zone: "z1",
        hints: { forZones: [{ name: "z1" }] },
      },
    ]);
  });

  it("writes back only the parts the view was made from; null parts are deletions that pass", () => {
    const part: JsonObject = { ports: null };
    const from = endpointsView(part as { ports: Json });
    assert.deepEqual(from.view, { subsets: [{}] });
    assert.deepEqual(applyEndpointsView(part, from, from.view), { ports: null });
  });

  it("refuses patches that leave other than one subset", () => {
    const slice = mirror([{ ip: "10.0.0.1" }], [], PORTS);
    const from = endpointsView(slice as { endpoints: Json });
    assert.throws(() => applyEndpointsView(slice, from, { subsets: [] }), SliceViewError);
  });

  it("patching a mirrored slice through its view gives the mirror of the patched Endpoints", () => {
    const ip = fc
      .tuple(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 1, max: 254 }))
      .map(([a, b]) => `10.0.${a}.${b}`);
    const address = fc.record(
      {
        ip,
        hostname: fc.constantFrom("a", "b"),
        nodeName: fc.constantFrom("n1", "n2"),
        targetRef: fc.record({
          kind: fc.constant("Pod"),
          name: fc.constantFrom("p-0", "p-1"),
          namespace: fc.constant("ns"),
        }),
      },
      { requiredKeys: ["ip"] },
    );
    // A patch of the kind users write on addresses: a map of addresses, and hostnames suffixed.
    const patch = (a: Address): Address => ({
      ...a,
      ip: a.ip.startsWith("10.0.1.") ? `10.9.1.${a.ip.split(".")[3]}` : a.ip,
      ...(a.hostname ? { hostname: `${a.hostname}-vc` } : {}),
    });
    fc.assert(
      fc.property(
        fc.uniqueArray(address, { selector: (a) => a.ip, maxLength: 6 }),
        fc.uniqueArray(address, { selector: (a) => a.ip, maxLength: 3 }),
        (ready, notReady) => {
          const slice = mirror(ready, notReady, PORTS);
          const from = endpointsView(slice as { endpoints: Json; ports: Json });
          const view = from.view as unknown as {
            subsets: { addresses: Address[]; notReadyAddresses: Address[] }[];
          };
          const patchedView = {
            subsets: [
              {
                ...view.subsets[0]!,
                addresses: view.subsets[0]!.addresses.map(patch),
                notReadyAddresses: view.subsets[0]!.notReadyAddresses.map(patch),
              },
            ],
          };
          const back = applyEndpointsView(slice, from, patchedView as unknown as JsonObject);
          const expected = mirror(ready.map(patch), notReady.map(patch), PORTS);
          assert.deepEqual(canonicalSet(back["endpoints"]), canonicalSet(expected["endpoints"]));
          assert.deepEqual(back["ports"], PORTS);
        },
      ),
    );
  });
});

describe("keepStoredOrder", () => {
  const a = { addresses: ["10.0.0.1"], conditions: { ready: true } };
  const b = { addresses: ["10.0.0.2"], conditions: { ready: true } };

  it("keeps the stored order of the same endpoints", () => {
    assert.deepEqual(keepStoredOrder([a, b], [b, a]), [a, b]);
    // Key order inside an endpoint does not make it another.
    assert.deepEqual(
      keepStoredOrder([a], [{ conditions: { ready: true }, addresses: ["10.0.0.1"] }]),
      [a],
    );
  });

  it("takes the new endpoints when they differ", () => {
    const c = { addresses: ["10.0.0.3"], conditions: { ready: true } };
    assert.deepEqual(keepStoredOrder([a, b], [a, c]), [a, c]);
    assert.deepEqual(keepStoredOrder([a, b], [a]), [a]);
    assert.deepEqual(keepStoredOrder(undefined, [a]), [a]);
  });
});
