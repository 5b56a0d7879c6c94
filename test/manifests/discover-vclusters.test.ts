// manifests/overlays/discover-vclusters, rendered by the real `kubectl kustomize` with the base and
// the cert-manager Component: vgate's flags parse to --discover-vclusters, the webhook sends
// /mutate/patches only objects a vCluster manages, of namespaced sync.toHost kinds (kube-apiserver
// accepts it, dry run), and its ClusterRole, applied to the test rig's real kube-apiserver,
// lets vgate's service account read Secrets and write Events and nothing more (the API server's
// own SubjectAccessReview answers).

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { parseAllDocuments } from "yaml";
import { parseServeArgs } from "../../webhook/src/cli/serve-options.js";
import { PATCH_KINDS } from "../../webhook/src/config/patch-kinds.js";
import { sharedCluster, type VgateCluster } from "../support/cluster.js";
import { repoRoot } from "../support/fixtures.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../support/kube/binaries.js";
import { ANY_KUBECTL_SKIP_REASON, HAVE_ANY_KUBECTL } from "../support/kubectl.js";

type Json = Record<string, unknown>;
const MANIFESTS = join(repoRoot, "manifests");

function kustomize(dir: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile("kubectl", ["kustomize", dir], { timeout: 30_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`kubectl kustomize: ${stderr}`)) : resolve(stdout),
    );
  });
}

