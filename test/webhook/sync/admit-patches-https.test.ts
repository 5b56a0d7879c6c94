// POST /mutate/patches over real HTTPS with real AdmissionReviews: every sync.toHost kind the
// config patches (Pods, Services, ConfigMaps, Secrets, Ingresses and a custom resource here), on
// the host side and on the virtual side.

import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { parse as parseYaml } from "yaml";
import { startServe, type StartedServe } from "../../../webhook/src/cli/serve-runtime.js";
import type { JsonObject } from "../../../webhook/src/patches/types.js";
import { createLogger } from "../../../webhook/src/server/logger.js";
import { translateEndpointsToHost } from "../../../webhook/src/sync/translate-endpoints.js";
import { repoRoot } from "../../support/fixtures.js";
import { admit, patched } from "./admission-answer.js";
import {
  CASES,
  VC,
  hostCopy,
  loadedWith,
  review,
  setsOf,
  toHostKind,
  type KindCase,
} from "./patch-kinds-fixtures.js";
import { startPatchesServer, type PatchesServer } from "./patches-server.js";

type Json = Record<string, unknown>;

const annotations = (o: Json): Record<string, string> =>
  (o.metadata as { annotations: Record<string, string> }).annotations;

const labelOf = (c: KindCase): string => c.kind.kind;

