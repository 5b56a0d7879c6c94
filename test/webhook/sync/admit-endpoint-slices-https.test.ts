// A running `vgate serve --config …` over real HTTPS: the EndpointSlices vCluster's syncer writes
// (EPS-28) at /mutate/endpoints, and the virtual cluster's webhook at /mutate/endpoints/virtual
// (EPS-29). The objects are shaped as the real syncer and the mirroring controller write them
// (test/cluster/vcluster-webhook.test.ts and vcluster-traffic.test.ts watch them do it).

import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import fastJsonPatch from "fast-json-patch";
import { startServe, type StartedServe } from "../../../webhook/src/cli/serve-runtime.js";
import { createLogger } from "../../../webhook/src/server/logger.js";
import { postJson } from "../../support/https-client.js";
import { objectReview } from "../../support/reviews.js";

type Json = Record<string, unknown>;
const VC = { name: "my-vcluster", namespace: "vcluster-my-vcluster" };

const CONFIG = `sync:
  toHost:
    endpoints:
      enabled: true
      patches:
        - path: subsets[*].addresses[*].ip
          expression: 'value === "10.1.2.3" ? "10.9.9.9" : value'
        - path: subsets[*].addresses[*].hostname
          expression: 'value + "-vc"'
        - path: metadata.annotations["owner"]
          expression: '"tenant-" + value'
          reverseExpression: 'value.startsWith("tenant-") ? value.slice(7) : value'
        - path: metadata.annotations["tls-secret"]
          reference:
            apiVersion: v1
            kind: Secret
`;

const ADMIN = { username: "admin", groups: ["system:masters"] };

const review = (
  resource: "endpoints" | "endpointslices",
  operation: "CREATE" | "UPDATE",
  object: Json,
  oldObject: Json | null = null,
): Json =>
  objectReview({
    ...(resource === "endpoints"
      ? { kind: "Endpoints", apiVersion: "v1" }
      : { kind: "EndpointSlice", apiVersion: "discovery.k8s.io/v1" }),
    resource,
    operation,
    object,
    oldObject,
    userInfo: ADMIN,
  });

async function admit(url: string, body: Json): Promise<{ allowed: boolean; out: Json }> {
  const res = await postJson(url, body);
  assert.equal(res.status, 200, res.text);
  const r = res.json<{ response: { allowed: boolean; patch?: string } }>().response;
  const object = (body.request as Json).object as Json;
  if (!r.patch) return { allowed: r.allowed, out: object };
  const ops = JSON.parse(Buffer.from(r.patch, "base64").toString("utf8"));
  return {
    allowed: r.allowed,
    out: fastJsonPatch.applyPatch(structuredClone(object), ops).newDocument as Json,
  };
}

/** The host slice as vCluster's EndpointSlice syncer writes it (or, `kind`, the controller). */
function hostSlice(
  endpoints: Json[],
  opts: { kind?: string; vcluster?: string; addressType?: string } = {},
): Json {
  return {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: {
      name: "db-5mzzp-x-default-x-my-vcluster",
      namespace: VC.namespace,
      labels: {
        "endpointslice.kubernetes.io/managed-by": "endpointslicemirroring-controller.k8s.io",
        "kubernetes.io/service-name": "db-x-default-x-my-vcluster",
        "vcluster.loft.sh/managed-by": opts.vcluster ?? VC.name,
        "vcluster.loft.sh/namespace": "default",
      },
      annotations: {
        "vcluster.loft.sh/object-name": "db-5mzzp",
        "vcluster.loft.sh/object-namespace": "default",
        "vcluster.loft.sh/object-kind": opts.kind ?? "discovery.k8s.io/v1, Kind=EndpointSlice",
      },
    },
    addressType: opts.addressType ?? "IPv4",
    endpoints,
    ports: [{ name: "http", port: 80, protocol: "TCP" }],
  };
}

const ready = (ip: string, extra: Json = {}) => ({
  addresses: [ip],
  conditions: { ready: true },
  ...extra,
});

