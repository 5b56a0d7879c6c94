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
import { httpsRequest } from "../../support/https-client.js";
import { metricValue } from "../../support/prometheus-text.js";
import { admit as admitAnswer } from "./admission-answer.js";
import { docPageWith } from "../../support/readme-blocks.js";

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

// A config that patches EndpointSlices too: the Endpoints patch rewrites 10.1.2.3 to 10.9.9.9, the
// slice's own 10.9.9.9 to 10.8.8.8, so a write that gets both ends with 10.8.8.8 and one that gets
// the slice's only keeps 10.1.2.3 (KND-70).
const BOTH = `sync:
  toHost:
    endpoints:
      patches:
        - path: subsets[*].addresses[*].ip
          expression: 'value === "10.1.2.3" ? "10.9.9.9" : value'
    endpointSlices:
      patches:
        - path: endpoints[*].addresses[*]
          expression: 'value === "10.9.9.9" ? "10.8.8.8" : value'
        - path: metadata.labels["team"]
          expression: '"tenant-" + value'
        - path: endpoints[*].hostname
          expression: 'value.no.such'
`;

/**
 * The host slice as the mirroring controller writes it from the host Endpoints of
 * db-x-default-x-my-vcluster: their bookkeeping and labels, its own managed-by label, the
 * Service-name label, an ownerReference to the Endpoints.
 */