(HAVE_ANY_KUBECTL ? describe : describe.skip)(
  `manifests/overlays/discover-vclusters${ANY_KUBECTL_SKIP_REASON}`,
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
      scratch = await mkdtemp(join(tmpdir(), "vgate-discover-"));
      const rel = (p: string): string => relative(scratch, p);
      await writeFile(
        join(scratch, "kustomization.yaml"),
        [
          "apiVersion: kustomize.config.k8s.io/v1beta1",
          "kind: Kustomization",
          `resources: [${JSON.stringify(rel(MANIFESTS))}]`,
          `components: ${JSON.stringify(["cert-manager", "discover-vclusters"].map((c) => rel(join(MANIFESTS, "overlays", c))))}`,
          "",
        ].join("\n"),
      );
      objects = parseAllDocuments(await kustomize(scratch)).map((d) => d.toJS() as Json);
    });
    after(async () => {
      if (scratch) await rm(scratch, { recursive: true, force: true });
    });

    it("runs vgate serve --discover-vclusters with flags vgate accepts", () => {
      const spec = ((find("Deployment", "vgate").spec as Json).template as Json).spec as Json;
      const vgate = (spec.containers as Json[]).find((c) => c.name === "vgate")!;
      const args = (vgate.args as string[]).slice(1).map((a) =>
        // The Downward API and ConfigMap values the kubelet substitutes.
        a.replace("$(VGATE_KEY_STORAGE)", "plain").replace("$(POD_NAMESPACE)", "vgate-system"),
      );
      const opts = parseServeArgs(args);
      assert.ok(opts !== "help");
      assert.ok(opts.discovery, "--discover-vclusters");
      assert.equal(opts.endpoints, undefined);
      assert.equal(opts.discovery.selfNamespace, "vgate-system");
    });

    const hook = (): Json => {
      const config = find("MutatingWebhookConfiguration", "vgate-ownedaccesskeys");
      const found = (config.webhooks as Json[]).find((w) =>
        String(w.name).startsWith("mutate.vclusters."),
      );
      assert.ok(found, "the webhook is there");
      return found;
    };

    it("registers /mutate/patches for objects some vCluster manages only, never kube-system or vgate's own", () => {
      const h = hook();
      assert.deepEqual(h.objectSelector, {
        matchExpressions: [{ key: "vcluster.loft.sh/managed-by", operator: "Exists" }],
      });
      assert.deepEqual(h.matchConditions, [
        {
          name: "vcluster-copy",
          expression:
            "has(object.metadata.annotations) && 'vcluster.loft.sh/object-name' in object.metadata.annotations",
        },
      ]);
      assert.deepEqual(h.namespaceSelector, {
        matchExpressions: [
          {
            key: "kubernetes.io/metadata.name",
            operator: "NotIn",
            values: ["kube-system", "vgate-system"],
          },
        ],
      });
      assert.equal(h.failurePolicy, "Fail");
      assert.equal((h.clientConfig as { service: Json }).service.path, "/mutate/patches");
    });

    it("registers namespaced sync.toHost kinds only: by default vCluster's default ones less Secrets", () => {
      const rules = hook().rules as Json[];
      const names = rules.map((r) => {
        assert.deepEqual(r.operations, ["CREATE", "UPDATE"]);
        assert.deepEqual(r.apiVersions, ["*"]);
        assert.equal(r.scope, "Namespaced");
        const [group] = r.apiGroups as string[];
        const [resource] = r.resources as string[];
        const kind = PATCH_KINDS.find(
          (k) => k.section === "toHost" && k.group === group && k.resource === resource,
        );
        assert.ok(kind, `${resource}.${group} is a sync.toHost kind`);
        assert.equal(kind.namespaced, true, `${resource} is namespaced`);
        return group === "" ? resource : `${resource}.${group}`;
      });
      assert.deepEqual(names, [
        "endpoints",
        "endpointslices.discovery.k8s.io",
        "pods",
        "services",
        "configmaps",
        "persistentvolumeclaims",
      ]);
    });

    (HAVE_KUBE ? describe : describe.skip)(
      `its RBAC on a real API server${KUBE_SKIP_REASON}`,
      () => {
        let cluster: VgateCluster;
        const suffix = randomBytes(3).toString("hex");
        const user = `system:serviceaccount:disc-${suffix}:vgate`;
        const applied: Json[] = [];

        before(async () => {
          cluster = await sharedCluster();
          const role = structuredClone(find("ClusterRole", "vgate-vcluster-configs"));
          (role.metadata as Json).name = `vgate-vcluster-configs-${suffix}`;
          const binding = structuredClone(find("ClusterRoleBinding", "vgate-vcluster-configs"));
          (binding.metadata as Json).name = `vgate-vcluster-configs-${suffix}`;
          (binding.roleRef as Json).name = `vgate-vcluster-configs-${suffix}`;
          binding.subjects = [
            { kind: "ServiceAccount", name: "vgate", namespace: `disc-${suffix}` },
          ];
          for (const o of [role, binding]) {
            delete (o.metadata as Json).labels;
            applied.push(await cluster.admin.create(o as never));
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

        it("the webhook configuration is one kube-apiserver accepts (its CEL compiles)", async () => {
          const config = structuredClone(
            find("MutatingWebhookConfiguration", "vgate-ownedaccesskeys"),
          );
          (config.metadata as Json).name = `vgate-discover-${suffix}`;
          config.webhooks = [hook()];
          const res = await cluster.admin.request<Json>(
            "POST",
            "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations?dryRun=All",
            config,
          );
          assert.equal(res.status, 201, JSON.stringify(res.body));
        });

        it("reads Secrets in any namespace and writes Events; nothing else", async () => {
          for (const verb of ["get", "list", "watch"]) {
            assert.equal(
              await allowed({ verb, resource: "secrets", namespace: "vc-ns" }),
              true,
              verb,
            );
          }
          assert.equal(
            await allowed({ verb: "list", resource: "secrets" }),
            true,
            "all namespaces",
          );
          for (const verb of ["create", "patch"]) {
            assert.equal(
              await allowed({ verb, resource: "events", namespace: "vc-ns" }),
              true,
              verb,
            );
          }
          for (const verb of ["create", "update", "patch", "delete"]) {
            assert.equal(
              await allowed({ verb, resource: "secrets", namespace: "vc-ns" }),
              false,
              `${verb} secrets`,
            );
          }
          assert.equal(
            await allowed({ verb: "get", resource: "configmaps", namespace: "vc-ns" }),
            false,
          );
          assert.equal(
            await allowed({ verb: "delete", resource: "events", namespace: "vc-ns" }),
            false,
          );
        });
      },
    );
  },
);
