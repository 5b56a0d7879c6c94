// manifests/overlays/key-lifecycle, expired-key-retention and monitoring, rendered by the real
// `kubectl kustomize` with the base and the cert-manager Component: vgate's flags parse to expiry
// warnings with a Lease in its namespace and a 30-day retention; the alerts use the metrics vgate
// exports; and the RBAC, applied to the test rig's real kube-apiserver, lets vgate's service
// account create Events in "default", hold its one Lease and delete keys, and nothing more (the
// API server's own SubjectAccessReview answers).

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { parseAllDocuments } from "yaml";
import { parseServeArgs } from "../../webhook/src/cli/serve-options.js";
import { createMetrics } from "../../webhook/src/server/metrics.js";
import { sharedCluster, type VgateCluster } from "../support/cluster.js";
import { repoRoot } from "../support/fixtures.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../support/kube/binaries.js";
import { ANY_KUBECTL_SKIP_REASON, HAVE_ANY_KUBECTL } from "../support/kubectl.js";

type Json = Record<string, unknown>;
const MANIFESTS = join(repoRoot, "manifests");
const COMPONENTS = ["cert-manager", "key-lifecycle", "expired-key-retention", "monitoring"];
const DAY = 86_400_000;

function kustomize(dir: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile("kubectl", ["kustomize", dir], { timeout: 30_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`kubectl kustomize: ${stderr}`)) : resolve(stdout),
    );
  });
}

