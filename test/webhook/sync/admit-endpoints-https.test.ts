// POST /mutate/endpoints over real HTTPS: a running `vgate serve --config ...` answering
// AdmissionReviews for Endpoints on the host side and on the virtual side; with
// --virtual-kubeconfig reading a real API server, and called by a real kube-apiserver.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Writable } from "node:stream";
import { parse as parseYaml } from "yaml";
import { startServe, type StartedServe } from "../../../webhook/src/cli/serve-runtime.js";
import type { ServeOptions } from "../../../webhook/src/cli/serve-options.js";
import { createLogger } from "../../../webhook/src/server/logger.js";
import { translateEndpointsToHost } from "../../../webhook/src/sync/translate-endpoints.js";
import type { JsonObject } from "../../../webhook/src/patches/types.js";
import { sharedCluster, type VgateCluster } from "../../support/cluster.js";
import { repoRoot } from "../../support/fixtures.js";
import { objectReview } from "../../support/reviews.js";
import { admit, patched, type AdmissionAnswer } from "./admission-answer.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../../support/kube/binaries.js";
import { servingCert } from "../../support/kube/pki.js";
import type { KubeObject } from "../../support/kube/kube-client.js";

type Json = Record<string, unknown>;
const VC = { name: "my-vcluster", namespace: "vcluster-my-vcluster", config: {} };
const virtualEp = parseYaml(
  readFileSync(resolve(repoRoot, "webhook/examples/endpoints.yaml"), "utf8"),
) as JsonObject;

const SYNCER = { username: "system:serviceaccount:vcluster-my-vcluster:vc-my-vcluster" };

const endpointsReview = (
  operation: "CREATE" | "UPDATE",
  object: Json,
  oldObject: Json | null = null,
): Json =>
  objectReview({
    kind: "Endpoints",
    apiVersion: "v1",
    resource: "endpoints",
    operation,
    object,
    oldObject,
    userInfo: SYNCER,
  });

