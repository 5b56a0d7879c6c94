// manifests/sync/ as kustomize renders it: vgate sync's host install (the base, and with the
// multi-namespace Component), built by the real `kubectl kustomize` as an install builds it. First
// what the rendering must hold: the objects and their namespace, the Deployment (replicas, security
// context, probes on the ports vgate sync binds, a grace period longer than its shutdown), its args
// read by vgate sync's own option parser, RBAC that is exactly manifests/sync/'s RBAC files (which
// the contract suite runs vgate sync under, test/contract/sync/), and vcluster.env followed
// everywhere. Then on the shared test cluster: every object accepted by kube-apiserver under the
// restricted Pod Security Standard, and two replicas of vgate sync run in process with the
// Deployment's args, the files its volumes hold, and the pod's service account: both ready, one
// leads and syncs, and the other takes over when it stops.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import http from "node:http";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { parseAllDocuments, parse as parseYaml } from "yaml";
import { STOP_AFTER_TIMEOUT_MS } from "../../webhook/src/cli/sync.js";
import { startController, type RunningController } from "../../webhook/src/cli/sync-controller.js";
import { parseSyncArgs, type SyncOptions } from "../../webhook/src/cli/sync-options.js";
import { createLogger } from "../../webhook/src/server/logger.js";
import { sharedCluster, type VgateCluster } from "../support/cluster.js";
import { repoFile, repoRoot } from "../support/fixtures.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../support/kube/binaries.js";
import type { KubeObject } from "../support/kube/kube-client.js";
import { kubeconfigYaml } from "../support/kube/kubeconfig-file.js";
import { waitForAccess } from "../support/kube/rbac.js";
import { HAVE_ANY_KUBECTL, ANY_KUBECTL_SKIP_REASON, kubectlFor } from "../support/kubectl.js";
import { manifestObjects, MANIFEST_VCLUSTER, SYNC_SERVICE_ACCOUNT } from "../support/sync-rig.js";
import { until } from "../support/until.js";

type Json = Record<string, unknown>;

const SYNC = join(repoRoot, "manifests/sync");
const PART_OF = { "app.kubernetes.io/part-of": "vgate" };
const POD_LABELS = { "app.kubernetes.io/name": "vgate", "app.kubernetes.io/component": "sync" };

interface Rendering {
  text: string;
  objects: Json[];
}

const obj = (v: unknown, what = "value"): Json => {
  assert.ok(typeof v === "object" && v !== null && !Array.isArray(v), `${what}: not an object`);
  return v as Json;
};
const list = (v: unknown, what = "value"): unknown[] => {
  assert.ok(Array.isArray(v), `${what}: not a list: ${JSON.stringify(v)}`);
  return v;
};
const meta = (o: Json): Json => obj(o.metadata, "metadata");