function mirroredSlice(
  endpoints: Json[],
  opts: { vcluster?: string; namespace?: string; service?: string; name?: string } = {},
): Json {
  return {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: {
      name: opts.name ?? "db-5mzzp-x-default-x-my-vcluster",
      namespace: opts.namespace ?? VC.namespace,
      labels: {
        "endpointslice.kubernetes.io/managed-by": "endpointslicemirroring-controller.k8s.io",
        "kubernetes.io/service-name": opts.service ?? "db-x-default-x-my-vcluster",
        "vcluster.loft.sh/managed-by": opts.vcluster ?? VC.name,
        "vcluster.loft.sh/namespace": "default",
        team: "a",
      },
      annotations: {
        "vcluster.loft.sh/object-name": "db",
        "vcluster.loft.sh/object-namespace": "default",
        "vcluster.loft.sh/object-kind": "/v1, Kind=Endpoints",
        "vcluster.loft.sh/object-host-name": "db-x-default-x-my-vcluster",
        "vcluster.loft.sh/object-host-namespace": opts.namespace ?? VC.namespace,
      },
      ownerReferences: [
        {
          apiVersion: "v1",
          kind: "Endpoints",
          name: "db-x-default-x-my-vcluster",
          uid: "e-1",
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    addressType: "IPv4",
    endpoints,
    ports: [{ name: "http", port: 80, protocol: "TCP" }],
  };
}

const labelsOf = (o: Json): Json => (o.metadata as Json).labels as Json;

/** docs/patches.md's example of the two patches composed, as written. */
const DOCS_EXAMPLE_FIRST_LINE =
  "# vcluster.yaml: an Endpoints patch and an EndpointSlices patch on the same addresses";

function docsExample(): string {
  const { contents } = docPageWith(DOCS_EXAMPLE_FIRST_LINE);
  const at = contents.indexOf(DOCS_EXAMPLE_FIRST_LINE);
  return contents.slice(at, contents.indexOf("```", at));
}

/** `vgate serve --config` on `config`, --side host; its base URL and how to stop it. */
async function serveConfig(config: string): Promise<{ base: string; stop(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), "vgate-eps-"));
  writeFileSync(join(dir, "vcluster.yaml"), config);
  const serve = await startServe(
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
        deadlineMs: 500,
        workers: 1,
      },
    },
    createLogger("silent", new Writable({ write: (_c, _e, cb) => cb() })),
  );
  return {
    base: `https://127.0.0.1:${serve.server.port}`,
    async stop() {
      await serve.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

describe("docs/patches.md's EndpointSlices example over HTTPS", function () {
  this.timeout(30_000);
  it("composes as the page says: both writers' slice carries 10.244.0.7", async () => {
    const served = await serveConfig(docsExample());
    try {
      const url = `${served.base}/mutate/patches`;
      const byVCluster = await admit(
        url,
        review("endpointslices", "CREATE", hostSlice([ready("10.244.0.5")])),
      );
      assert.deepEqual(byVCluster.out.endpoints, [ready("10.244.0.7")]);
      const byController = await admit(
        url,
        review("endpointslices", "UPDATE", mirroredSlice([ready("10.244.0.6")]), byVCluster.out),
      );
      assert.deepEqual(byController.out.endpoints, [ready("10.244.0.7")]);
    } finally {
      await served.stop();
    }
  });
});

describe("EndpointSlices with patches of their own over HTTPS: one rule for both writers (KND-70)", function () {
  this.timeout(30_000);
  let served: { base: string; stop(): Promise<void> };
  let base: string;
  before(async () => {
    served = await serveConfig(BOTH);
    base = served.base;
  });
  after(() => served.stop());

  /** The answer of /mutate/endpoints, after checking /mutate/patches gives the same. */
  async function both(body: Json): Promise<{ allowed: boolean; out: Json }> {
    const viaEndpoints = await admit(`${base}/mutate/endpoints`, body);
    const viaPatches = await admit(`${base}/mutate/patches`, body);
    assert.deepEqual(viaPatches, viaEndpoints, "/mutate/patches answers as /mutate/endpoints");
    return viaEndpoints;
  }

  it("vCluster's write gets the Endpoints patches through the view, then the slice's own", async () => {
    const slice = hostSlice([ready("10.1.2.3"), ready("10.1.5.1")]);
    labelsOf(slice)["team"] = "a";
    const { allowed, out } = await both(review("endpointslices", "CREATE", slice));
    assert.equal(allowed, true);
    assert.deepEqual(out.endpoints, [ready("10.8.8.8"), ready("10.1.5.1")]);
    assert.equal(labelsOf(out)["team"], "tenant-a", "the slice's metadata patches apply");
  });

  it("the mirroring controller's write gets the slice's own patches only", async () => {
    // Its own slice, mirrored from host Endpoints the Endpoints patch rewrote (10.9.9.9), and one
    // from an address no Endpoints patch touched: that one is not rewritten as on Endpoints.
    const { allowed, out } = await both(
      review("endpointslices", "CREATE", mirroredSlice([ready("10.9.9.9"), ready("10.1.2.3")])),
    );
    assert.equal(allowed, true);
    assert.deepEqual(out.endpoints, [ready("10.8.8.8"), ready("10.1.2.3")]);
    assert.equal(labelsOf(out)["team"], "tenant-a");
  });

  it("each writer re-sending what it derives leaves the stored slice as it is", async () => {
    // Stored: the composition, written by vCluster (its bookkeeping, the patched label).
    const stored = hostSlice([ready("10.1.5.1"), ready("10.8.8.8")]);
    labelsOf(stored)["team"] = "tenant-a";
    // The controller rewrites vCluster's copy from the host Endpoints (10.9.9.9), in map order.
    const mirrored = mirroredSlice([ready("10.9.9.9"), ready("10.1.5.1")]);
    const byController = await both(review("endpointslices", "UPDATE", mirrored, stored));
    assert.deepEqual(
      byController.out.endpoints,
      stored.endpoints,
      "the stored endpoints, in order",
    );
    assert.deepEqual(labelsOf(byController.out), {
      ...labelsOf(mirrored),
      team: "tenant-a",
    });
    // vCluster sends the virtual slice's endpoints again, unpatched, after the controller wrote.
    const sent = hostSlice([ready("10.1.2.3"), ready("10.1.5.1")]);
    labelsOf(sent)["team"] = "a";
    const byVCluster = await both(review("endpointslices", "UPDATE", sent, byController.out));
    assert.deepEqual(byVCluster.out.endpoints, stored.endpoints);
    assert.deepEqual(labelsOf(byVCluster.out), labelsOf(stored));
    // A write of the stored slice as it is patches nothing again (the change set is empty).
    assert.deepEqual((await both(review("endpointslices", "UPDATE", stored, stored))).out, stored);
  });

  it("passes untouched another vCluster's, another namespace's and another Service's mirrored slice", async () => {
    for (const slice of [
      mirroredSlice([ready("10.9.9.9")], { vcluster: "other" }),
      mirroredSlice([ready("10.9.9.9")], { namespace: "team-b" }),
      // Its Service-name label is not the Service whose Endpoints its bookkeeping names.
      mirroredSlice([ready("10.9.9.9")], { service: "other-x-default-x-my-vcluster" }),
    ]) {
      const { allowed, out } = await both(review("endpointslices", "CREATE", slice));
      assert.equal(allowed, true);
      assert.deepEqual(out, slice);
    }
  });

  it("a failing slice patch denies, names sync.toHost.endpointSlices, and is counted", async () => {
    const before = metricValue(
      (await httpsRequest(`${base}/metrics`)).text,
      "vgate_sync_patch_failures_total",
      { kind: "toHost.endpointSlices", patch: "2" },
    );
    const slice = mirroredSlice([ready("10.9.9.9", { hostname: "db-0" })]);
    const r = await admitAnswer(
      `${base}/mutate/endpoints`,
      review("endpointslices", "CREATE", slice),
    );
    assert.equal(r.allowed, false);
    assert.match(r.status?.message ?? "", /sync\.toHost\.endpointSlices\.patches failed/);
    const after = metricValue(
      (await httpsRequest(`${base}/metrics`)).text,
      "vgate_sync_patch_failures_total",
      { kind: "toHost.endpointSlices", patch: "2" },
    );
    assert.equal(after, before + 1);
  });
});