describe("POST /mutate/patches over HTTPS", function () {
  this.timeout(30_000);
  let server: PatchesServer;
  before(async () => (server = await startPatchesServer(loadedWith(setsOf(CASES)))));
  after(() => server.stop());

  for (const c of CASES) {
    describe(`--side host: ${labelOf(c)}`, () => {
      it("patches this vCluster's copy in its namespace on CREATE; bookkeeping untouched", async () => {
        const host = hostCopy(c);
        const r = await admit(server.url, review(c, "CREATE", host));
        assert.equal(r.allowed, true);
        assert.equal(r.warnings, undefined);
        const out = patched(host, r);
        assert.deepEqual(c.field(out), c.expected);
        assert.equal(annotations(out).team, "tenant-a");
        for (const [key, value] of Object.entries(annotations(host))) {
          if (key.startsWith("vcluster.loft.sh/")) assert.equal(annotations(out)[key], value, key);
        }
        const labels = (o: Json): Record<string, string> =>
          (o.metadata as { labels: Record<string, string> }).labels;
        for (const [key, value] of Object.entries(labels(host))) {
          if (key.startsWith("vcluster.loft.sh/")) assert.equal(labels(out)[key], value, key);
        }
      });

      it("makes no further change when the patched object is sent again (nothing loops)", async () => {
        const host = hostCopy(c);
        const stored = patched(host, await admit(server.url, review(c, "CREATE", host)));
        // The same object again (a no-op update), and the syncer's next write: its own
        // translation of the unchanged virtual object over the stored, patched one.
        const same = await admit(server.url, review(c, "UPDATE", structuredClone(stored), stored));
        assert.equal(same.patch, undefined);
        const resync = structuredClone(host);
        (resync.metadata as Json).resourceVersion = "2";
        const again = await admit(server.url, review(c, "UPDATE", resync, stored));
        const next = patched(resync, again);
        assert.deepEqual(c.field(next), c.expected);
        assert.equal(annotations(next).team, "tenant-a");
        const withoutMetadata = (o: Json): Json =>
          Object.fromEntries(Object.entries(o).filter(([key]) => key !== "metadata"));
        assert.deepEqual(
          withoutMetadata(next),
          withoutMetadata(stored),
          "a re-sync stores what is stored already",
        );
        assert.deepEqual(annotations(next), annotations(stored));
      });

      it("patches only the change set on UPDATE, never a value twice", async () => {
        const host = hostCopy(c);
        const stored = patched(host, await admit(server.url, review(c, "CREATE", host)));
        const next = structuredClone(stored);
        annotations(next).team = "b";
        const out = patched(next, await admit(server.url, review(c, "UPDATE", next, stored)));
        assert.equal(annotations(out).team, "tenant-b");
        assert.deepEqual(c.field(out), c.expected, "the unchanged field is not patched again");
      });

      it("admits a copy outside the vCluster's namespaces untouched, with a warning", async () => {
        const host = hostCopy(c, VC, "payments");
        const r = await admit(server.url, review(c, "CREATE", host));
        assert.equal(r.allowed, true);
        assert.equal(r.patch, undefined);
        assert.match(
          r.warnings?.[0] ?? "",
          /not patched: host namespace "payments" does not belong to vCluster "my-vcluster"/,
        );
      });

      it("never patches another vCluster's copy, even in this one's namespace", async () => {
        const other = hostCopy(c, { name: "other-vc", namespace: VC.namespace });
        const r = await admit(server.url, review(c, "CREATE", other));
        assert.equal(r.allowed, true);
        assert.equal(r.patch, undefined);
        assert.match(r.warnings?.[0] ?? "", /names another vCluster, not "my-vcluster"/);
      });

      it("admits an object without vCluster's bookkeeping untouched, with a warning", async () => {
        const plain: Json = {
          ...structuredClone(c.virtual),
          apiVersion: c.apiVersion,
          kind: c.kind.kind,
        };
        (plain.metadata as Json).namespace = VC.namespace;
        const r = await admit(server.url, review(c, "CREATE", plain));
        assert.equal(r.patch, undefined);
        assert.match(r.warnings?.[0] ?? "", /lacks the label vcluster\.loft\.sh\/managed-by/);
      });
    });
  }

  it("a copy whose object-kind annotation names another kind is not patched", async () => {
    const c = CASES.find((k) => k.kind.key === "configMaps")!;
    const host = hostCopy(c);
    annotations(host)["vcluster.loft.sh/object-kind"] = "/v1, Kind=Secret";
    const r = await admit(server.url, review(c, "CREATE", host));
    assert.equal(r.patch, undefined);
    assert.match(r.warnings?.[0] ?? "", /names another kind/);
  });

  it("refuses a kind the config does not patch with 400 naming the kinds it serves", async () => {
    const policy = { kind: toHostKind("networkPolicies"), apiVersion: "networking.k8s.io/v1" };
    const r = await admit(
      server.url,
      review(policy, "CREATE", { metadata: { name: "x", namespace: VC.namespace } }),
    );
    assert.equal(r.allowed, false);
    assert.equal(r.status?.code, 400);
    assert.match(r.status?.message ?? "", /networking\.k8s\.io\/v1 networkpolicies/);
    assert.match(
      r.status?.message ?? "",
      /\(pods, services, configmaps, secrets, ingresses\.networking\.k8s\.io, widgets\.example\.com\)/,
    );
  });

  it("serves a kind in any version of its group", async () => {
    const c = CASES.find((k) => k.kind.key === "customResources.widgets.example.com")!;
    const v2 = { ...c, apiVersion: "example.com/v2" };
    const host = hostCopy(c);
    const r = await admit(
      server.url,
      review(v2, "CREATE", { ...host, apiVersion: "example.com/v2" }),
    );
    assert.equal(c.field(patched(host, r)), 6);
  });

  describe("--side virtual", () => {
    const c = CASES.find((k) => k.kind.key === "configMaps")!;
    const virtual = (): Json => ({
      ...structuredClone(c.virtual),
      apiVersion: "v1",
      kind: "ConfigMap",
    });

    it("applies reverseExpressions to the fields vCluster carries back, on UPDATE", async () => {
      const old = virtual();
      const next = structuredClone(old);
      (next.data as Json).endpoint = "cache.team-a.svc.my-vcluster";
      annotations(next).team = "tenant-c";
      const out = patched(next, await admit(server.virtualUrl, review(c, "UPDATE", next, old)));
      assert.equal((out.data as Json).endpoint, "cache.team-a.svc");
      assert.equal(annotations(out).team, "c");
    });

    it("keeps the virtual value when the host value is vgate's own patch coming back", async () => {
      const old = virtual();
      annotations(old).team = "tenant-x";
      const next = structuredClone(old);
      // "tenant-tenant-x" is exactly what the expression made of "tenant-x" on the host.
      annotations(next).team = "tenant-tenant-x";
      const out = patched(next, await admit(server.virtualUrl, review(c, "UPDATE", next, old)));
      assert.equal(annotations(out).team, "tenant-x");
    });

    it("leaves CREATEs and changes to fields vCluster does not carry back alone", async () => {
      const old = virtual();
      assert.equal((await admit(server.virtualUrl, review(c, "CREATE", old))).patch, undefined);
      const pod = CASES.find((k) => k.kind.key === "pods")!;
      const vpod: Json = { ...structuredClone(pod.virtual), apiVersion: "v1", kind: "Pod" };
      const next = structuredClone(vpod);
      ((next.spec as Json).containers as Json[])[0]!.image = "mirror.example.com/nginx:1.28";
      const r = await admit(server.virtualUrl, review(pod, "UPDATE", next, vpod));
      assert.equal(r.patch, undefined);
    });

    // KND-40: a patch without a reverseExpression (the Secret's label `tier` here) drops the field
    // host → virtual, but the webhook cannot tell a tenant's write from the syncer's: dropping it
    // undid the tenant's own change (seen with vCluster's syncer, test/cluster/vcluster-kinds).
    const secrets = CASES.find((k) => k.kind.key === "secrets")!;
    const vsecret = (): Json => ({
      ...structuredClone(secrets.virtual),
      apiVersion: "v1",
      kind: "Secret",
    });
    const tier = (o: Json) => (o.metadata as { labels: Record<string, string> }).labels.tier;

    it("passes a tenant's change of a field whose patch has no reverseExpression", async () => {
      const old = vsecret();
      const next = structuredClone(old);
      (next.metadata as { labels: Record<string, string> }).labels.tier = "cache";
      const r = await admit(server.virtualUrl, review(secrets, "UPDATE", next, old));
      assert.equal(tier(patched(next, r)), "cache");
    });

    it("keeps the virtual value of such a field when vgate's own patch comes back", async () => {
      const old = vsecret();
      const next = structuredClone(old);
      // "secret-db" is what the label's expression made of "db" on the host.
      (next.metadata as { labels: Record<string, string> }).labels.tier = "secret-db";
      const r = await admit(server.virtualUrl, review(secrets, "UPDATE", next, old));
      assert.equal(tier(patched(next, r)), "db");
    });
  });

  describe("cluster-scoped kinds (KND-13)", () => {
    const c: KindCase = {
      kind: toHostKind("priorityClasses"),
      apiVersion: "scheduling.k8s.io/v1",
      patches: [{ path: 'metadata.annotations["team"]', expression: '"tenant-" + value' }],
      virtual: { metadata: { name: "high", uid: "u1", annotations: { team: "a" } }, value: 1000 },
      field: (o) => annotations(o).team,
      expected: "tenant-a",
    };
    let cluster: PatchesServer;
    before(async () => (cluster = await startPatchesServer(loadedWith(setsOf([c])))));
    after(() => cluster.stop());

    it("patches a copy whose managed-by label names this vCluster and its namespace", async () => {
      const host = hostCopy(c);
      const labels = (host.metadata as { labels: Record<string, string> }).labels;
      assert.equal(labels["vcluster.loft.sh/managed-by"], "vcluster-my-vcluster-x-my-vcluster");
      const r = await admit(cluster.url, review(c, "CREATE", host));
      assert.equal(c.field(patched(host, r)), "tenant-a");
    });

    it("not one whose label is a namespaced copy's (the vCluster's bare name)", async () => {
      const host = hostCopy(c);
      (host.metadata as { labels: Record<string, string> }).labels["vcluster.loft.sh/managed-by"] =
        VC.name;
      const r = await admit(cluster.url, review(c, "CREATE", host));
      assert.equal(r.patch, undefined);
      assert.match(r.warnings?.[0] ?? "", /names another vCluster/);
    });
  });

  describe("patch errors", () => {
    const pods = CASES.find((k) => k.kind.key === "pods")!;
    const failing: KindCase = {
      ...pods,
      patches: [
        pods.patches[0]!,
        { path: "spec.containers[*].image", expression: "value.no.such" },
      ],
    };

    it("deny the write with a message naming the kind and patch, and count in the metric", async () => {
      const s = await startPatchesServer(loadedWith(setsOf([failing])));
      try {
        const before = await s.failures("toHost.pods", "1");
        const r = await admit(s.url, review(pods, "CREATE", hostCopy(pods)));
        assert.equal(r.allowed, false);
        assert.equal(r.status?.code, 400);
        assert.match(r.status?.message ?? "", /sync\.toHost\.pods\.patches failed: patches\[1\]/);
        assert.equal(await s.failures("toHost.pods", "1"), before + 1);
        assert.equal(await s.failures("toHost.pods", "0"), 0);
      } finally {
        await s.stop();
      }
    });

    it("admit unchanged with a warning under --on-patch-error=allow, and count", async () => {
      const s = await startPatchesServer(loadedWith(setsOf([failing])), { onPatchError: "allow" });
      try {
        const r = await admit(s.url, review(pods, "CREATE", hostCopy(pods)));
        assert.equal(r.allowed, true);
        assert.equal(r.patch, undefined);
        assert.match(r.warnings?.[0] ?? "", /admitted unchanged \(--on-patch-error=allow\)/);
        assert.equal(await s.failures("toHost.pods", "1"), 1);
      } finally {
        await s.stop();
      }
    });
  });

  it("passes a kind's objects untouched when its sync is disabled", async () => {
    const c = CASES[0]!;
    const s = await startPatchesServer(
      loadedWith([{ kind: c.kind, enabled: false, patches: c.patches }]),
    );
    try {
      const r = await admit(s.url, review(c, "CREATE", hostCopy(c)));
      assert.equal(r.allowed, true);
      assert.equal(r.patch, undefined);
    } finally {
      await s.stop();
    }
  });
});