function run(
  cmd: string,
  args: readonly string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { timeout: 30_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

function parse(text: string): Json[] {
  return parseAllDocuments(text).map((d) => {
    assert.deepEqual(d.errors, [], "YAML errors in kustomize's output");
    return obj(d.toJS());
  });
}

/**
 * `kubectl kustomize` of a kustomization of one's own: `sync` (a copy of manifests/sync, or the
 * real one) as its resource, `components` of it, and `extra` lines (namespace:, images:).
 */
async function render(
  scratch: string,
  opts: { sync?: string; components?: readonly string[]; extra?: readonly string[] } = {},
): Promise<Rendering> {
  const sync = opts.sync ?? SYNC;
  const dir = await mkdtemp(join(scratch, "install-"));
  const rel = (p: string): string => relative(dir, p);
  await writeFile(
    join(dir, "kustomization.yaml"),
    [
      "apiVersion: kustomize.config.k8s.io/v1beta1",
      "kind: Kustomization",
      `resources: [${JSON.stringify(rel(sync))}]`,
      `components: ${JSON.stringify((opts.components ?? []).map((c) => rel(join(sync, c))))}`,
      ...(opts.extra ?? []),
      "",
    ].join("\n"),
  );
  const out = await run("kubectl", ["kustomize", dir]);
  assert.equal(out.code, 0, `kubectl kustomize: ${out.stderr}`);
  return { text: out.stdout, objects: parse(out.stdout) };
}

/** A copy of manifests/sync with vcluster.env's settings replaced by `env`. */
async function syncCopy(scratch: string, env: Record<string, string>): Promise<string> {
  const copy = join(await mkdtemp(join(scratch, "sync-")), "sync");
  await cp(SYNC, copy, { recursive: true });
  const file = join(copy, "vcluster.env");
  let text = await readFile(file, "utf8");
  for (const [k, v] of Object.entries(env)) {
    assert.match(text, new RegExp(`^${k}=`, "m"), `vcluster.env has ${k}`);
    text = text.replace(new RegExp(`^${k}=.*$`, "m"), `${k}=${v}`);
  }
  await writeFile(file, text);
  return copy;
}

function find(objects: readonly Json[], kind: string, name?: string): Json[] {
  return objects.filter((o) => o.kind === kind && (name === undefined || meta(o).name === name));
}

function one(objects: readonly Json[], kind: string, name?: string): Json {
  const found = find(objects, kind, name);
  assert.equal(found.length, 1, `exactly one ${kind}${name ? ` ${name}` : ""}`);
  return found[0]!;
}

const deployment = (r: Rendering): Json => one(r.objects, "Deployment", "vgate-sync");
const podSpec = (r: Rendering): Json => obj(obj(obj(deployment(r).spec).template).spec);
const container = (r: Rendering): Json => {
  const found = list(podSpec(r).containers).map((c) => obj(c));
  assert.equal(found.length, 1, "one container");
  return found[0]!;
};
const namespaceOf = (r: Rendering): string => String(meta(deployment(r)).namespace);

/**
 * The container's args as the kubelet hands them to vgate: `$(NAME)` expanded from the container's
 * env (here only the pod's namespace, from the Downward API).
 */
function args(r: Rendering): string[] {
  const env = new Map<string, string>();
  for (const e of list(container(r).env ?? [], "env").map((v) => obj(v))) {
    const field = obj(obj(e.valueFrom, `env ${String(e.name)}`).fieldRef, "a fieldRef");
    assert.equal(field.fieldPath, "metadata.namespace", "a supported fieldRef");
    env.set(String(e.name), namespaceOf(r));
  }
  return list(container(r).args)
    .map(String)
    .map((a) =>
      a.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (m, name?: string) =>
        m === "$$" ? "$" : (env.get(name!) ?? m),
      ),
    );
}

/** vgate sync's options from the Deployment's args, read by its own parser as in the pod. */
function options(r: Rendering): SyncOptions {
  const [command, ...rest] = args(r);
  assert.equal(command, "sync");
  const opts = parseSyncArgs(rest, { POD_NAMESPACE: namespaceOf(r) });
  assert.ok(opts !== "help");
  return opts;
}

/** The volume a file path of the container lies on: its mount and the pod's volume. */
function volumeFor(r: Rendering, file: string): { mount: Json; volume: Json } {
  const mount = list(container(r).volumeMounts)
    .map((m) => obj(m))
    .find((m) => dirname(file) === m.mountPath);
  assert.ok(mount, `${file} is on a mounted volume`);
  assert.equal(mount.readOnly, true, `${file}: mounted read-only`);
  assert.equal(mount.subPath, undefined, `${file}: no subPath, so updates reach it`);
  const volume = list(podSpec(r).volumes)
    .map((v) => obj(v))
    .find((v) => v.name === mount.name);
  assert.ok(volume, `the volume ${String(mount.name)}`);
  return { mount, volume };
}

/** The key of a volume's object that a mounted file shows (an item's path, else its own name). */
function keyOf(source: Json, file: string): string {
  const base = file.slice(dirname(file).length + 1);
  const item = (source.items as Json[] | undefined)?.find((i) => i.path === base);
  return item ? String(item.key) : base;
}

/** The rendering's copies of a manifests/sync/ RBAC file's objects: what kustomize adds removed. */
function withoutPartOf(o: Json): Json {
  const copy = structuredClone(o);
  const labels = obj(meta(copy).labels ?? {});
  assert.deepEqual(labels, PART_OF, `${String(copy.kind)}: labelled part of vgate`);
  delete meta(copy).labels;
  return copy;
}

const RBAC_KINDS = ["ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"];
const rbacOf = (objects: readonly Json[]): Json[] =>
  objects
    .filter((o) => RBAC_KINDS.includes(String(o.kind)))
    .map(withoutPartOf)
    .sort((a, b) => `${String(a.kind)}`.localeCompare(`${String(b.kind)}`));
const fileRbac = (file: string, namespace: string): Json[] =>
  rbacOf(
    manifestObjects(file, (text) => text.replaceAll(MANIFEST_VCLUSTER.namespace, namespace)).map(
      (o) => ({ ...o, metadata: { ...o.metadata, labels: PART_OF } }) as unknown as Json,
    ),
  );

/** The fenced blocks of manifests/README.md in `lang`, indented ones (in a list) dedented. */
function readmeBlocks(lang: string): string[] {
  const readme = repoFile("manifests/README.md");
  const blocks: string[] = [];
  for (const m of readme.matchAll(
    new RegExp(`^( *)\`\`\`${lang}\n([\\s\\S]*?)^\\1\`\`\`$`, "gm"),
  )) {
    const indent = m[1]!.length;
    blocks.push(
      m[2]!
        .split("\n")
        .map((l) => l.slice(Math.min(indent, l.length - l.trimStart().length)))
        .join("\n"),
    );
  }
  return blocks;
}

/** `key=value` lines of a kustomize env file. */
async function envFile(path: string): Promise<Record<string, string>> {
  const lines = (await readFile(path, "utf8")).split("\n").map((l) => l.trim());
  return Object.fromEntries(
    lines
      .filter((l) => l && !l.startsWith("#"))
      .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
  );
}

const packageVersion = (JSON.parse(repoFile("package.json")) as { version: string }).version;

(HAVE_ANY_KUBECTL ? describe : describe.skip)(
  `manifests/sync/ rendered by kubectl kustomize${ANY_KUBECTL_SKIP_REASON}`,
  function () {
    this.timeout(60_000);
    let scratch: string;
    let base: Rendering;
    let multi: Rendering;
    let vc: Record<string, string>;

    before(async () => {
      scratch = await mkdtemp(join(tmpdir(), "vgate-sync-kustomize-"));
      vc = await envFile(join(SYNC, "vcluster.env"));
      base = await render(scratch);
      multi = await render(scratch, { components: ["multi-namespace"] });
    });

    after(async () => {
      if (scratch) await rm(scratch, { recursive: true, force: true });
    });

    it("renders on its own (kubectl apply -k manifests/sync); multi-namespace/ is a Component", async () => {
      const out = await run("kubectl", ["kustomize", SYNC]);
      assert.equal(out.code, 0, out.stderr);
      assert.equal(out.stdout, base.text, "the same as from a kustomization of one's own");
      assert.match(
        repoFile("manifests/sync/multi-namespace/kustomization.yaml"),
        /^kind: Component$/m,
      );
    });

    it("holds the host's objects, all in the virtual cluster's namespace, and no Secret", () => {
      const kinds = (r: Rendering) =>
        r.objects.map((o) => `${String(o.kind)}/${String(meta(o).name)}`).sort();
      assert.deepEqual(kinds(base), [
        "ConfigMap/vgate-sync-config",
        "Deployment/vgate-sync",
        "PodDisruptionBudget/vgate-sync",
        "Role/vgate-sync",
        "RoleBinding/vgate-sync",
        "ServiceAccount/vgate-sync",
      ]);
      const clusterRole = `vgate-sync-${vc["vcluster-namespace"]}`;
      assert.deepEqual(
        kinds(multi),
        [...kinds(base), `ClusterRole/${clusterRole}`, `ClusterRoleBinding/${clusterRole}`].sort(),
      );
      for (const r of [base, multi]) {
        for (const o of r.objects) {
          const cluster = String(o.kind).startsWith("Cluster");
          assert.equal(
            meta(o).namespace,
            cluster ? undefined : vc["vcluster-namespace"],
            `${String(o.kind)}`,
          );
          assert.equal(obj(meta(o).labels)["app.kubernetes.io/part-of"], "vgate");
          // The local settings (vcluster.env) are never applied.
          assert.equal(
            obj(meta(o).annotations ?? {})["config.kubernetes.io/local-config"],
            undefined,
          );
        }
      }
    });

    it("the Deployment: 2 replicas, non-root, read-only, no capabilities, RuntimeDefault seccomp, the image", () => {
      const spec = obj(deployment(base).spec);
      assert.equal(spec.replicas, 2);
      assert.deepEqual(obj(spec.strategy).rollingUpdate, { maxUnavailable: 0, maxSurge: 1 });
      const pod = podSpec(base);
      assert.equal(pod.serviceAccountName, SYNC_SERVICE_ACCOUNT);
      assert.equal(pod.automountServiceAccountToken, true, "the host is reached with its token");
      const podSc = obj(pod.securityContext);
      assert.equal(podSc.runAsNonRoot, true);
      assert.equal(podSc.runAsUser, 65532);
      assert.deepEqual(podSc.seccompProfile, { type: "RuntimeDefault" });
      const c = container(base);
      const sc = obj(c.securityContext);
      assert.equal(sc.readOnlyRootFilesystem, true);
      assert.equal(sc.allowPrivilegeEscalation, false);
      assert.equal(sc.privileged, false);
      assert.deepEqual(obj(sc.capabilities), { drop: ["ALL"] });
      assert.equal(c.image, `ghcr.io/vgate/vgate:${packageVersion}`);
      assert.equal(c.imagePullPolicy, "IfNotPresent");
      const resources = obj(c.resources);
      for (const kind of ["requests", "limits"]) {
        for (const res of ["cpu", "memory"]) assert.ok(obj(resources[kind])[res], `${kind}.${res}`);
      }
      const labels = obj(meta(obj(obj(spec.template))).labels);
      assert.deepEqual(obj(spec.selector).matchLabels, POD_LABELS);
      for (const [k, v] of Object.entries(POD_LABELS)) assert.equal(labels[k], v);
      const pdb = obj(one(base.objects, "PodDisruptionBudget").spec);
      assert.equal(pdb.minAvailable, 1);
      assert.equal(pdb.unhealthyPodEvictionPolicy, "AlwaysAllow");
      assert.deepEqual(obj(pdb.selector).matchLabels, POD_LABELS);
    });

    it("its args are vgate sync's: leader election on, the pod's namespace, the host as its service account", () => {
      const o = options(base);
      assert.equal(o.vclusterName, vc["vcluster-name"]);
      assert.equal(o.vclusterNamespace, vc["vcluster-namespace"]);
      assert.equal(o.targetNamespace, vc["vcluster-namespace"]);
      assert.equal(o.selfNamespace, vc["vcluster-namespace"]);
      assert.equal(o.hostKubeconfig, undefined, "no --host-kubeconfig: the pod's service account");
      assert.deepEqual(o.leaderElection, {
        enabled: true,
        id: `vgate-sync-${vc["vcluster-name"]}`,
        namespace: vc["vcluster-namespace"],
        leaseDurationMs: 15_000,
        renewDeadlineMs: 10_000,
        retryPeriodMs: 2_000,
      });
      // Sandbox processes fixed, never the node's CPU count.
      assert.ok(o.patchWorkers !== undefined && o.patchWorkers <= 4);
      // The Lease's namespace is where rbac-host.yaml's Role grants leases.
      const role = one(base.objects, "Role", "vgate-sync");
      assert.equal(meta(role).namespace, o.leaderElection.namespace);
      assert.ok(
        list(role.rules).some(
          (r) => list(obj(r).resources).includes("leases") && list(obj(r).verbs).includes("update"),
        ),
      );
    });

    it("the config and the virtual kubeconfig are files of the ConfigMap and of vcluster.env's Secret", async () => {
      const o = options(base);
      const config = volumeFor(base, o.config);
      const cm = obj(config.volume.configMap, "a ConfigMap volume");
      const data = obj(one(base.objects, "ConfigMap", String(cm.name)).data);
      const content = data[keyOf(cm, o.config)];
      assert.equal(content, repoFile("manifests/sync/vcluster.yaml"));
      const copy = join(scratch, "vcluster.yaml");
      await writeFile(copy, String(content));
      const check = await run(process.execPath, [
        join(repoRoot, "webhook/bin/vgate"),
        "check-config",
        copy,
      ]);
      assert.equal(check.code, 0, `vgate check-config: ${check.stderr}`);

      const kubeconfig = volumeFor(base, o.virtualKubeconfig);
      const secret = obj(kubeconfig.volume.secret, "a Secret volume");
      assert.equal(secret.secretName, vc["virtual-kubeconfig-secret"]);
      // vCluster's key for the kubeconfig in the Secrets it writes (pkg/util/kubeconfig).
      assert.equal(keyOf(secret, o.virtualKubeconfig), "config");
      assert.deepEqual(secret.items, [{ key: "config", path: "config" }], "only the kubeconfig");
      assert.equal(secret.defaultMode, 0o440);
      assert.equal(obj(podSpec(base).securityContext).fsGroup, 65532, "readable by the group only");
      assert.ok(
        find(base.objects, "Secret").length === 0,
        "the Secret is vCluster's or the user's: applying never overwrites it",
      );
    });

    it("probes: startup and liveness on /healthz, readiness on /readyz, on the port vgate sync binds", () => {
      const o = options(base);
      const c = container(base);
      const port = (name: string): number => {
        const p = list(c.ports)
          .map((x) => obj(x))
          .find((x) => x.name === name);
        assert.ok(p, `a port named ${name}`);
        return Number(p.containerPort);
      };
      assert.equal(
        o.healthProbeBindAddress,
        `:${port("probes")}`,
        "every interface: the kubelet calls the pod's IP",
      );
      assert.equal(o.metricsBindAddress, `:${port("metrics")}`);
      const probes: [string, string][] = [
        ["startupProbe", "/healthz"],
        ["readinessProbe", "/readyz"],
        ["livenessProbe", "/healthz"],
      ];
      for (const [probe, path] of probes) {
        const get = obj(obj(c[probe], probe).httpGet, `${probe}.httpGet`);
        assert.deepEqual(get, { port: "probes", path }, probe);
      }
      // vgate sync serves exactly these paths (sync-probe-server.ts).
      const server = repoFile("webhook/src/cli/sync-probe-server.ts");
      assert.ok(server.includes('path === "/healthz"') && server.includes('path === "/readyz"'));
    });

    it("the grace period outlasts vgate sync's whole stop: reconciles in flight, then the Lease released", () => {
      const o = options(base);
      const grace = Number(podSpec(base).terminationGracePeriodSeconds) * 1000;
      assert.ok(
        o.shutdownTimeoutMs + STOP_AFTER_TIMEOUT_MS < grace,
        `${o.shutdownTimeoutMs} + ${STOP_AFTER_TIMEOUT_MS} < ${grace}`,
      );
    });

    it("RBAC: exactly rbac-host.yaml's objects, and with the Component rbac-host-multi-namespace.yaml's", () => {
      const ns = vc["vcluster-namespace"]!;
      assert.deepEqual(rbacOf(base.objects), fileRbac("manifests/sync/rbac-host.yaml", ns));
      assert.deepEqual(
        rbacOf(multi.objects),
        fileRbac("manifests/sync/rbac-host-multi-namespace.yaml", ns),
      );
    });

    it("vcluster.env, changed alone, follows everywhere, the multi-namespace ClusterRole's name included", async () => {
      const env = {
        "vcluster-name": "team-x",
        "vcluster-namespace": "vcluster-team-x",
        "virtual-kubeconfig-secret": "vc-team-x",
      };
      const copy = await syncCopy(scratch, env);
      for (const components of [[], ["multi-namespace"]]) {
        const r = await render(scratch, { sync: copy, components });
        const o = options(r);
        assert.equal(o.vclusterName, "team-x");
        assert.equal(o.vclusterNamespace, "vcluster-team-x");
        assert.equal(o.leaderElection.id, "vgate-sync-team-x");
        assert.equal(obj(volumeFor(r, o.virtualKubeconfig).volume.secret).secretName, "vc-team-x");
        const file = components.length ? "rbac-host-multi-namespace.yaml" : "rbac-host.yaml";
        assert.deepEqual(rbacOf(r.objects), fileRbac(`manifests/sync/${file}`, "vcluster-team-x"));
        const stray = r.text.match(/my-vcluster/g) ?? [];
        assert.deepEqual(stray, [], "nothing names the example virtual cluster");
      }
    });

    it("a kustomization of one's own may set the namespace and the image (single-namespace)", async () => {
      const r = await render(scratch, {
        extra: [
          "namespace: vcluster-elsewhere",
          "images: [{name: ghcr.io/vgate/vgate, newName: vgate, newTag: dev}]",
        ],
      });
      assert.equal(container(r).image, "vgate:dev");
      for (const o of r.objects) assert.equal(meta(o).namespace, "vcluster-elsewhere");
      const o = options(r);
      assert.equal(o.vclusterNamespace, "vcluster-elsewhere");
      assert.equal(o.leaderElection.namespace, "vcluster-elsewhere");
      assert.deepEqual(
        rbacOf(r.objects),
        fileRbac("manifests/sync/rbac-host.yaml", "vcluster-elsewhere"),
      );
    });

    it("manifests/README.md: vCluster's exportKubeConfig entry writes the Secret the Deployment reads", async () => {
      const block = readmeBlocks("yaml").find((b) => b.startsWith("exportKubeConfig:"));
      assert.ok(block, "the exportKubeConfig block");
      const entries = list(obj(obj(parseYaml(block)).exportKubeConfig).additionalSecrets);
      assert.equal(entries.length, 1);
      const entry = obj(entries[0]);
      const o = options(base);
      assert.equal(entry.name, obj(volumeFor(base, o.virtualKubeconfig).volume.secret).secretName);
      assert.equal(entry.namespace, undefined, "vCluster's own namespace: the Deployment's");
      // vCluster's Service <name> in its namespace, port 443; its serving certificate names
      // <name>.<namespace> (pkg/server/cert: getExtraSANs).
      assert.equal(entry.server, `https://${o.vclusterName}.${o.vclusterNamespace}:443`);
      const virtual = manifestObjects("manifests/sync/rbac-virtual.yaml", (t) => t);
      const sa = virtual.find((x) => x.kind === "ServiceAccount")!;
      const role = virtual.find((x) => x.kind === "ClusterRole")!;
      assert.deepEqual(entry.serviceAccount, {
        name: sa.metadata.name,
        namespace: sa.metadata.namespace,
        clusterRole: role.metadata.name,
      });
      // One vcluster.yaml serves vCluster and vgate sync: vgate's loader accepts the entry.
      const both = join(scratch, "vcluster-with-export.yaml");
      await writeFile(both, `${repoFile("manifests/sync/vcluster.yaml")}${block}`);
      const check = await run(process.execPath, [
        join(repoRoot, "webhook/bin/vgate"),
        "check-config",
        both,
      ]);
      assert.equal(check.code, 0, `vgate check-config: ${check.stderr}`);
      // Without the export, the Secret made by hand has the key the Deployment reads.
      const create = readmeBlocks("sh").find((b) => b.includes("create secret generic"));
      assert.ok(create, "the kubectl create secret block");
      assert.match(
        create,
        new RegExp(
          `-n ${o.vclusterNamespace} create secret generic ${entry.name as string} --from-file=config=`,
        ),
      );
    });

    // --- on the shared test cluster ------------------------------------------------------------

    (HAVE_KUBE ? describe : describe.skip)(
      `on a real kube-apiserver${KUBE_SKIP_REASON}`,
      function () {
        this.timeout(120_000);
        let cluster: VgateCluster;
        const suffix = randomBytes(3).toString("hex");
        const ns = `vcluster-sync-${suffix}`;
        const virtualNs = `sync-virtual-${suffix}`;
        let r: Rendering;
        let kubectl: ReturnType<typeof kubectlFor>;
        const running: RunningController[] = [];
        const virtualRbac = manifestObjects("manifests/sync/rbac-virtual.yaml", (t) => t);

        before(async () => {
          cluster = await sharedCluster();
          kubectl = kubectlFor(cluster.kubeconfigPath, join(scratch, "kubectl-cache"));
          r = await render(scratch, {
            sync: await syncCopy(scratch, { "vcluster-namespace": ns }),
          });
          // A namespace as a careful admin makes it: the restricted Pod Security Standard enforced.
          const labels: Record<string, string> = {};
          for (const mode of ["enforce", "warn", "audit"]) {
            labels[`pod-security.kubernetes.io/${mode}`] = "restricted";
            labels[`pod-security.kubernetes.io/${mode}-version`] = "latest";
          }
          for (const name of [ns, virtualNs]) {
            await cluster.admin.apply({
              apiVersion: "v1",
              kind: "Namespace",
              metadata: { name, labels },
            });
          }
        });

        after(async () => {
          await Promise.all(running.map((c) => c.shutdown()));
          for (const name of [ns, virtualNs]) {
            await cluster?.admin.delete({
              apiVersion: "v1",
              kind: "Namespace",
              metadata: { name },
            });
          }
          for (const o of virtualRbac) await cluster?.admin.delete(o);
        });

        it("every object is accepted (server-side dry run), with no Pod Security warning", async () => {
          for (const text of [
            r.text,
            (
              await render(scratch, {
                sync: await syncCopy(scratch, { "vcluster-namespace": ns }),
                components: ["multi-namespace"],
              })
            ).text,
          ]) {
            const out = await kubectl(["apply", "--dry-run=server", "-f", "-"], { input: text });
            assert.equal(out.code, 0, out.stderr);
            assert.doesNotMatch(out.stderr, /Warning/, out.stderr);
            assert.equal(out.stdout.trim().split("\n").length, parse(text).length, out.stdout);
          }
          // The check can fail: the same Deployment allowed to run as root is warned about.
          const loose = structuredClone(deployment(r));
          obj(obj(obj(obj(loose.spec).template).spec).securityContext).runAsNonRoot = false;
          const warned = await kubectl(["apply", "--dry-run=server", "-f", "-"], {
            input: JSON.stringify(loose),
          });
          assert.equal(warned.code, 0, warned.stderr);
          assert.match(
            warned.stderr,
            /would violate PodSecurity "restricted:latest".*runAsNonRoot/,
          );
        });

        it("two replicas run with the Deployment's args, the volumes' files and the pod's service account: both ready, one leads, the other takes over", async () => {
          // The install: the rendered objects applied, and rbac-virtual.yaml in the "virtual cluster"
          // (the same API server here, as in test/webhook/sync/controller/).
          const applied = await kubectl(["apply", "-f", "-"], { input: r.text });
          assert.equal(applied.code, 0, applied.stderr);
          for (const o of virtualRbac) await cluster.admin.apply(o);
          const users = {
            host: `system:serviceaccount:${ns}:${SYNC_SERVICE_ACCOUNT}`,
            virtual: `system:serviceaccount:kube-system:${SYNC_SERVICE_ACCOUNT}`,
          };
          // RBAC serving every rule of both roles (in the namespace a Role is in).
          for (const [user, role] of [
            [users.host, one(r.objects, "Role")],
            [users.virtual, obj(virtualRbac.find((o) => o.kind === "ClusterRole"))],
          ] as const) {
            for (const rule of list(role.rules).map((x) => obj(x))) {
              for (const resource of list(rule.resources).map(String)) {
                for (const verb of list(rule.verbs).map(String)) {
                  const namespace = meta(role).namespace as string | undefined;
                  await waitForAccess(
                    cluster.admin,
                    {
                      user,
                      groups: ["system:serviceaccounts", "system:authenticated"],
                      resourceAttributes: {
                        group: String(list(rule.apiGroups)[0]),
                        resource,
                        verb,
                        ...(namespace ? { namespace } : {}),
                      },
                    },
                    true,
                  );
                }
              }
            }
          }
          // The Secret as vCluster's exportKubeConfig writes it: a kubeconfig with the token of the
          // virtual cluster's kube-system/vgate-sync under the key `config`.
          const o0 = options(r);
          const secretName = String(
            obj(volumeFor(r, o0.virtualKubeconfig).volume.secret).secretName,
          );
          const virtualToken = await cluster.plane.serviceAccountToken(
            "kube-system",
            SYNC_SERVICE_ACCOUNT,
          );
          await cluster.admin.apply({
            apiVersion: "v1",
            kind: "Secret",
            metadata: { name: secretName, namespace: ns },
            type: "Opaque",
            stringData: {
              config: kubeconfigYaml({
                server: cluster.url,
                caPem: cluster.caPem,
                name: "my-vcluster",
                token: virtualToken,
              }),
            },
          } as unknown as KubeObject);

          // Each replica: the volumes' files as the kubelet writes them, read back from the API
          // server, under a root of its own; the service account's token and CA; the rendered args
          // with the paths under that root and the probe servers on loopback ports of the test's.
          const url = new URL(cluster.url);
          const replicas: { opts: SyncOptions; lines: Json[]; running?: RunningController }[] = [];
          for (const name of ["a", "b"]) {
            const root = await mkdtemp(join(scratch, `pod-${name}-`));
            for (const { mount, volume } of [
              volumeFor(r, o0.config),
              volumeFor(r, o0.virtualKubeconfig),
            ]) {
              const source = obj(volume.configMap ?? volume.secret);
              const kind = volume.configMap ? "configmaps" : "secrets";
              const objName = String(source.name ?? source.secretName);
              const got = await cluster.admin.request<{ data?: Record<string, string> }>(
                "GET",
                `/api/v1/namespaces/${ns}/${kind}/${objName}`,
              );
              assert.equal(got.status, 200, `${kind}/${objName}`);
              const dir = join(root, String(mount.mountPath));
              await mkdir(dir, { recursive: true });
              for (const file of [o0.config, o0.virtualKubeconfig].filter(
                (f) => dirname(f) === mount.mountPath,
              )) {
                const value = got.body.data?.[keyOf(source, file)];
                assert.ok(value !== undefined, `${objName} has the key for ${file}`);
                await writeFile(
                  join(root, file),
                  kind === "secrets" ? Buffer.from(value, "base64") : value,
                );
              }
            }
            const sa = join(root, "serviceaccount");
            await mkdir(sa);
            await writeFile(
              join(sa, "token"),
              await cluster.plane.serviceAccountToken(ns, SYNC_SERVICE_ACCOUNT),
            );
            await writeFile(join(sa, "ca.crt"), cluster.caPem);
            const podArgs = args(r)
              .slice(1)
              .map((a) => a.replace(/=(\/etc\/vgate\/)/, `=${root}$1`))
              .map((a) =>
                /^--(health-probe|metrics)-bind-address=/.test(a)
                  ? a.replace(/=.*/, "=127.0.0.1:0")
                  : a,
              );
            const opts = parseSyncArgs(podArgs, { POD_NAMESPACE: ns });
            assert.ok(opts !== "help");
            const lines: Json[] = [];
            const logger = createLogger("info", {
              write: (line: string) => void lines.push(JSON.parse(line) as Json),
            });
            const replica: (typeof replicas)[number] = { opts, lines };
            replica.running = await startController(opts, logger, {
              processMetrics: false,
              identity: `vgate-sync-pod-${name}_${randomBytes(4).toString("hex")}`,
              inCluster: {
                env: { KUBERNETES_SERVICE_HOST: url.hostname, KUBERNETES_SERVICE_PORT: url.port },
                serviceAccountDir: sa,
              },
            });
            running.push(replica.running);
            replicas.push(replica);
          }
          const ready = async (c: RunningController) =>
            (await get(`http://${c.probeAddress}/readyz`)).status === 200;
          // Ready, leader and standby alike: caches synced (docs/decisions.md EPS-22).
          for (const c of running) await until(() => ready(c), "every replica ready", 30_000);
          const leasePath = `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/${o0.leaderElection.id}`;
          const holder = async () =>
            (await cluster.admin.request<{ spec?: { holderIdentity?: string } }>("GET", leasePath))
              .body.spec?.holderIdentity ?? "";
          const led = (rep: (typeof replicas)[number]) =>
            rep.lines.some((l) => l.msg === "became leader");
          await until(() => replicas.some(led), "a leader");
          const leader = replicas.find(led)!;
          const standby = replicas.find((x) => x !== leader)!;
          assert.equal(replicas.filter(led).length, 1, "one leader");
          assert.match(await holder(), /^vgate-sync-pod-[ab]_/);
          assert.ok(await ready(standby.running!), "the standby is ready");

          // It syncs with vcluster.yaml's patch: a selector-less Service's Endpoints get a host copy
          // whose owner annotation is prefixed.
          const service = (n: string) => ({
            apiVersion: "v1",
            kind: "Service",
            metadata: { name: n, namespace: virtualNs },
            spec: { ports: [{ port: 80 }], clusterIP: "None" },
          });
          const endpoints = (n: string) => ({
            apiVersion: "v1",
            kind: "Endpoints",
            metadata: { name: n, namespace: virtualNs, annotations: { "example.com/owner": n } },
            subsets: [{ addresses: [{ ip: "10.1.0.1" }], ports: [{ port: 80 }] }],
          });
          const hostCopy = async (n: string) =>
            (
              await cluster.admin.request<KubeObject>(
                "GET",
                `/api/v1/namespaces/${ns}/endpoints/${n}-x-${virtualNs}-x-${o0.vclusterName}`,
              )
            ).body;
          const synced = async (n: string) =>
            obj(meta(obj(await hostCopy(n))).annotations ?? {})["example.com/owner"] ===
            `tenant-${n}`;
          await cluster.admin.apply(service("before") as unknown as KubeObject);
          await cluster.admin.apply(endpoints("before") as unknown as KubeObject);
          await until(() => synced("before"), "the host copy, patched", 30_000);

          // SIGTERM of the leader: it releases the Lease, and the standby takes over well within the
          // Lease's duration.
          const stoppedAt = performance.now();
          await leader.running!.shutdown();
          await until(() => led(standby), "the standby leading", o0.leaderElection.leaseDurationMs);
          const tookOverMs = performance.now() - stoppedAt;
          assert.ok(
            tookOverMs < o0.leaderElection.leaseDurationMs,
            `took over in ${Math.round(tookOverMs)} ms`,
          );
          assert.match(
            await holder(),
            new RegExp(
              `^${standby.lines.find((l) => l.msg === "became leader")!.identity as string}$`,
            ),
          );
          await cluster.admin.apply(service("after") as unknown as KubeObject);
          await cluster.admin.apply(endpoints("after") as unknown as KubeObject);
          await until(() => synced("after"), "the new leader syncs", 30_000);
        });

        it("manifests/README.md's commands, as written, install it (those that need no node)", async () => {
          // The shared cluster plays both clusters: the files the commands name sit in a directory
          // of their own, next to a link to manifests/.
          const dir = await mkdtemp(join(scratch, "readme-"));
          await symlink(join(repoRoot, "manifests"), join(dir, "manifests"));
          const admin = await readFile(cluster.kubeconfigPath, "utf8");
          await writeFile(join(dir, "virtual.kubeconfig"), admin, { mode: 0o600 });
          await writeFile(join(dir, "vgate-sync.kubeconfig"), admin, { mode: 0o600 });
          const vcNs = MANIFEST_VCLUSTER.namespace;
          // Kept afterwards: no namespace controller runs here, so a deleted namespace would stay
          // Terminating, and the README's vgate sync block test uses it too.
          await cluster.admin.apply({
            apiVersion: "v1",
            kind: "Namespace",
            metadata: { name: vcNs },
          });
          // Waiting for pods and the Lease needs a node (the cluster tier runs those lines).
          const needsNode = /rollout status|get lease/;
          const lines = readmeBlocks("sh")
            // vgate sync's blocks; the Endpoints webhook's virtual-cluster block is the cluster
            // tier's (test/support/vcluster/virtual-webhook.ts).
            .filter((b) =>
              /^# (In the virtual cluster: vgate sync's|Only without exportKubeConfig|In the host cluster: vgate sync's)/.test(
                b,
              ),
            )
            .flatMap((b) => b.trimEnd().split("\n"))
            .filter((l) => !l.startsWith("#") && !needsNode.test(l));
          assert.equal(lines.length, 3, lines.join("\n"));
          try {
            for (const line of lines) {
              const out = await new Promise<{ code: number; stderr: string }>((resolve) => {
                execFile(
                  "bash",
                  ["-c", line],
                  {
                    cwd: dir,
                    env: { ...process.env, KUBECONFIG: cluster.kubeconfigPath },
                    timeout: 30_000,
                  },
                  (err, _stdout, stderr) => resolve({ code: err ? 1 : 0, stderr }),
                );
              });
              assert.equal(out.code, 0, `${line}: ${out.stderr}`);
            }
            const secret = await cluster.admin.request<{ data?: Record<string, string> }>(
              "GET",
              `/api/v1/namespaces/${vcNs}/secrets/vgate-sync-kubeconfig`,
            );
            assert.equal(
              Buffer.from(secret.body.data?.["config"] ?? "", "base64").toString(),
              admin,
            );
            const d = await cluster.admin.request<KubeObject>(
              "GET",
              `/apis/apps/v1/namespaces/${vcNs}/deployments/vgate-sync`,
            );
            assert.equal(d.status, 200);
          } finally {
            await kubectl(["delete", "--ignore-not-found", "-k", join(dir, "manifests/sync")]);
            await kubectl([
              "-n",
              vcNs,
              "delete",
              "--ignore-not-found",
              "secret",
              "vgate-sync-kubeconfig",
            ]);
            for (const o of virtualRbac) await cluster.admin.delete(o);
          }
        });
      },
    );
  },
);

function get(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    http
      .get(url, (res) => {
        let body = "";
        res.on("data", (c: Buffer) => (body += c.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on("error", () => resolve({ status: 0, body: "" }));
  });
}
