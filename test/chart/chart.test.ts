// charts/vgate/ with the real Helm (make kube or make helm builds it): `helm lint --strict` clean
// for every tested set of values, `helm template` the same objects as `kubectl kustomize` of
// manifests/ for the matching Components (the default install, each certificate option, the
// Endpoints webhook, vgate sync single- and multi-namespace, and non-default names), with only
// what Helm adds normalised away, and values.schema.json refusing bad values with Helm's own error.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { parseAllDocuments } from "yaml";
import { safeConcatName } from "../../webhook/src/patches/host-names.js";
import { LOG_LEVELS } from "../../webhook/src/server/logger.js";
import { PATCH_KINDS } from "../../webhook/src/config/patch-kinds.js";
import { parseServeArgs } from "../../webhook/src/cli/serve-options.js";
import { repoFile, repoRoot } from "../support/fixtures.js";
import { HAVE_HELM, HELM_SKIP_REASON, helm } from "../support/helm/helm-binary.js";
import { HAVE_ANY_KUBECTL, ANY_KUBECTL_SKIP_REASON } from "../support/kubectl.js";
import { docBlock } from "../support/readme-blocks.js";

type Json = Record<string, unknown>;

const CHART = join(repoRoot, "charts/vgate");
const NS = "vgate-system";
/** What Helm adds to every object's metadata.labels (the chart's "vgate.labels" less part-of). */
const HELM_LABELS = [
  "helm.sh/chart",
  "app.kubernetes.io/managed-by",
  "app.kubernetes.io/instance",
  "app.kubernetes.io/version",
];

const obj = (v: unknown, what = "value"): Json => {
  assert.ok(typeof v === "object" && v !== null && !Array.isArray(v), `${what}: not an object`);
  return v as Json;
};
const meta = (o: Json): Json => obj(o.metadata, "metadata");
const webhooksOf = (objects: Json[]): Json[] =>
  objects
    .filter((o) => o.kind === "MutatingWebhookConfiguration")
    .flatMap((o) => o.webhooks as Json[]);