async function startWith(
  yaml: string,
  extra: Partial<ServeOptions["endpoints"]> = {},
  serveExtra: Partial<ServeOptions> = {},
): Promise<{ serve: StartedServe; url: string }> {
  const dir = mkdtempSync(join(tmpdir(), "vgate-ep-"));
  writeFileSync(join(dir, "vcluster.yaml"), yaml);
  const serve = await startServe(
    {
      port: 0,
      bindAddress: "127.0.0.1",
      groupDomain: "loft.sh",
      adminGroups: ["system:masters"],
      logLevel: "info",
      dev: true,
      ...serveExtra,
      endpoints: {
        config: join(dir, "vcluster.yaml"),
        vclusterName: VC.name,
        vclusterNamespace: VC.namespace,
        side: "host",
        onPatchError: "deny",
        deadlineMs: 200,
        workers: 1,
        ...extra,
      },
    },
    createLogger("silent", new Writable({ write: (_c, _e, cb) => cb() })),
  );
  const stop = async (): Promise<void> => {
    await serve.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  return {
    serve: { ...serve, stop },
    url: `https://127.0.0.1:${serve.server.port}/mutate/endpoints`,
  };
}

const EXAMPLE = readFileSync(resolve(repoRoot, "webhook/examples/vcluster.yaml"), "utf8");

describe("POST /mutate/endpoints over HTTPS", function () {
  this.timeout(30_000);

  describe("--side host", () => {
    let serve: StartedServe;
    let url: string;
    before(async () => ({ serve, url } = await startWith(EXAMPLE)));
    after(() => serve.stop());

    it("applies expressions to a synced host Endpoints on CREATE", async () => {
      const host = translateEndpointsToHost(virtualEp, VC);
      const r = await admit(url, endpointsReview("CREATE", host));
      assert.equal(r.allowed, true);
      const out = patched(host, r) as {
        metadata: { annotations: Record<string, string> };
        subsets: { addresses: { hostname: string }[] }[];
      };
      assert.equal(out.metadata.annotations.owner, "tenant-team-a");
      assert.equal(out.subsets[0]!.addresses[0]!.hostname, "db-0-my-vcluster");
      // Bookkeeping is left alone: vCluster needs it to map the object back.
      assert.equal(out.metadata.annotations["vcluster.loft.sh/object-name"], "db");
    });

    it("patches only the change set on UPDATE, never a value twice", async () => {
      const host = translateEndpointsToHost(virtualEp, VC);
      const stored = patched(host, await admit(url, endpointsReview("CREATE", host)));
      // The syncer recomputes subsets from the virtual object (unpatched) and keeps the annotations.
      const next = structuredClone(stored) as {
        subsets: { addresses: { hostname: string; ip: string }[] }[];
      };
      next.subsets[0]!.addresses[0]!.hostname = "db-0";
      next.subsets[0]!.addresses[0]!.ip = "10.0.0.9";
      const r = await admit(url, endpointsReview("UPDATE", next as Json, stored));
      const out = patched(next as Json, r) as {
        metadata: { annotations: Record<string, string> };
        subsets: { addresses: { hostname: string; ip: string }[] }[];
      };
      assert.equal(out.subsets[0]!.addresses[0]!.hostname, "db-0-my-vcluster");
      assert.equal(out.subsets[0]!.addresses[0]!.ip, "10.0.0.9");
      assert.equal(out.metadata.annotations.owner, "tenant-team-a", "not tenant-tenant-team-a");
    });

    it("passes Endpoints without vCluster's bookkeeping through untouched", async () => {
      const r = await admit(url, endpointsReview("CREATE", virtualEp));
      assert.equal(r.allowed, true);
      assert.equal(r.patch, undefined);
    });

    it("rejects requests for other resources as a misconfiguration", async () => {
      const body = endpointsReview("CREATE", virtualEp);
      ((body.request as Json).resource as Json).resource = "services";
      const r = await admit(url, body);
      assert.equal(r.allowed, false);
      assert.equal(r.status?.code, 400);
    });
  });

  describe("--side host: only the vCluster's own copies, only in namespaces it owns (EPS-19)", () => {
    const OWNER =
      "sync:\n  toHost:\n    endpoints:\n      patches:\n" +
      '        - path: metadata.annotations["owner"]\n          expression: \'"tenant-" + value\'\n';
    const MULTI =
      "sync:\n  toHost:\n    namespaces:\n      enabled: true\n      mappings:\n        byName:\n" +
      '          "team-*": "host-team-*"\n' +
      OWNER.slice("sync:\n  toHost:\n".length);
    /** The host copy vCluster makes, moved to `namespace` (bookkeeping anyone can write). */
    const copyIn = (namespace: string, vcluster = VC.name): Json => {
      const host = translateEndpointsToHost(virtualEp, VC) as { metadata: Json };
      host.metadata = {
        ...host.metadata,
        namespace,
        labels: { ...(host.metadata.labels as Json), "vcluster.loft.sh/managed-by": vcluster },
      };
      return host as Json;
    };

    it("admits forged bookkeeping outside the vCluster's namespace untouched, with a warning; its own is patched", async () => {
      const { serve, url } = await startWith(OWNER);
      try {
        const r = await admit(url, endpointsReview("CREATE", copyIn("payments")));
        assert.equal(r.allowed, true);
        assert.equal(r.patch, undefined, "not patched");
        assert.deepEqual(r.warnings, [
          `endpoints "payments/db-x-default-x-my-vcluster" not patched: host namespace "payments" does not belong to vCluster "my-vcluster": in single-namespace mode only "vcluster-my-vcluster" is its`,
        ]);
        const own = await admit(url, endpointsReview("CREATE", copyIn(VC.namespace)));
        assert.ok(own.patch, "the vCluster's own namespace is patched");
      } finally {
        await serve.stop();
      }
    });

    it("admits another vCluster's copy in its own namespace untouched", async () => {
      const { serve, url } = await startWith(OWNER);
      try {
        const r = await admit(url, endpointsReview("CREATE", copyIn(VC.namespace, "other-vc")));
        assert.equal(r.allowed, true);
        assert.equal(r.patch, undefined);
        assert.equal(r.warnings, undefined);
      } finally {
        await serve.stop();
      }
    });

    it("refuses with 503 while namespace labels cannot be read (multi-namespace mode, no API server)", async () => {
      const { serve, url } = await startWith(MULTI);
      try {
        const r = await admit(url, endpointsReview("CREATE", copyIn("host-team-a")));
        assert.equal(r.allowed, false);
        assert.equal(r.status?.code, 503);
        assert.match(
          r.status!.message,
          /cannot tell whether namespace "host-team-a" belongs to vCluster "my-vcluster"/,
        );
        assert.ok((await admit(url, endpointsReview("CREATE", copyIn(VC.namespace)))).patch);
      } finally {
        await serve.stop();
      }
    });
  });

  describe("patch errors", () => {
    const throwing =
      "sync:\n  toHost:\n    endpoints:\n      patches:\n        - path: metadata.annotations[*]\n          expression: 'value.nope.deeper'\n";
    const looping =
      "sync:\n  toHost:\n    endpoints:\n      patches:\n        - path: metadata.annotations[*]\n          expression: 'while (true) {}'\n";

    it("deny the write with a message naming the patch", async () => {
      const { serve, url } = await startWith(throwing);
      try {
        const r = await admit(
          url,
          endpointsReview("CREATE", translateEndpointsToHost(virtualEp, VC)),
        );
        assert.equal(r.allowed, false);
        assert.equal(r.status?.code, 400);
        assert.match(
          r.status!.message,
          /^endpoints "vcluster-my-vcluster\/db-x-default-x-my-vcluster": sync patch failed: .*patches\[0\]/,
        );
      } finally {
        await serve.stop();
      }
    });

    it("admit unchanged with a warning under --on-patch-error=allow", async () => {
      const { serve, url } = await startWith(throwing, { onPatchError: "allow" });
      try {
        const r = await admit(
          url,
          endpointsReview("CREATE", translateEndpointsToHost(virtualEp, VC)),
        );
        assert.equal(r.allowed, true);
        assert.equal(r.patch, undefined);
        assert.match(r.warnings?.[0] ?? "", /sync patch failed.*admitted unchanged/);
      } finally {
        await serve.stop();
      }
    });

    it("stop a runaway expression at the deadline and keep serving", async () => {
      const { serve, url } = await startWith(looping);
      try {
        const started = Date.now();
        const r = await admit(
          url,
          endpointsReview("CREATE", translateEndpointsToHost(virtualEp, VC)),
        );
        assert.equal(r.allowed, false);
        assert.match(r.status!.message, /patches\[0\]/);
        assert.ok(Date.now() - started < 5_000);
        const again = await admit(url, endpointsReview("CREATE", virtualEp));
        assert.equal(again.allowed, true);
      } finally {
        await serve.stop();
      }
    });
  });

  it("the webhook and `vgate patch` run one pipeline: same result, bookkeeping untouched", async () => {
    // Patches that would rewrite every annotation and label, vCluster's own included, and one
    // that would drop the whole metadata map on the way back.
    const yaml =
      "sync:\n  toHost:\n    endpoints:\n      patches:\n" +
      "        - path: metadata.annotations[*]\n          expression: '\"x-\" + value'\n" +
      "        - path: metadata.labels[*]\n          expression: '\"y-\" + value'\n";
    const host = translateEndpointsToHost(virtualEp, VC) as {
      metadata: { annotations: Record<string, string>; labels: Record<string, string> };
    };
    const { serve, url } = await startWith(yaml);
    try {
      const fromWebhook = patched(host, await admit(url, endpointsReview("CREATE", host)));
      const dir = mkdtempSync(join(tmpdir(), "vgate-pipeline-"));
      try {
        writeFileSync(join(dir, "vcluster.yaml"), yaml);
        writeFileSync(join(dir, "host.json"), JSON.stringify(host));
        const cli = spawnSync(
          resolve(repoRoot, "webhook/bin/vgate"),
          [
            "patch",
            "--config",
            join(dir, "vcluster.yaml"),
            "--direction",
            "toHost",
            "--vcluster-name",
            VC.name,
            "--vcluster-namespace",
            VC.namespace,
            join(dir, "host.json"),
          ],
          { encoding: "utf8", timeout: 30_000 },
        );
        assert.equal(cli.status, 0, cli.stderr);
        assert.deepEqual(JSON.parse(cli.stdout), fromWebhook);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
      const meta = (fromWebhook as typeof host).metadata;
      for (const [key, value] of Object.entries(host.metadata.annotations)) {
        const expected = key.startsWith("vcluster.loft.sh/") ? value : `x-${value}`;
        assert.equal(meta.annotations[key], expected, key);
      }
      for (const [key, value] of Object.entries(host.metadata.labels)) {
        const expected = key.startsWith("vcluster.loft.sh/") ? value : `y-${value}`;
        assert.equal(meta.labels[key], expected, key);
      }
      assert.ok(
        Object.keys(host.metadata.annotations).some((k) => k.startsWith("vcluster.loft.sh/")),
      );
    } finally {
      await serve.stop();
    }
  });

  it("--side virtual applies reverseExpressions to virtual updates", async () => {
    const { serve, url } = await startWith(EXAMPLE, { side: "virtual" });
    try {
      const next = structuredClone(virtualEp) as {
        metadata: { annotations: Record<string, string> };
      };
      next.metadata.annotations.owner = "tenant-team-b";
      const r = await admit(url, endpointsReview("UPDATE", next as Json, virtualEp));
      const out = patched(next as Json, r) as { metadata: { annotations: Record<string, string> } };
      assert.equal(out.metadata.annotations.owner, "team-b");
      assert.equal((await admit(url, endpointsReview("CREATE", virtualEp))).patch, undefined);
    } finally {
      await serve.stop();
    }
  });

  // KND-40, as on /mutate/patches/virtual: a patch without a reverseExpression cannot tell a
  // tenant's write from the syncer's, so the value sent is kept; vgate's own patch coming back is
  // still cancelled.
  it("--side virtual keeps a tenant's change of a field whose patch has no reverseExpression", async () => {
    const config = [
      "sync:",
      "  toHost:",
      "    endpoints:",
      "      enabled: true",
      "      patches:",
      '        - path: metadata.annotations["tier"]',
      "          expression: '\"svc-\" + value'",
      "",
    ].join("\n");
    const { serve, url } = await startWith(config, { side: "virtual" });
    type Annotated = { metadata: { annotations: Record<string, string> } };
    const old = structuredClone(virtualEp) as unknown as Annotated;
    old.metadata.annotations.tier = "db";
    const update = async (tier: string): Promise<string | undefined> => {
      const next = structuredClone(old);
      next.metadata.annotations.tier = tier;
      const r = await admit(url, endpointsReview("UPDATE", next as Json, old as Json));
      return (patched(next as Json, r) as Annotated).metadata.annotations.tier;
    };
    try {
      assert.equal(await update("cache"), "cache", "the tenant's own change");
      assert.equal(await update("svc-db"), "db", "vgate's patch of db, coming back");
    } finally {
      await serve.stop();
    }
  });

  it("passes everything through when sync.toHost.endpoints.enabled is false", async () => {
    const { serve, url } = await startWith(EXAMPLE.replace("enabled: true", "enabled: false"));
    try {
      const r = await admit(
        url,
        endpointsReview("CREATE", translateEndpointsToHost(virtualEp, VC)),
      );
      assert.equal(r.allowed, true);
      assert.equal(r.patch, undefined);
    } finally {
      await serve.stop();
    }
  });

  (HAVE_KUBE ? describe : describe.skip)(
    `--virtual-kubeconfig, reading a real virtual cluster${KUBE_SKIP_REASON}`,
    function () {
      this.timeout(60_000);
      // The shared cluster plays the virtual cluster: a namespace of this test's own holds the
      // virtual Endpoints, which vgate reads as a service account that may get endpoints there.
      const namespace = `vgate-ep-${randomBytes(3).toString("hex")}`;
      const yaml =
        "sync:\n  toHost:\n    endpoints:\n      patches:\n        - path: metadata.annotations.owner\n" +
        '          expression: \'context.virtualObject === null ? "gone" : ' +
        '(context.virtualObject.metadata.annotations["real-owner"] || "rebuilt")\'\n';
      const inNamespace = (name: string): JsonObject => {
        const ep = structuredClone(virtualEp) as { metadata: Json };
        ep.metadata = { ...ep.metadata, name, namespace };
        delete ep.metadata.uid;
        return ep as JsonObject;
      };
      /** The host copy vCluster would make: built from the virtual object without real-owner. */
      const hostOf = (name: string): Json => translateEndpointsToHost(inNamespace(name), VC);
      const live = inNamespace("db") as KubeObject;
      (live.metadata.annotations as Record<string, string>)["real-owner"] =
        "from-the-virtual-cluster";
      const reader = "vcluster-syncer";
      const rbac: KubeObject[] = [
        {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "Role",
          metadata: { name: reader, namespace },
          rules: [{ apiGroups: [""], resources: ["endpoints"], verbs: ["get"] }],
        },
        {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "RoleBinding",
          metadata: { name: reader, namespace },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: reader },
          subjects: [{ kind: "ServiceAccount", name: reader, namespace }],
        },
      ];
      const serviceAccount = (name: string): KubeObject => ({
        apiVersion: "v1",
        kind: "ServiceAccount",
        metadata: { name, namespace },
      });
      let cluster: VgateCluster;
      let readerKubeconfig: string;
      let strangerKubeconfig: string;

      before(async () => {
        cluster = await sharedCluster();
        const { plane, admin } = cluster;
        const token = await plane.serviceAccountToken(namespace, reader);
        readerKubeconfig = await plane.tokenKubeconfig(token, reader);
        const stranger = await plane.serviceAccountToken(namespace, "stranger");
        strangerKubeconfig = await plane.tokenKubeconfig(stranger, "stranger");
        for (const o of rbac) await admin.apply(o);
        await admin.create(live);
      });

      after(async () => {
        const admin = cluster?.admin;
        if (!admin) return;
        // No controller-manager runs: the namespace stays Terminating, so empty it first.
        for (const o of [live, ...rbac, serviceAccount(reader), serviceAccount("stranger")]) {
          await admin.delete(o);
        }
        await admin.delete({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } });
      });

      /** The owner annotation vgate's patch gives the host copy of the virtual `name`. */
      async function owner(url: string, name = "db"): Promise<unknown> {
        const host = hostOf(name);
        const r = await admit(url, endpointsReview("CREATE", host));
        assert.equal(r.allowed, true, r.status?.message);
        return ((patched(host, r).metadata as Json).annotations as Json).owner;
      }

      it("reads context.virtualObject from the virtual cluster, as it is at each request", async () => {
        const withReader = await startWith(yaml, {
          virtualKubeconfig: readerKubeconfig,
          deadlineMs: 5_000,
        });
        const withoutReader = await startWith(yaml, { deadlineMs: 5_000 });
        try {
          assert.equal(await owner(withReader.url), "from-the-virtual-cluster");
          // Without it, the virtual object is rebuilt from the host's bookkeeping (no real-owner).
          assert.equal(await owner(withoutReader.url), "rebuilt");
          // Read per request, not cached: a change in the virtual cluster shows at once.
          const res = await cluster.admin.request(
            "PATCH",
            `/api/v1/namespaces/${namespace}/endpoints/db`,
            { metadata: { annotations: { "real-owner": "changed" } } },
            { "Content-Type": "application/merge-patch+json" },
          );
          assert.equal(res.status, 200, JSON.stringify(res.body));
          assert.equal(await owner(withReader.url), "changed");
        } finally {
          await withReader.serve.stop();
          await withoutReader.serve.stop();
        }
      });

      it("gives null as context.virtualObject when the virtual Endpoints does not exist", async () => {
        const { serve, url } = await startWith(yaml, {
          virtualKubeconfig: readerKubeconfig,
          deadlineMs: 5_000,
        });
        try {
          assert.equal(await owner(url, "no-such-endpoints"), "gone");
        } finally {
          await serve.stop();
        }
      });

      it("refuses the write with 503 when the virtual cluster forbids the read", async () => {
        const { serve, url } = await startWith(yaml, {
          virtualKubeconfig: strangerKubeconfig,
          deadlineMs: 5_000,
        });
        try {
          const r = await admit(url, endpointsReview("CREATE", hostOf("db")));
          assert.equal(r.allowed, false);
          assert.equal(r.status?.code, 503);
          assert.match(
            r.status!.message,
            new RegExp(
              `^cannot read virtual endpoints ${namespace}/db: API server answered 403 Forbidden: ` +
                `endpoints "db" is forbidden: User "system:serviceaccount:${namespace}:stranger" ` +
                `cannot get resource "endpoints" in API group "" in the namespace "${namespace}"`,
            ),
          );
        } finally {
          await serve.stop();
        }
      });
    },
  );

  (HAVE_KUBE ? describe : describe.skip)(
    `--side host, namespace ownership read from a real API server${KUBE_SKIP_REASON}`,
    function () {
      this.timeout(60_000);
      const id = randomBytes(3).toString("hex");
      const ns = {
        owned: `host-team-own-${id}`,
        foreign: `host-team-pay-${id}`,
        other: `host-team-oth-${id}`,
      };
      const labels = (name: string, namespace: string) => ({
        "vcluster.loft.sh/vcluster-name": name,
        "vcluster.loft.sh/vcluster-namespace": namespace,
      });
      const namespaces: KubeObject[] = [
        {
          apiVersion: "v1",
          kind: "Namespace",
          metadata: { name: ns.owned, labels: labels(VC.name, VC.namespace) },
        },
        {
          apiVersion: "v1",
          kind: "Namespace",
          metadata: { name: ns.foreign, labels: { team: "payments" } },
        },
        {
          apiVersion: "v1",
          kind: "Namespace",
          metadata: { name: ns.other, labels: labels("other-vc", VC.namespace) },
        },
      ];
      const config =
        "sync:\n  toHost:\n    namespaces:\n      enabled: true\n      mappings:\n        byName:\n" +
        '          "team-*": "host-team-*"\n    endpoints:\n      patches:\n' +
        '        - path: metadata.annotations["owner"]\n          expression: \'"tenant-" + value\'\n';
      const copyIn = (namespace: string): Json => {
        const host = translateEndpointsToHost(virtualEp, VC) as { metadata: Json };
        host.metadata = { ...host.metadata, namespace };
        return host as Json;
      };
      let cluster: VgateCluster;
      let started: { serve: StartedServe; url: string } | undefined;

      before(async () => {
        cluster = await sharedCluster();
        for (const n of namespaces) await cluster.admin.apply(n);
        started = await startWith(
          config,
          { deadlineMs: 5_000 },
          { kubeconfig: cluster.kubeconfigPath },
        );
      });
      after(async () => {
        await started?.serve.stop();
        for (const n of namespaces) await cluster?.admin.delete(n);
      });

      it("patches a copy in a namespace labelled for the vCluster; leaves forged bookkeeping elsewhere untouched", async () => {
        const url = started!.url;
        // The namespace cache syncs shortly after start: until then such a write is refused (503).
        let owned: AdmissionAnswer | undefined;
        const deadline = Date.now() + 30_000;
        while (
          (owned = await admit(url, endpointsReview("CREATE", copyIn(ns.owned)))).status?.code ===
          503
        ) {
          assert.ok(Date.now() < deadline, "the namespace cache syncs");
          await new Promise((r) => setTimeout(r, 200));
        }
        assert.equal(owned.allowed, true);
        const out = patched(copyIn(ns.owned), owned) as {
          metadata: { annotations: Record<string, string> };
        };
        assert.equal(out.metadata.annotations["owner"], "tenant-team-a");
        const foreign = await admit(url, endpointsReview("CREATE", copyIn(ns.foreign)));
        assert.equal(foreign.patch, undefined);
        assert.match(
          foreign.warnings?.[0] ?? "",
          new RegExp(
            `host namespace "${ns.foreign}" does not belong to vCluster "my-vcluster": it lacks the labels`,
          ),
        );
        const other = await admit(url, endpointsReview("CREATE", copyIn(ns.other)));
        assert.equal(other.patch, undefined);
        assert.match(other.warnings?.[0] ?? "", /it is labelled for vCluster "other-vc"/);
        const missing = await admit(url, endpointsReview("CREATE", copyIn(`host-team-none-${id}`)));
        assert.equal(missing.patch, undefined);
      });
    },
  );

  (HAVE_KUBE ? describe : describe.skip)(
    `--side host, called by kube-apiserver${KUBE_SKIP_REASON}`,
    function () {
      this.timeout(60_000);
      // vgate as a host cluster installs it: a MutatingWebhookConfiguration for Endpoints, here
      // limited to a namespace of this test's own (the vCluster's host namespace), so kube-apiserver
      // sends its own AdmissionReviews and applies vgate's patches to what it stores.
      const id = randomBytes(3).toString("hex");
      const hostNamespace = `vcluster-ep-${id}`;
      const vc = { ...VC, namespace: hostNamespace };
      const host = translateEndpointsToHost(virtualEp, vc) as KubeObject;
      const hostPath = `/api/v1/namespaces/${hostNamespace}/endpoints`;
      const namespaceObject: KubeObject = {
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: hostNamespace },
      };
      // Like webhook/examples/vcluster.yaml, but the hostname stays a DNS label: kube refuses an
      // Endpoints hostname with dots ("must not contain dots"), as the example's patch makes.
      const config =
        "sync:\n  toHost:\n    endpoints:\n      patches:\n" +
        '        - path: metadata.annotations["owner"]\n          expression: \'"tenant-" + value\'\n' +
        "        - path: subsets[*].addresses[*].hostname\n" +
        "          expression: 'value + \"-\" + context.vcluster.name'\n";
      let webhook: KubeObject | undefined;
      let cluster: VgateCluster;
      let serve: StartedServe | undefined;
      let dir: string | undefined;

      type Stored = KubeObject & {
        metadata: { annotations: Record<string, string>; resourceVersion: string };
        subsets: { addresses: { hostname: string; ip: string }[] }[];
      };

      before(async () => {
        cluster = await sharedCluster();
        const admin = cluster.admin;
        await admin.apply(namespaceObject);
        const tls = await servingCert(cluster.plane.ca, ["localhost"]);
        dir = mkdtempSync(join(tmpdir(), "vgate-ep-tls-"));
        writeFileSync(join(dir, "tls.crt"), tls.cert);
        writeFileSync(join(dir, "tls.key"), tls.key, { mode: 0o600 });
        const started = await startWith(
          config,
          { vclusterNamespace: hostNamespace, deadlineMs: 5_000 },
          { tlsCertFile: join(dir, "tls.crt"), tlsKeyFile: join(dir, "tls.key") },
        );
        serve = started.serve;
        webhook = {
          apiVersion: "admissionregistration.k8s.io/v1",
          kind: "MutatingWebhookConfiguration",
          metadata: { name: `vgate-endpoints-${id}` },
          webhooks: [
            {
              name: `endpoints-${id}.vgate.example.com`,
              admissionReviewVersions: ["v1"],
              sideEffects: "None",
              failurePolicy: "Fail",
              timeoutSeconds: 10,
              clientConfig: {
                url: started.url,
                caBundle: Buffer.from(cluster.caPem).toString("base64"),
              },
              rules: [
                {
                  apiGroups: [""],
                  apiVersions: ["v1"],
                  resources: ["endpoints"],
                  operations: ["CREATE", "UPDATE"],
                  scope: "Namespaced",
                },
              ],
              namespaceSelector: {
                matchLabels: { "kubernetes.io/metadata.name": hostNamespace },
              },
            },
          ],
        };
        await admin.create(webhook);
        // kube-apiserver picks the configuration up a moment after it is written.
        const deadline = Date.now() + 30_000;
        for (;;) {
          const res = await admin.request<Stored>("POST", `${hostPath}?dryRun=All`, host);
          if (res.status === 201 && res.body.metadata.annotations.owner === "tenant-team-a") break;
          if (Date.now() > deadline) {
            throw new Error(`the webhook is not called: ${res.status} ${JSON.stringify(res.body)}`);
          }
          await new Promise((r) => setTimeout(r, 200));
        }
      });

      after(async () => {
        const admin = cluster?.admin;
        if (webhook) await admin.delete(webhook);
        await serve?.stop();
        if (dir) rmSync(dir, { recursive: true, force: true });
        if (!admin) return;
        await admin.delete(host);
        // No controller-manager runs: the namespace stays Terminating, emptied above.
        await admin.delete(namespaceObject);
      });

      it("stores the patched object on CREATE, and patches only the change set on UPDATE", async () => {
        const created = await cluster.admin.request<Stored>("POST", hostPath, host);
        assert.equal(created.status, 201, JSON.stringify(created.body));
        const stored = created.body;
        assert.equal(stored.metadata.annotations.owner, "tenant-team-a");
        assert.equal(stored.subsets[0]!.addresses[0]!.hostname, "db-0-my-vcluster");
        assert.equal(stored.metadata.annotations["vcluster.loft.sh/object-name"], "db");
        // The syncer recomputes subsets from the virtual object (unpatched) and keeps the rest.
        const next = structuredClone(stored);
        next.subsets[0]!.addresses[0]!.hostname = "db-0";
        next.subsets[0]!.addresses[0]!.ip = "10.0.0.9";
        const updated = await cluster.admin.request<Stored>(
          "PUT",
          `${hostPath}/${encodeURIComponent(String(host.metadata.name))}`,
          next,
        );
        assert.equal(updated.status, 200, JSON.stringify(updated.body));
        const address = updated.body.subsets[0]!.addresses[0]!;
        assert.equal(address.hostname, "db-0-my-vcluster");
        assert.equal(address.ip, "10.0.0.9");
        assert.equal(updated.body.metadata.annotations.owner, "tenant-team-a");
      });
    },
  );
});