(HAVE_ANY_KUBECTL ? describe : describe.skip)(
  `manifests/overlays/key-lifecycle, expired-key-retention and monitoring${ANY_KUBECTL_SKIP_REASON}`,
  function () {
    this.timeout(90_000);
    let scratch: string;
    let objects: Json[];
    const find = (kind: string, name: string): Json => {
      const found = objects.filter(
        (o) => o.kind === kind && (o.metadata as Json | undefined)?.name === name,
      );
      assert.equal(found.length, 1, `one ${kind} ${name}`);
      return found[0]!;
    };

    before(async () => {
      scratch = await mkdtemp(join(tmpdir(), "vgate-lifecycle-"));
      const rel = (p: string): string => relative(scratch, p);
      await writeFile(
        join(scratch, "kustomization.yaml"),
        [
          "apiVersion: kustomize.config.k8s.io/v1beta1",
          "kind: Kustomization",
          `resources: [${JSON.stringify(rel(MANIFESTS))}]`,
          `components: ${JSON.stringify(COMPONENTS.map((c) => rel(join(MANIFESTS, "overlays", c))))}`,
          "",
        ].join("\n"),
      );
      objects = parseAllDocuments(await kustomize(scratch)).map((d) => d.toJS() as Json);
    });
    after(async () => {
      if (scratch) await rm(scratch, { recursive: true, force: true });
    });

    it("runs vgate serve with expiry warnings, a Lease where it runs, and a 30-day retention", () => {
      const spec = ((find("Deployment", "vgate").spec as Json).template as Json).spec as Json;
      const vgate = (spec.containers as Json[]).find((c) => c.name === "vgate")!;
      const args = (vgate.args as string[]).slice(1).map((a) =>
        // The Downward API and ConfigMap values the kubelet substitutes.
        a.replace("$(VGATE_KEY_STORAGE)", "plain").replace("$(POD_NAMESPACE)", "vgate-system"),
      );
      const opts = parseServeArgs(args);
      assert.ok(opts !== "help");
      const lifecycle = opts.lifecycle!;
      assert.equal(lifecycle.warnings, true);
      assert.deepEqual(lifecycle.thresholdsMs, [7 * DAY, DAY]);
      assert.equal(lifecycle.retentionMs, 30 * DAY);
      assert.equal(lifecycle.leaderElection.enabled, true);
      assert.equal(lifecycle.leaderElection.namespace, "vgate-system");
      // The Role names the Lease vgate uses.
      const lease = find("Role", "vgate-key-lifecycle-lease");
      const named = (lease.rules as Json[]).find((r) => r.resourceNames);
      assert.deepEqual(named?.resourceNames, [lifecycle.leaderElection.id]);
      assert.equal((lease.metadata as Json).namespace, lifecycle.leaderElection.namespace);
    });

    it("alerts on metrics vgate exports", async () => {
      const exported = (await createMetrics(false).registry.getMetricsAsJSON()).map((m) => m.name);
      const rule = find("PrometheusRule", "vgate-key-expiry");
      const groups = (rule.spec as { groups: { rules: { alert: string; expr: string }[] }[] })
        .groups;
      const exprs = groups.flatMap((g) => g.rules.map((r) => r.expr));
      assert.ok(exprs.length >= 2);
      for (const expr of exprs) {
        const names = expr.match(/vgate_[a-z_]+/g) ?? [];
        assert.ok(names.length > 0, expr);
        for (const name of names) assert.ok(exported.includes(name), `${name} is exported`);
      }
      assert.ok(exprs.includes("min by (name) (vgate_accesskey_expiry_seconds) < 86400"));
    });

    (HAVE_KUBE ? describe : describe.skip)(
      `their RBAC on a real API server${KUBE_SKIP_REASON}`,
      () => {
        let cluster: VgateCluster;
        const suffix = randomBytes(3).toString("hex");
        const user = `system:serviceaccount:klc-${suffix}:vgate`;
        const applied: Json[] = [];

        before(async () => {
          cluster = await sharedCluster();
          const roles: [string, string][] = [
            ["Role", "vgate-key-events"],
            ["Role", "vgate-key-lifecycle-lease"],
            ["ClusterRole", "vgate-expired-keys"],
          ];
          for (const [kind, name] of roles) {
            const role = structuredClone(find(kind, name));
            (role.metadata as Json).name = `${name}-${suffix}`;
            const binding = structuredClone(find(`${kind}Binding`, name));
            (binding.metadata as Json).name = `${name}-${suffix}`;
            (binding.roleRef as Json).name = `${name}-${suffix}`;
            binding.subjects = [
              { kind: "ServiceAccount", name: "vgate", namespace: `klc-${suffix}` },
            ];
            for (const o of [role, binding]) {
              delete (o.metadata as Json).labels;
              applied.push(await cluster.admin.create(o as never));
            }
          }
        });
        after(async () => {
          for (const o of applied) await cluster?.admin.delete(o as never);
        });

        async function allowed(attributes: Json): Promise<boolean> {
          const res = await cluster.admin.request<{ status: { allowed: boolean } }>(
            "POST",
            "/apis/authorization.k8s.io/v1/subjectaccessreviews",
            {
              apiVersion: "authorization.k8s.io/v1",
              kind: "SubjectAccessReview",
              spec: { user, groups: ["system:serviceaccounts"], resourceAttributes: attributes },
            },
          );
          assert.equal(res.status, 201);
          return res.body.status.allowed;
        }

        it("creates Events in default only, holds its one Lease, deletes keys; nothing else", async () => {
          const lease = { group: "coordination.k8s.io", resource: "leases" };
          const keys = { group: "management.loft.sh", resource: "ownedaccesskeys" };
          const yes: Json[] = [
            { verb: "create", resource: "events", namespace: "default" },
            { verb: "create", ...lease, namespace: "vgate-system" },
            { verb: "get", ...lease, namespace: "vgate-system", name: "vgate-key-lifecycle" },
            { verb: "update", ...lease, namespace: "vgate-system", name: "vgate-key-lifecycle" },
            { verb: "delete", ...keys, name: "any-key" },
          ];
          const no: Json[] = [
            { verb: "create", resource: "events", namespace: "kube-system" },
            { verb: "patch", resource: "events", namespace: "default" },
            { verb: "delete", resource: "events", namespace: "default" },
            { verb: "update", ...lease, namespace: "vgate-system", name: "another-lease" },
            { verb: "create", ...lease, namespace: "kube-system" },
            { verb: "delete", ...lease, namespace: "vgate-system", name: "vgate-key-lifecycle" },
            { verb: "update", ...keys, name: "any-key" },
            { verb: "create", ...keys },
          ];
          for (const a of yes) assert.equal(await allowed(a), true, JSON.stringify(a));
          for (const a of no) assert.equal(await allowed(a), false, JSON.stringify(a));
        });
      },
    );
  },
);