describe("vgate serve --config: /mutate/patches next to /mutate/endpoints", function () {
  this.timeout(30_000);
  let serve: StartedServe;
  let dir: string;
  let base: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "vgate-patches-"));
    writeFileSync(
      join(dir, "vcluster.yaml"),
      readFileSync(join(repoRoot, "webhook/examples/vcluster.yaml")),
    );
    serve = await startServe(
      {
        port: 0,
        bindAddress: "127.0.0.1",
        groupDomain: "loft.sh",
        adminGroups: ["system:masters"],
        logLevel: "silent",
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
    base = `https://127.0.0.1:${serve.server.port}`;
  });
  after(async () => {
    await serve?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("gives Endpoints the answer of /mutate/endpoints, and refuses kinds the config does not patch", async () => {
    const virtualEp = parseYaml(
      readFileSync(join(repoRoot, "webhook/examples/endpoints.yaml"), "utf8"),
    ) as JsonObject;
    const host = translateEndpointsToHost(virtualEp, { ...VC, config: {} }) as Json;
    const endpoints = { kind: { ...toHostKind("endpoints") }, apiVersion: "v1" };
    const body = review(endpoints, "CREATE", host);
    const viaPatches = patched(host, await admit(`${base}/mutate/patches`, body));
    const viaEndpoints = patched(host, await admit(`${base}/mutate/endpoints`, body));
    assert.equal(annotations(viaPatches).owner, "tenant-team-a");
    assert.deepEqual(viaPatches, viaEndpoints);
    const pods = CASES.find((k) => k.kind.key === "pods")!;
    const r = await admit(`${base}/mutate/patches`, review(pods, "CREATE", hostCopy(pods)));
    assert.equal(r.allowed, false);
    assert.equal(r.status?.code, 400);
    assert.match(r.status?.message ?? "", /the kinds the config patches only \(endpoints\)/);
  });
});