function run(
  cmd: string,
  args: readonly string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { timeout: 60_000, maxBuffer: 32 << 20 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

/** Parsed as kube-apiserver reads YAML (YAML 1.1: `0440` is octal), documents that are null dropped. */
function parse(text: string, what: string): Json[] {
  return parseAllDocuments(text, { version: "1.1" })
    .map((d) => {
      assert.deepEqual(d.errors, [], `YAML errors in ${what}`);
      return d.toJS() as unknown;
    })
    .filter((d) => d !== null)
    .map((d) => obj(d, what));
}

const key = (o: Json): string =>
  `${String(o.apiVersion)} ${String(o.kind)} ${String(meta(o).namespace ?? "")}/${String(meta(o).name)}`;

/** The objects keyed by apiVersion, kind, namespace and name; a key twice is a failure. */
function byKey(objects: readonly Json[], what: string): Map<string, Json> {
  const m = new Map<string, Json>();
  for (const o of objects) {
    assert.ok(!m.has(key(o)), `${what} renders ${key(o)} twice`);
    m.set(key(o), o);
  }
  return m;
}

/** A Helm-rendered object less what Helm adds: its labels, the CRD's keep policy, the checksum. */
function normaliseHelm(o: Json): Json {
  const c = structuredClone(o);
  const m = meta(c);
  const labels = obj(m.labels ?? {});
  for (const l of HELM_LABELS) assert.ok(l in labels, `${key(o)} has Helm's label ${l}`);
  m.labels = Object.fromEntries(Object.entries(labels).filter(([l]) => !HELM_LABELS.includes(l)));
  const annotations = obj(m.annotations ?? {});
  delete annotations["helm.sh/resource-policy"];
  if (Object.keys(annotations).length === 0) delete m.annotations;
  const template = (obj(c.spec ?? {}).template ?? undefined) as Json | undefined;
  if (template) {
    const tm = meta(template);
    const ta = (tm.annotations ?? {}) as Json;
    delete ta["checksum/vcluster-config"];
    if (Object.keys(ta).length === 0) delete tm.annotations;
  }
  return c;
}

/** kustomize's hashed ConfigMap name for the Endpoints config, as the chart names it. */
function normaliseKustomize(o: Json): Json {
  const text = JSON.stringify(o).replace(
    /"vgate-vcluster-config-[a-z0-9]{10}"/g,
    '"vgate-vcluster-config"',
  );
  return JSON.parse(text) as Json;
}

/** A copy of manifests/ with the user's edits: group domain, key storage, the virtual clusters. */
interface Edits {
  groupDomain: string;
  keyStorage: "hashed" | "plain";
  endpoints: { name: string; namespace: string; config: string };
  sync: { name: string; namespace: string; secret: string; config: string };
  /**
   * overlays/patches: its vcluster.yaml and the rules of patches-webhook.yaml and of
   * cluster-patches-webhook.yaml that match it.
   */
  patches?: { config: string; rules: string; clusterRules: string };
}

async function editedManifests(scratch: string, e: Edits): Promise<string> {
  const dir = join(await mkdtemp(join(scratch, "manifests-")), "manifests");
  await cp(join(repoRoot, "manifests"), dir, { recursive: true });
  await writeFile(join(dir, "group-domain.env"), `group-domain=${e.groupDomain}\n`);
  const info = await readFile(join(dir, "vgate-info.yaml"), "utf8");
  assert.match(info, /keyStorage: hashed/);
  await writeFile(
    join(dir, "vgate-info.yaml"),
    info.replace("keyStorage: hashed", `keyStorage: ${e.keyStorage}`),
  );
  await writeFile(
    join(dir, "overlays/endpoints/vcluster.env"),
    `vcluster-name=${e.endpoints.name}\nvcluster-namespace=${e.endpoints.namespace}\n`,
  );
  await writeFile(join(dir, "overlays/endpoints/vcluster.yaml"), e.endpoints.config);
  await writeFile(
    join(dir, "sync/vcluster.env"),
    `vcluster-name=${e.sync.name}\nvcluster-namespace=${e.sync.namespace}\nvirtual-kubeconfig-secret=${e.sync.secret}\n`,
  );
  await writeFile(join(dir, "sync/vcluster.yaml"), e.sync.config);
  if (e.patches) {
    await writeFile(join(dir, "overlays/patches/vcluster.yaml"), e.patches.config);
    const hook = join(dir, "overlays/patches/patches-webhook.yaml");
    const text = await readFile(hook, "utf8");
    const at = text.indexOf("    rules:\n");
    assert.ok(at > 0, "patches-webhook.yaml ends with its rules");
    await writeFile(hook, `${text.slice(0, at)}    rules:\n${e.patches.rules}`);
    const clusterHook = join(dir, "overlays/patches/cluster-patches-webhook.yaml");
    const clusterText = await readFile(clusterHook, "utf8");
    const clusterAt = clusterText.indexOf("    rules:\n");
    assert.ok(clusterAt > 0, "cluster-patches-webhook.yaml ends with its rules");
    await writeFile(
      clusterHook,
      `${clusterText.slice(0, clusterAt)}    rules:\n${e.patches.clusterRules}`,
    );
    // The marker as manifests/README.md says to compute it; the chart computes its own.
    const marker = safeConcatName(e.endpoints.namespace, "x", e.endpoints.name);
    await writeFile(
      join(dir, "overlays/patches/vcluster.env"),
      `vcluster-name=${e.endpoints.name}\nvcluster-namespace=${e.endpoints.namespace}\nvcluster-cluster-marker=${marker}\n`,
    );
  }
  return dir;
}

/** `kubectl kustomize` of a kustomization of the user's own over `manifests`. */
async function kustomize(
  scratch: string,
  manifests: string,
  resources: readonly string[],
  components: readonly string[],
): Promise<Json[]> {
  const dir = await mkdtemp(join(scratch, "kustomization-"));
  const rel = (p: string): string => relative(dir, join(manifests, p));
  await writeFile(
    join(dir, "kustomization.yaml"),
    [
      "apiVersion: kustomize.config.k8s.io/v1beta1",
      "kind: Kustomization",
      `resources: ${JSON.stringify(resources.map(rel))}`,
      `components: ${JSON.stringify(components.map(rel))}`,
      "",
    ].join("\n"),
  );
  const out = await run("kubectl", ["kustomize", dir]);
  assert.equal(out.code, 0, `kubectl kustomize: ${out.stderr}`);
  return parse(out.stdout, "kustomize's output");
}

interface Case {
  name: string;
  /** helm --set / --set-file arguments; --set-file paths are in the manifests/ rendered. */
  values: string[];
  /** manifests/ paths of the kustomize rendering: resources and components. */
  resources: string[];
  components: string[];
  /** A copy of manifests/ with these edits instead of manifests/ itself. */
  edits?: Edits;
}

const EDITS: Edits = {
  groupDomain: "example.com",
  keyStorage: "plain",
  endpoints: {
    name: "team-a",
    namespace: "vcluster-team-a",
    config:
      'sync:\n  toHost:\n    endpoints:\n      enabled: true\n      patches:\n        - path: metadata.labels["team"]\n          expression: \'"a"\'\n',
  },
  sync: {
    name: "team-b",
    namespace: "vcluster-team-b",
    secret: "team-b-kubeconfig",
    config: "sync:\n  toHost:\n    endpoints:\n      enabled: true\n",
  },
};

/** A rule of overlays/patches/patches-webhook.yaml (or, scoped Cluster, cluster-patches-webhook.yaml). */
const rule = (group: string, resource: string, scope = "Namespaced"): string =>
  `      - apiGroups: [${JSON.stringify(group)}]\n        apiVersions: ["*"]\n        resources: [${JSON.stringify(resource)}]\n        operations: ["CREATE", "UPDATE"]\n        scope: ${scope}\n`;

/** Every kind a config can name in one webhook: built-ins, Endpoints (with slices), a custom resource. */
const EVERY_KIND: Edits = {
  ...EDITS,
  patches: {
    config: [
      "sync:",
      "  toHost:",
      ...[
        "services",
        "ingresses",
        "endpoints",
        "secrets",
        "storageClasses",
        "persistentVolumes",
      ].flatMap((key) => [
        `    ${key}:`,
        "      patches:",
        '        - path: metadata.annotations["team"]',
        "          expression: '\"a\"'",
      ]),
      "    customResources:",
      "      widgets.example.com:",
      "        enabled: true",
      "        patches:",
      '          - path: metadata.annotations["team"]',
      "            expression: '\"a\"'",
      "      gadgets.example.com:",
      "        enabled: true",
      "",
    ].join("\n"),
    // vCluster's field order: secrets, ingresses, services, endpoints (+ slices), then by name.
    rules: [
      rule("", "secrets"),
      rule("networking.k8s.io", "ingresses"),
      rule("", "services"),
      rule("", "endpoints"),
      rule("discovery.k8s.io", "endpointslices"),
      rule("example.com", "widgets"),
    ].join(""),
    // Then the cluster-scoped ones, in the same order: persistentVolumes before storageClasses.
    clusterRules: [
      rule("", "persistentvolumes", "Cluster"),
      rule("storage.k8s.io", "storageclasses", "Cluster"),
    ].join(""),
  },
};

const CASES: Case[] = [
  {
    name: "the default install (self-managed certificates)",
    values: [],
    resources: ["."],
    components: ["overlays/self-managed"],
  },
  {
    name: "expiry warnings and a retention of expired keys",
    values: ["--set", "keyLifecycle.expiryWarnings=true,keyLifecycle.expiredKeyRetention=30d"],
    resources: ["."],
    components: [
      "overlays/self-managed",
      "overlays/key-lifecycle",
      "overlays/expired-key-retention",
    ],
  },
  {
    name: "certificates from cert-manager",
    values: ["--set", "certificates.mode=certManager"],
    resources: ["."],
    components: ["overlays/cert-manager"],
  },
  {
    name: "the Endpoints webhook, self-managed",
    values: [
      "--set",
      "endpoints.enabled=true",
      "--set-file",
      "endpoints.config=overlays/endpoints/vcluster.yaml",
    ],
    resources: ["."],
    components: ["overlays/self-managed", "overlays/endpoints"],
  },
  {
    name: "the Endpoints webhook, cert-manager",
    values: [
      "--set",
      "certificates.mode=certManager,endpoints.enabled=true",
      "--set-file",
      "endpoints.config=overlays/endpoints/vcluster.yaml",
    ],
    resources: ["."],
    components: ["overlays/cert-manager", "overlays/endpoints"],
  },
  {
    name: "one vgate for every vCluster (discover-vclusters)",
    values: ["--set", "discoverVClusters.enabled=true"],
    resources: ["."],
    components: ["overlays/self-managed", "overlays/discover-vclusters"],
  },
  {
    name: "the webhook for every kind, self-managed",
    values: [
      "--set",
      "patches.enabled=true",
      "--set-file",
      "patches.config=overlays/patches/vcluster.yaml",
    ],
    resources: ["."],
    components: ["overlays/self-managed", "overlays/patches"],
  },
  {
    name: "the webhook for every kind, cert-manager, Endpoints and a custom resource",
    values: [
      "--set",
      [
        `groupDomain=${EDITS.groupDomain}`,
        `keyStorage=${EDITS.keyStorage}`,
        "certificates.mode=certManager",
        "patches.enabled=true",
        `patches.vclusterName=${EDITS.endpoints.name}`,
        `patches.vclusterNamespace=${EDITS.endpoints.namespace}`,
      ].join(","),
      "--set-file",
      "patches.config=overlays/patches/vcluster.yaml",
    ],
    resources: ["."],
    components: ["overlays/cert-manager", "overlays/patches"],
    edits: EVERY_KIND,
  },
  {
    name: "vgate sync",
    values: ["--set", "sync.enabled=true", "--set-file", "sync.config=sync/vcluster.yaml"],
    resources: [".", "sync"],
    components: ["overlays/self-managed"],
  },
  {
    name: "vgate sync, multi-namespace",
    values: [
      "--set",
      "sync.enabled=true,sync.multiNamespace=true",
      "--set-file",
      "sync.config=sync/vcluster.yaml",
    ],
    resources: [".", "sync"],
    components: ["overlays/self-managed", "sync/multi-namespace"],
  },
  {
    name: "vgate sync alone, next to a release with the webhooks",
    values: [
      "--set",
      "webhook.enabled=false,sync.enabled=true",
      "--set-file",
      "sync.config=sync/vcluster.yaml",
    ],
    resources: ["sync"],
    components: [],
  },
  {
    name: "another group domain, plain keys, other virtual clusters, everything on",
    values: [
      "--set",
      [
        `groupDomain=${EDITS.groupDomain}`,
        `keyStorage=${EDITS.keyStorage}`,
        "certificates.mode=certManager",
        "endpoints.enabled=true",
        `endpoints.vclusterName=${EDITS.endpoints.name}`,
        `endpoints.vclusterNamespace=${EDITS.endpoints.namespace}`,
        "sync.enabled=true",
        "sync.multiNamespace=true",
        `sync.vclusterName=${EDITS.sync.name}`,
        `sync.vclusterNamespace=${EDITS.sync.namespace}`,
        `sync.virtualKubeconfigSecret=${EDITS.sync.secret}`,
      ].join(","),
      "--set-file",
      "endpoints.config=overlays/endpoints/vcluster.yaml,sync.config=sync/vcluster.yaml",
    ],
    resources: [".", "sync"],
    components: ["overlays/cert-manager", "overlays/endpoints", "sync/multi-namespace"],
    edits: EDITS,
  },
];

(HAVE_HELM && HAVE_ANY_KUBECTL ? describe : describe.skip)(
  `charts/vgate with Helm${HELM_SKIP_REASON || ANY_KUBECTL_SKIP_REASON}`,
  function () {
    this.timeout(120_000);
    let scratch: string;
    let home: string;

    before(async () => {
      scratch = await mkdtemp(join(tmpdir(), "vgate-chart-"));
      home = join(scratch, "helm-home");
    });
    after(async () => {
      if (scratch) await rm(scratch, { recursive: true, force: true });
    });

    /** helm with its homes in scratch and no kubeconfig: nothing here talks to a cluster. */
    const inRepo = (args: string[]) => helm(args, { home });

    /** Values args with --set-file paths made absolute, in `manifests` (helm reads them in its cwd). */
    const abs = (values: readonly string[], manifests = join(repoRoot, "manifests")): string[] =>
      values.map((v, i) =>
        values[i - 1] === "--set-file"
          ? v.replace(
              /([\w.]+)=([^,]+)/g,
              (_m, k: string, p: string) => `${k}=${join(manifests, p)}`,
            )
          : v,
      );

    async function template(
      values: readonly string[],
      extra: string[] = ["--skip-tests"],
      manifests?: string,
    ): Promise<Json[]> {
      const out = await inRepo([
        "template",
        "vgate",
        CHART,
        "--namespace",
        NS,
        ...extra,
        ...abs(values, manifests),
      ]);
      assert.equal(out.code, 0, `helm template: ${out.stderr}`);
      return parse(out.stdout, "helm template's output");
    }

    it("Chart.yaml's version and appVersion are package.json's, the image the kustomization's", () => {
      const version = (JSON.parse(repoFile("package.json")) as { version: string }).version;
      const chart = parse(repoFile("charts/vgate/Chart.yaml"), "Chart.yaml")[0]!;
      assert.equal(chart.version, version);
      assert.equal(chart.appVersion, version);
      const kustomization = parse(repoFile("manifests/kustomization.yaml"), "kustomization")[0]!;
      const image = obj((kustomization.images as unknown[])[0]);
      const values = parse(repoFile("charts/vgate/values.yaml"), "values.yaml")[0]!;
      assert.equal(obj(values.image).repository, image.newName);
      assert.equal(image.newTag, version);
    });

    it("the chart's CRD file is manifests/crd-ownedaccesskeys.yaml, byte for byte", () => {
      assert.equal(
        repoFile("charts/vgate/files/crd-ownedaccesskeys.yaml"),
        repoFile("manifests/crd-ownedaccesskeys.yaml"),
        "copy manifests/crd-ownedaccesskeys.yaml to charts/vgate/files/",
      );
    });

    it("helm lint --strict is clean for every tested set of values", async () => {
      for (const c of [
        ...CASES,
        {
          name: "monitoring",
          values: ["--set", "networkPolicy.enabled=true,serviceMonitor.enabled=true"],
        },
      ]) {
        const out = await inRepo(["lint", "--strict", CHART, ...abs(c.values)]);
        assert.equal(out.code, 0, `${c.name}: ${out.stdout}${out.stderr}`);
        assert.match(out.stdout, /1 chart\(s\) linted, 0 chart\(s\) failed/);
        assert.doesNotMatch(out.stdout, /\[(WARNING|ERROR)\]/, `${c.name}: ${out.stdout}`);
      }
    });

    for (const c of CASES) {
      it(`helm template equals kubectl kustomize: ${c.name}`, async () => {
        const manifests = c.edits
          ? await editedManifests(scratch, c.edits)
          : join(repoRoot, "manifests");
        const want = byKey(
          (await kustomize(scratch, manifests, c.resources, c.components))
            // The namespace is applied from manifests/namespace.yaml before helm install (below).
            .filter((o) => o.kind !== "Namespace")
            .map(normaliseKustomize),
          "kustomize",
        );
        const rendered = await template(c.values, ["--skip-tests"], manifests);
        for (const o of [...want.values(), ...rendered]) {
          assert.equal(obj(meta(o).labels ?? {})["app.kubernetes.io/part-of"], "vgate", key(o));
        }
        const have = byKey(rendered.map(normaliseHelm), "helm template");
        assert.deepEqual([...have.keys()].sort(), [...want.keys()].sort(), "the same objects");
        for (const [k, o] of want) assert.deepEqual(have.get(k), o, k);
        // What normalising took away is there: the CRD is kept, a changed config rolls the pods.
        const crd = rendered.find((o) => o.kind === "CustomResourceDefinition");
        if (!crd) return; // vgate sync alone: no CRD, no vgate serve.
        assert.equal(obj(meta(crd).annotations)["helm.sh/resource-policy"], "keep");
        const vgate = rendered.find((o) => o.kind === "Deployment" && meta(o).name === "vgate")!;
        const annotations = obj(meta(obj(obj(vgate.spec).template)).annotations ?? {});
        const cm = rendered.find(
          (o) => o.kind === "ConfigMap" && meta(o).name === "vgate-vcluster-config",
        );
        if (cm) {
          const text = String(obj(cm.data)["vcluster.yaml"]);
          assert.equal(
            annotations["checksum/vcluster-config"],
            createHash("sha256").update(text).digest("hex"),
          );
        } else {
          assert.equal(annotations["checksum/vcluster-config"], undefined);
        }
      });
    }

    it("the docs' install applies manifests/namespace.yaml, the Namespace the kustomize base renders", () => {
      const block = docBlock("# Install with Helm:");
      assert.ok(block.includes("kubectl apply -f manifests/namespace.yaml"), block.join("\n"));
      const install = block.findIndex((l) => l.startsWith("helm install vgate charts/vgate"));
      assert.ok(
        install > block.indexOf("kubectl apply -f manifests/namespace.yaml"),
        "namespace first",
      );
    });

    it("in another namespace, every object and name follows it", async () => {
      const out = await inRepo([
        "template",
        "vgate",
        CHART,
        "--namespace",
        "gatekeeping",
        "--set",
        "certificates.mode=certManager,endpoints.enabled=true",
      ]);
      assert.equal(out.code, 0, out.stderr);
      assert.doesNotMatch(out.stdout, /vgate-system/);
      for (const o of parse(out.stdout, "helm template")) {
        const ns = meta(o).namespace;
        if (ns !== undefined) assert.equal(ns, "gatekeeping", key(o));
      }
      assert.match(out.stdout, /- vgate\.gatekeeping\.svc\n/);
      assert.match(out.stdout, /values: \["kube-system", "gatekeeping"\]/);
      assert.match(out.stdout, /cert-manager\.io\/inject-ca-from: gatekeeping\/vgate-serving/);
    });

    it("the crd, pdb and test switches leave their objects out", async () => {
      const off = await template(
        ["--set", "crd.install=false,podDisruptionBudget.enabled=false,test.enabled=false"],
        [],
      );
      for (const kind of ["CustomResourceDefinition", "PodDisruptionBudget", "Pod"]) {
        assert.equal(off.filter((o) => o.kind === kind).length, 0, kind);
      }
      const unkept = await template(["--set", "crd.keep=false"]);
      const crd = unkept.find((o) => o.kind === "CustomResourceDefinition")!;
      assert.equal(meta(crd).annotations, undefined);
    });

    it("keyLifecycle.maxRotationGrace: vgate serve's --max-rotation-grace, parsed as vgate parses it", async () => {
      /** The webhook container's args, the Deployment's env references filled in. */
      const serveArgs = async (values: string[]): Promise<string[]> => {
        const objects = await template(values);
        const deploy = objects.find((o) => o.kind === "Deployment" && meta(o).name === "vgate");
        assert.ok(deploy, "the Deployment vgate");
        const pod = obj(obj(obj(deploy.spec).template).spec);
        const args = (pod.containers as { args: string[] }[])[0]!.args;
        return args.map((a) =>
          a.replace("$(VGATE_KEY_STORAGE)", "hashed").replace("$(POD_NAMESPACE)", NS),
        );
      };
      const grace = (args: string[]) => {
        const parsed = parseServeArgs(args.slice(args.indexOf("serve") + 1));
        assert.notEqual(parsed, "help");
        return (parsed as Exclude<typeof parsed, "help">).auth?.maxRotationGraceMs;
      };
      const byDefault = await serveArgs([]);
      assert.ok(!byDefault.some((a) => a.startsWith("--max-rotation-grace")), byDefault.join(" "));
      assert.equal(grace(byDefault), 24 * 3_600_000);
      const hour = await serveArgs(["--set", "keyLifecycle.maxRotationGrace=1h"]);
      assert.ok(hour.includes("--max-rotation-grace=1h"), hour.join(" "));
      assert.equal(grace(hour), 3_600_000);
      assert.equal(grace(await serveArgs(["--set", "keyLifecycle.maxRotationGrace=0s"])), 0);
    });

    it("NetworkPolicy and ServiceMonitor: rendered only when enabled, aimed at vgate's pods and port", async () => {
      const plain = await template([]);
      assert.equal(
        plain.filter((o) => o.kind === "NetworkPolicy" || o.kind === "ServiceMonitor").length,
        0,
      );
      const on = await template([
        "--set",
        "networkPolicy.enabled=true,serviceMonitor.enabled=true,serviceMonitor.labels.release=prom",
        "--set-json",
        'networkPolicy.ingressFrom=[{"ipBlock":{"cidr":"10.0.0.0/8"}}]',
      ]);
      const deployment = on.find((o) => o.kind === "Deployment")!;
      const selector = obj(obj(deployment.spec).selector).matchLabels;
      const container = obj(
        (obj(obj(obj(deployment.spec).template).spec).containers as unknown[])[0],
      );
      const port = obj((container.ports as unknown[])[0]);
      const np = obj(on.find((o) => o.kind === "NetworkPolicy"));
      const nps = obj(np.spec);
      assert.deepEqual(obj(nps.podSelector).matchLabels, selector);
      assert.deepEqual(nps.policyTypes, ["Ingress", "Egress"]);
      assert.deepEqual(nps.ingress, [
        {
          ports: [{ port: port.containerPort, protocol: "TCP" }],
          from: [{ ipBlock: { cidr: "10.0.0.0/8" } }],
        },
      ]);
      assert.deepEqual(nps.egress, [
        {
          ports: [
            { port: 443, protocol: "TCP" },
            { port: 6443, protocol: "TCP" },
          ],
        },
      ]);
      const service = on.find((o) => o.kind === "Service")!;
      const sm = obj(on.find((o) => o.kind === "ServiceMonitor"));
      assert.equal(obj(meta(sm).labels).release, "prom");
      const sms = obj(sm.spec);
      assert.deepEqual(obj(sms.selector).matchLabels, obj(service.spec).selector);
      const ep = obj((sms.endpoints as unknown[])[0]);
      assert.equal(ep.port, obj((obj(service.spec).ports as unknown[])[0]).name);
      assert.equal(ep.scheme, "https");
      assert.equal(ep.path, "/metrics");
      assert.deepEqual(ep.tlsConfig, {
        serverName: `vgate.${NS}.svc`,
        ca: { secret: { name: "vgate-tls", key: "ca.crt" } },
      });
    });

    it("PrometheusRule: rendered only when enabled, the alerts of manifests/overlays/monitoring", async () => {
      const plain = await template([]);
      assert.equal(plain.filter((o) => o.kind === "PrometheusRule").length, 0);
      const on = await template([
        "--set",
        "prometheusRule.enabled=true,prometheusRule.labels.release=prom",
      ]);
      const rule = obj(on.find((o) => o.kind === "PrometheusRule"));
      assert.equal(obj(meta(rule).labels).release, "prom");
      const component = parse(
        repoFile("manifests/overlays/monitoring/prometheus-rule.yaml"),
        "prometheus-rule.yaml",
      )[0]!;
      assert.deepEqual(rule.spec, component.spec);
    });

    it("the helm test Pod: vgate's image, no token, only the CA of vgate-tls, restricted", async () => {
      const all = await template([], []);
      const pods = all.filter((o) => o.kind === "Pod");
      assert.equal(pods.length, 1);
      const pod = pods[0]!;
      assert.equal(obj(meta(pod).annotations)["helm.sh/hook"], "test");
      const spec = obj(pod.spec);
      assert.equal(spec.automountServiceAccountToken, false);
      assert.deepEqual(spec.volumes, [
        {
          name: "ca",
          secret: {
            secretName: "vgate-tls",
            defaultMode: 0o440,
            items: [{ key: "ca.crt", path: "ca.crt" }],
          },
        },
      ]);
      const c = obj((spec.containers as unknown[])[0]);
      assert.equal(c.image, "ghcr.io/vgate/vgate:0.1.0");
      assert.deepEqual(obj(c.securityContext).capabilities, { drop: ["ALL"] });
      assert.equal(obj(spec.securityContext).runAsNonRoot, true);
    });

    it("values.schema.json's log levels are vgate's", () => {
      const schema = JSON.parse(repoFile("charts/vgate/values.schema.json")) as {
        properties: { logLevel: { enum: string[] } };
      };
      assert.deepEqual(schema.properties.logLevel.enum, [...LOG_LEVELS]);
    });

    const BAD: { set: string[]; at: RegExp }[] = [
      {
        set: ["--set", "keyStorage=sha1"],
        at: /at '\/keyStorage': value must be one of 'hashed', 'plain'/,
      },
      { set: ["--set", "replica=3"], at: /at '': additional properties 'replica' not allowed/ },
      {
        set: ["--set", "certificates.mode=vault"],
        at: /at '\/certificates\/mode': value must be one of/,
      },
      {
        set: ["--set", "certificates.issuer=x"],
        at: /at '\/certificates': additional properties 'issuer' not allowed/,
      },
      {
        set: ["--set", "groupDomain=Loft_SH"],
        at: /at '\/groupDomain': 'Loft_SH' does not match pattern/,
      },
      { set: ["--set", "replicas=0"], at: /at '\/replicas': minimum: got 0, want 1/ },
      { set: ["--set", "logLevel=verbose"], at: /at '\/logLevel': value must be one of/ },
      {
        set: ["--set", "resources.requests.cpu=lots"],
        at: /at '\/resources\/requests\/cpu': 'oneOf' failed/,
      },
      {
        set: ["--set", "endpoints.vclusterName=My_VC"],
        at: /at '\/endpoints\/vclusterName': 'My_VC' does not match pattern/,
      },
      {
        set: ["--set", "sync.multiNamespace=maybe"],
        at: /at '\/sync\/multiNamespace': got string, want boolean/,
      },
      {
        set: ["--set", "networkPolicy.apiServer.ports={70000}"],
        at: /at '\/networkPolicy\/apiServer\/ports\/0': maximum: got 70,000, want 65,535/,
      },
      {
        set: ["--set", "serviceMonitor.interval=often"],
        at: /at '\/serviceMonitor\/interval': 'often' does not match pattern/,
      },
      { set: ["--set", "image.tag=a b"], at: /at '\/image\/tag': 'a b' does not match pattern/ },
      {
        set: ["--set", "keyLifecycle.maxRotationGrace=1 day"],
        at: /at '\/keyLifecycle\/maxRotationGrace': '1 day' does not match pattern/,
      },
      {
        set: ["--set", "discoverVClusters.kinds={Pods}"],
        at: /at '\/discoverVClusters\/kinds\/0': 'Pods' does not match pattern/,
      },
    ];
    it("patches: refuses to render with endpoints too, or with no kind", async () => {
      const cases: [string, string, RegExp][] = [
        [
          "--set",
          "endpoints.enabled=true",
          /endpoints\.enabled and patches\.enabled are both true/,
        ],
        [
          "--set-string",
          "patches.config=sync: {}",
          /has no sync\.toHost patches: there is no kind to register/,
        ],
      ];
      for (const [flag, set, error] of cases) {
        const out = await inRepo([
          "template",
          "vgate",
          CHART,
          "--namespace",
          NS,
          "--set",
          "patches.enabled=true",
          flag,
          set,
        ]);
        assert.notEqual(out.code, 0, set);
        assert.match(out.stderr, error);
      }
    });

    it("patches: refuses a toHost custom resource with scope Cluster, with vgate's message", async () => {
      // vgate's loader refuses it (docs/decisions.md KND-90): no webhook may be registered for it.
      const config = [
        "sync:",
        "  toHost:",
        "    customResources:",
        "      clusterwidgets.example.com:",
        "        enabled: true",
        "        scope: Cluster",
        "        patches:",
        '          - path: metadata.annotations["team"]',
        "            expression: '\"a\"'",
        "",
      ].join("\n");
      const file = join(scratch, "cluster-custom-resource.yaml");
      await writeFile(file, config);
      const vgate = await run(process.execPath, [
        join(repoRoot, "webhook/bin/vgate"),
        "check-config",
        file,
      ]);
      assert.notEqual(vgate.code, 0, "vgate check-config refuses the config");
      const message = vgate.stderr.trim();
      assert.equal(
        message,
        "unsupported scope Cluster for sync.toHost.customResources['clusterwidgets.example.com'].scope. Only 'Namespaced' is allowed",
      );
      const out = await inRepo([
        "template",
        "vgate",
        CHART,
        "--namespace",
        NS,
        "--set",
        "patches.enabled=true",
        "--set-file",
        `patches.config=${file}`,
      ]);
      assert.notEqual(out.code, 0, "the chart refuses the config");
      assert.ok(out.stderr.includes(`patches.config: ${message}`), out.stderr);
    });

    it("patches: every namespaced toHost kind of vgate's table gets a rule, nested keys included", async () => {
      // The chart's table is a copy of vgate's (webhook/src/config/patch-kinds.ts): a kind missing
      // from it would never be sent to vgate. Gateway API kinds sit one level down (gatewayApi.*).
      const kinds = PATCH_KINDS.filter((k) => k.section === "toHost" && k.namespaced);
      assert.ok(kinds.some((k) => k.key.includes(".")));
      const patch = (indent: string) =>
        `${indent}patches:\n${indent}  - path: metadata.labels["a"]\n${indent}    expression: '"b"'\n`;
      const tree = new Map<string, string[]>();
      for (const k of kinds) {
        const [top, sub] = k.key.split(".") as [string, string | undefined];
        tree.set(top, [...(tree.get(top) ?? []), ...(sub ? [sub] : [])]);
      }
      const config = [...tree]
        .map(([top, subs]) =>
          subs.length === 0
            ? `    ${top}:\n${patch("      ")}`
            : `    ${top}:\n${subs.map((sub) => `      ${sub}:\n${patch("        ")}`).join("")}`,
        )
        .join("");
      const hooks = webhooksOf(
        await template([
          "--set",
          "patches.enabled=true",
          "--set-string",
          `patches.config=sync:\n  toHost:\n${config}`,
        ]),
      );
      const rules = (hooks.find((h) => h.name === "mutate.patches.loft.sh")?.rules as Json[]).map(
        (r) => [r.apiGroups, r.resources, r.scope],
      );
      assert.deepEqual(
        rules,
        kinds.map((k) => [[k.group], [k.resource], "Namespaced"]),
      );
    });

    it("patches: cluster-scoped kinds get a webhook on vCluster's marker, computed as vgate computes it", async () => {
      // Names around SafeConcatName's 63-byte limit: the marker is hashed only beyond it.
      const names: [string, string][] = [
        ["my-vcluster", "vcluster-my-vcluster"],
        ["a".repeat(30), "b".repeat(30)], // 63 bytes joined: kept
        ["a".repeat(30), "b".repeat(31)], // 64: shortened
        ["team-a-production-eu-west-1", `vcluster-${"n".repeat(54)}`],
        ["v".repeat(63), "w".repeat(63)],
        // The 52nd byte a dot: the shortened value's ".-" becomes "-", SafeConcatName's last step.
        // The schema allows no dot in either name, so this one renders without it.
        [`${"a".repeat(8)}.${"b".repeat(20)}`, "n".repeat(40)],
      ];
      const config =
        'patches.config=sync:\n  toHost:\n    priorityClasses:\n      patches:\n        - path: metadata.labels["a"]\n          expression: \'"b"\'\n';
      for (const [name, namespace] of names) {
        const dotted = `${namespace}-x-${name}`.includes(".");
        const hooks = webhooksOf(
          await template(
            [
              "--set",
              `patches.enabled=true,patches.vclusterName=${name},patches.vclusterNamespace=${namespace}`,
              "--set-string",
              config,
            ],
            dotted ? ["--skip-tests", "--skip-schema-validation"] : ["--skip-tests"],
          ),
        );
        // Only PriorityClasses: no namespaced webhook, one cluster-scoped one.
        assert.equal(
          hooks.find((h) => String(h.name).startsWith("mutate.patches.")),
          undefined,
          "no namespaced kind, no namespaced webhook",
        );
        const hook = hooks.find((h) => h.name === "mutate.cluster-patches.loft.sh");
        assert.ok(hook, `${name}/${namespace}: the cluster-scoped webhook`);
        const marker = safeConcatName(namespace, "x", name);
        assert.ok(marker.length <= 63, marker);
        assert.deepEqual(obj(hook.objectSelector).matchExpressions, [
          { key: "vcluster.loft.sh/managed-by", operator: "In", values: [marker] },
        ]);
        assert.deepEqual(
          (hook.matchConditions as Json[]).map((c) => c.name),
          ["vcluster-copy"],
        );
        assert.equal(obj(obj(hook.clientConfig).service).path, "/mutate/patches");
        assert.deepEqual(hook.rules, [
          {
            apiGroups: ["scheduling.k8s.io"],
            apiVersions: ["*"],
            resources: ["priorityclasses"],
            operations: ["CREATE", "UPDATE"],
            scope: "Cluster",
          },
        ]);
      }
      // Every cluster-scoped built-in kind, from the same table as vgate's loader.
      const clusterKinds = PATCH_KINDS.filter((k) => k.section === "toHost" && !k.namespaced);
      assert.ok(clusterKinds.length >= 5);
      const every = await template([
        "--set",
        "patches.enabled=true",
        "--set-string",
        `patches.config=sync:\n  toHost:\n${clusterKinds
          .map(
            (k) =>
              `    ${k.key}:\n      patches:\n        - path: metadata.labels["a"]\n          expression: '"b"'\n`,
          )
          .join(
            "",
          )}    pods:\n      patches:\n        - path: metadata.labels["a"]\n          expression: '"b"'\n`,
      ]);
      const hooks = webhooksOf(every);
      const rulesOf = (name: string): unknown =>
        (hooks.find((h) => h.name === name)?.rules as Json[]).map((r) => [
          r.apiGroups,
          r.resources,
          r.scope,
        ]);
      assert.deepEqual(rulesOf("mutate.cluster-patches.loft.sh"), [
        ...clusterKinds.map((k) => [[k.group], [k.resource], "Cluster"]),
      ]);
      assert.deepEqual(rulesOf("mutate.patches.loft.sh"), [[[""], ["pods"], "Namespaced"]]);
    });

    it("discoverVClusters: its kinds are the webhook's rules; a cluster-scoped kind does not render", async () => {
      const objects = await template([
        "--set",
        "discoverVClusters.enabled=true,discoverVClusters.kinds={pods,widgets.example.com}",
      ]);
      const config = objects.find((o) => o.kind === "MutatingWebhookConfiguration")!;
      const hook = (config.webhooks as Json[]).find((w) =>
        String(w.name).startsWith("mutate.vclusters."),
      )!;
      assert.equal(obj(obj(hook.clientConfig).service).path, "/mutate/patches");
      assert.deepEqual(
        (hook.rules as Json[]).map((r) => [r.apiGroups, r.resources, r.apiVersions, r.scope]),
        [
          [[""], ["pods"], ["*"], "Namespaced"],
          [["example.com"], ["widgets"], ["*"], "Namespaced"],
        ],
      );
      for (const kind of ["persistentvolumes", "priorityclasses.scheduling.k8s.io"]) {
        const out = await inRepo([
          "template",
          "vgate",
          CHART,
          "--set",
          `discoverVClusters.enabled=true,discoverVClusters.kinds={services,${kind}}`,
        ]);
        assert.notEqual(out.code, 0, kind);
        assert.match(
          out.stderr,
          new RegExp(`discoverVClusters\\.kinds: ${kind} is cluster-scoped`),
        );
      }
    });

    it("values.schema.json refuses bad values with Helm's error, naming the value", async () => {
      for (const b of BAD) {
        for (const cmd of [
          ["template", "vgate"],
          ["lint", "--strict"],
        ]) {
          const out = await inRepo([...cmd, CHART, ...b.set]);
          assert.notEqual(out.code, 0, `${cmd[0]} ${b.set.join(" ")} was accepted`);
          const text = out.stdout + out.stderr;
          assert.match(text, /values don't meet the specifications of the schema/, text);
          assert.match(text, b.at, text);
        }
      }
    });
  },
);