describe("POST /mutate/endpoints over HTTPS: EndpointSlices and the virtual side", function () {
  this.timeout(30_000);
  let serve: StartedServe;
  let base: string;
  let dir: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "vgate-eps-"));
    writeFileSync(join(dir, "vcluster.yaml"), CONFIG);
    serve = await startServe(
      {
        port: 0,
        bindAddress: "127.0.0.1",
        groupDomain: "loft.sh",
        adminGroups: ["system:masters"],
        logLevel: "info",
        dev: true,
        endpoints: {
          config: join(dir, "vcluster.yaml"),
          vclusterName: VC.name,
          vclusterNamespace: VC.namespace,
          side: "host",
          onPatchError: "deny",
          deadlineMs: 200,
          workers: 1,
        },
      },
      createLogger("silent", new Writable({ write: (_c, _e, cb) => cb() })),
    );
    base = `https://127.0.0.1:${serve.server.port}`;
  });
  after(async () => {
    await serve.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  describe("EndpointSlices vCluster writes (EPS-28)", () => {
    it("get the Endpoints patches on CREATE, and a Pod targetRef loses the virtual uid", async () => {
      const slice = hostSlice([
        ready("10.1.2.3", {
          hostname: "db-0",
          targetRef: {
            kind: "Pod",
            name: "db-0-x-default-x-my-vcluster",
            namespace: VC.namespace,
            uid: "u-1",
          },
        }),
        { addresses: ["10.1.2.4"], conditions: { ready: false }, zone: "z1" },
      ]);
      const { allowed, out } = await admit(
        `${base}/mutate/endpoints`,
        review("endpointslices", "CREATE", slice),
      );
      assert.equal(allowed, true);
      assert.deepEqual(out.endpoints, [
        ready("10.9.9.9", {
          hostname: "db-0-vc",
          targetRef: { kind: "Pod", name: "db-0-x-default-x-my-vcluster", namespace: VC.namespace },
        }),
        { addresses: ["10.1.2.4"], conditions: { ready: false }, zone: "z1" },
      ]);
      assert.deepEqual(out.metadata, slice.metadata, "metadata is not the slice's to patch");
    });

    it("on UPDATE, patch only the change set and keep the stored order of the same endpoints", async () => {
      // Stored: what the mirroring controller wrote from the patched Endpoints, in its order.
      const stored = hostSlice([ready("10.1.5.1"), ready("10.9.9.9")]);
      // vCluster writes the virtual slice's endpoints again, unpatched and in its own order.
      const sent = hostSlice([ready("10.1.2.3"), ready("10.1.5.1")]);
      const { out } = await admit(
        `${base}/mutate/endpoints`,
        review("endpointslices", "UPDATE", sent, stored),
      );
      assert.deepEqual(out.endpoints, stored.endpoints);
      // A change of labels only runs no patch on the endpoints already stored.
      const relabelled = structuredClone(stored);
      ((relabelled.metadata as Json).labels as Json)["team"] = "a";
      const again = await admit(
        `${base}/mutate/endpoints`,
        review("endpointslices", "UPDATE", relabelled, stored),
      );
      assert.deepEqual(again.out, relabelled);
    });

    it("pass untouched when they are the mirroring controller's, another vCluster's, or FQDN", async () => {
      for (const slice of [
        hostSlice([ready("10.1.2.3")], { kind: "/v1, Kind=Endpoints" }),
        hostSlice([ready("10.1.2.3")], { vcluster: "other" }),
        hostSlice([{ addresses: ["db.example.com"] }], { addressType: "FQDN" }),
      ]) {
        const { allowed, out } = await admit(
          `${base}/mutate/endpoints`,
          review("endpointslices", "CREATE", slice),
        );
        assert.equal(allowed, true);
        assert.deepEqual(out, slice);
      }
    });
  });

  describe("/mutate/endpoints/virtual (EPS-29)", () => {
    const virtualEp = (annotations: Json, ip = "10.1.2.3"): Json => ({
      apiVersion: "v1",
      kind: "Endpoints",
      metadata: { name: "db", namespace: "default", annotations },
      subsets: [
        {
          addresses: [{ ip, hostname: "db-0" }],
          ports: [{ name: "http", port: 80, protocol: "TCP" }],
        },
      ],
    });

    it("reverses what the syncer brings back, and keeps its own value for an echo", async () => {
      const old = virtualEp({ owner: "team", "tls-secret": "db-tls" });
      // What vCluster writes after vgate patched its host write: the host's values.
      const sent = virtualEp({ owner: "tenant-team" });
      const forward = await admit(
        `${base}/mutate/endpoints`,
        review("endpoints", "CREATE", {
          ...virtualEp({ "tls-secret": "db-tls" }),
          metadata: {
            name: "db-x-default-x-my-vcluster",
            namespace: VC.namespace,
            labels: { "vcluster.loft.sh/managed-by": VC.name },
            annotations: {
              "tls-secret": "db-tls",
              "vcluster.loft.sh/object-name": "db",
              "vcluster.loft.sh/object-namespace": "default",
            },
          },
        }),
      );
      // The reference's host name, as the host side made it.
      const hostName = ((forward.out.metadata as Json).annotations as Json)["tls-secret"] as string;
      assert.notEqual(hostName, "db-tls");
      ((sent.metadata as Json).annotations as Json)["tls-secret"] = hostName;
      const { out } = await admit(
        `${base}/mutate/endpoints/virtual`,
        review("endpoints", "UPDATE", sent, old),
      );
      assert.deepEqual((out.metadata as Json).annotations, {
        owner: "team",
        "tls-secret": "db-tls",
      });
    });

    it("leaves a user's change of addresses alone, though no patch reverses them", async () => {
      const old = virtualEp({ owner: "team" });
      const sent = virtualEp({ owner: "team" }, "10.1.2.7");
      const { allowed, out } = await admit(
        `${base}/mutate/endpoints/virtual`,
        review("endpoints", "UPDATE", sent, old),
      );
      assert.equal(allowed, true);
      assert.deepEqual(out, sent);
    });

    it("passes EndpointSlices and creates through", async () => {
      const slice = hostSlice([ready("10.1.2.3")]);
      assert.deepEqual(
        (
          await admit(
            `${base}/mutate/endpoints/virtual`,
            review("endpointslices", "UPDATE", slice, slice),
          )
        ).out,
        slice,
      );
      const ep = virtualEp({ owner: "tenant-x" });
      assert.deepEqual(
        (await admit(`${base}/mutate/endpoints/virtual`, review("endpoints", "CREATE", ep))).out,
        ep,
      );
    });
  });
});
