// manifests/ as kustomize renders it: the base (manifests/kustomization.yaml) with its Components
// (manifests/overlays/cert-manager, self-managed and endpoints), built by the real
// `kubectl kustomize` the way an install builds them. First what each rendering must hold
// (security context, probes, replicas, disruption budget, spread, flags vgate itself accepts,
// webhook policies and selectors, the group domain everywhere it belongs), then every rendering
// applied to a real kube-apiserver of the test rig, and vgate's service account checked there
// with `kubectl auth can-i --list`.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { parseAllDocuments, parse as parseYaml } from "yaml";
import { PATCH_KINDS } from "../../webhook/src/config/patch-kinds.js";
import { parseServeArgs } from "../../webhook/src/cli/serve-options.js";
import { safeConcatName } from "../../webhook/src/patches/host-names.js";
import { repoFile, repoRoot } from "../support/fixtures.js";
import { shBlocks } from "../support/readme-blocks.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../support/kube/binaries.js";
import { startControlPlane, type ControlPlane } from "../support/kube/control-plane.js";
import { installCrd, schemalessCrd } from "../support/kube/crds.js";
import { vgateRules, type PolicyRule } from "../support/kube/rbac.js";
import {
  HAVE_ANY_KUBECTL,
  ANY_KUBECTL_SKIP_REASON,
  kubectlFor,
  tableRows,
  type Kubectl,
} from "../support/kubectl.js";
import { until } from "../support/until.js";

type Json = Record<string, unknown>;

const NAMESPACE = "vgate-system";
const SERVICE = "vgate";
const SERVICE_ACCOUNT = "vgate";
const TLS_SECRET = "vgate-tls";
const WEBHOOK_CONFIGURATION = "vgate-ownedaccesskeys";
const EXCLUDED_NAMESPACES = ["kube-system", NAMESPACE];
const POD_LABELS = { "app.kubernetes.io/name": "vgate", "app.kubernetes.io/component": "webhook" };
/** The command the self-managed Component documents; `vgate certs` runs it after the install. */
const VGATE_CERTS =
  `vgate certs --namespace ${NAMESPACE} --service ${SERVICE} --secret ${TLS_SECRET} \\\n` +
  `#     --webhook-configuration ${WEBHOOK_CONFIGURATION}`;

const MANIFESTS = join(repoRoot, "manifests");
const COMPONENTS = ["cert-manager", "self-managed", "endpoints", "patches"] as const;
type Component = (typeof COMPONENTS)[number];

/** What an install renders: the base and a certificate Component, with endpoints, patches or neither. */
const VARIANTS: readonly (readonly Component[])[] = [
  ["cert-manager"],
  ["self-managed"],
  ["cert-manager", "endpoints"],
  ["self-managed", "endpoints"],
  ["cert-manager", "patches"],
  ["self-managed", "patches"],
];
const variantName = (components: readonly Component[]): string => components.join(" + ");

interface Rendering {
  name: string;
  components: readonly Component[];
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

/** `kubectl kustomize` of a kustomization of the user's own: the base plus `components`. */
async function render(
  manifests: string,
  components: readonly Component[],
  scratch: string,
): Promise<Rendering> {
  const dir = await mkdtemp(join(scratch, "install-"));
  const rel = (p: string): string => relative(dir, p);
  await writeFile(
    join(dir, "kustomization.yaml"),
    [
      "apiVersion: kustomize.config.k8s.io/v1beta1",
      "kind: Kustomization",
      `resources: [${JSON.stringify(rel(manifests))}]`,
      `components: ${JSON.stringify(components.map((c) => rel(join(manifests, "overlays", c))))}`,
      "",
    ].join("\n"),
  );
  const out = await run("kubectl", ["kustomize", dir]);
  assert.equal(out.code, 0, `kubectl kustomize (${variantName(components)}): ${out.stderr}`);
  const objects = parseAllDocuments(out.stdout).map((d) => {
    assert.deepEqual(d.errors, [], "YAML errors in kustomize's output");
    return obj(d.toJS());
  });
  return { name: variantName(components), components, text: out.stdout, objects };
}

function find(objects: readonly Json[], kind: string, name?: string): Json[] {
  return objects.filter((o) => o.kind === kind && (name === undefined || meta(o).name === name));
}

function one(objects: readonly Json[], kind: string, name?: string): Json {
  const found = find(objects, kind, name);
  assert.equal(found.length, 1, `exactly one ${kind}${name ? ` ${name}` : ""}`);
  return found[0]!;
}

const podSpec = (r: Rendering): Json =>
  obj(obj(obj(one(r.objects, "Deployment", "vgate").spec).template).spec);
const container = (r: Rendering): Json => {
  const found = list(podSpec(r).containers)
    .map((c) => obj(c))
    .filter((c) => c.name === "vgate");
  assert.equal(found.length, 1, "one container named vgate");
  return found[0]!;
};
/**
 * The container's args as the kubelet hands them to vgate: `$(NAME)` expanded from the container's
 * env (a value, a key of a rendered ConfigMap, or the pod's namespace), `$$` an escaped `$`.
 */
const args = (r: Rendering): string[] => {
  const env = new Map<string, string>();
  for (const e of list(container(r).env ?? [], "env").map((v) => obj(v))) {
    const from = e.valueFrom === undefined ? undefined : obj(e.valueFrom);
    let value: string | undefined = typeof e.value === "string" ? e.value : undefined;
    if (from?.configMapKeyRef) {
      const ref = obj(from.configMapKeyRef);
      value = String(obj(one(r.objects, "ConfigMap", String(ref.name)).data)[String(ref.key)]);
    } else if (from?.fieldRef) {
      assert.equal(obj(from.fieldRef).fieldPath, "metadata.namespace", "a supported fieldRef");
      value = String(meta(one(r.objects, "Deployment", "vgate")).namespace);
    }
    assert.ok(value !== undefined, `env ${String(e.name)} has a value`);
    env.set(String(e.name), value);
  }
  return list(container(r).args)
    .map(String)
    .map((a) =>
      a.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (m, name?: string) =>
        m === "$$" ? "$" : (env.get(name!) ?? m),
      ),
    );
};
const flag = (r: Rendering, name: string): string | undefined =>
  args(r)
    .find((a) => a.startsWith(`--${name}=`))
    ?.slice(name.length + 3);

/** Every webhook of every webhook configuration, with its configuration's kind. */
function webhooks(r: Rendering): { kind: string; hook: Json }[] {
  return r.objects
    .filter((o) => /^(Mutating|Validating)WebhookConfiguration$/.test(String(o.kind)))
    .flatMap((config) =>
      list(config.webhooks).map((h) => ({ kind: String(config.kind), hook: obj(h) })),
    );
}

/** The webhook whose clientConfig calls `path` on the Service. */
function webhookFor(r: Rendering, path: string): Json {
  const found = webhooks(r).filter(
    ({ hook }) => obj(obj(hook.clientConfig).service ?? {}).path === path,
  );
  assert.equal(found.length, 1, `one webhook for ${path}`);
  return found[0]!.hook;
}

function selectorExcludes(selector: unknown, names: readonly string[]): boolean {
  const expressions = list(obj(selector, "namespaceSelector").matchExpressions).map((e) => obj(e));
  return expressions.some(
    (e) =>
      e.key === "kubernetes.io/metadata.name" &&
      e.operator === "NotIn" &&
      names.every((n) => list(e.values).includes(n)),
  );
}

/** kube's LabelSelector matchLabels/In semantics, enough for the selectors used here. */
function selects(selector: Json, labels: Record<string, string>): boolean {
  const matchLabels = Object.entries(obj(selector.matchLabels ?? {}));
  return matchLabels.every(([k, v]) => labels[k] === v) && matchLabels.length > 0;
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
  `manifests/ rendered by kubectl kustomize${ANY_KUBECTL_SKIP_REASON}`,
  function () {
    this.timeout(60_000);
    let scratch: string;
    const renderings: Rendering[] = [];
    let domain: string;

    before(async () => {
      scratch = await mkdtemp(join(tmpdir(), "vgate-kustomize-"));
      domain = (await envFile(join(MANIFESTS, "group-domain.env")))["group-domain"] ?? "";
      for (const components of VARIANTS) {
        renderings.push(await render(MANIFESTS, components, scratch));
      }
    });

    after(async () => {
      if (scratch) await rm(scratch, { recursive: true, force: true });
    });

    const each = (fn: (r: Rendering) => void | Promise<void>) => async () => {
      assert.equal(renderings.length, VARIANTS.length);
      for (const r of renderings) await fn(r);
    };

    it("the base renders on its own, and the overlays are Components of it", async () => {
      const out = await run("kubectl", ["kustomize", MANIFESTS]);
      assert.equal(out.code, 0, out.stderr);
      for (const c of COMPONENTS) {
        const k = repoFile(`manifests/overlays/${c}/kustomization.yaml`);
        assert.match(k, /^kind: Component$/m, c);
      }
    });

    it(
      "local settings (group domain, virtual cluster) are never applied",
      each((r) => {
        for (const name of ["vgate-group-domain", "vgate-vcluster"]) {
          assert.deepEqual(find(r.objects, "ConfigMap", name), [], `${r.name}: ${name}`);
        }
        for (const o of r.objects) {
          const annotations = obj(meta(o).annotations ?? {});
          assert.equal(annotations["config.kubernetes.io/local-config"], undefined, r.name);
        }
      }),
    );

    it(
      "namespaced objects are all in vgate-system, which enforces the restricted Pod Security Standard",
      each((r) => {
        const ns = one(r.objects, "Namespace", NAMESPACE);
        const labels = obj(meta(ns).labels);
        for (const mode of ["enforce", "warn", "audit"]) {
          assert.equal(labels[`pod-security.kubernetes.io/${mode}`], "restricted", mode);
        }
        const clusterKinds = new Set([
          "Namespace",
          "CustomResourceDefinition",
          "ClusterRole",
          "ClusterRoleBinding",
          "MutatingWebhookConfiguration",
          "ValidatingWebhookConfiguration",
        ]);
        for (const o of r.objects) {
          const want = clusterKinds.has(String(o.kind)) ? undefined : NAMESPACE;
          assert.equal(
            meta(o).namespace,
            want,
            `${r.name}: ${String(o.kind)} ${String(meta(o).name)}`,
          );
        }
      }),
    );

    it(
      "the Deployment: 2 replicas, non-root, read-only, no capabilities, RuntimeDefault seccomp",
      each((r) => {
        const d = one(r.objects, "Deployment", "vgate");
        assert.equal(obj(d.spec).replicas, 2, r.name);
        const pod = podSpec(r);
        const podSc = obj(pod.securityContext);
        assert.equal(podSc.runAsNonRoot, true);
        assert.ok(Number(podSc.runAsUser) > 0, "a numeric non-root user");
        assert.deepEqual(podSc.seccompProfile, { type: "RuntimeDefault" });
        assert.equal(pod.serviceAccountName, SERVICE_ACCOUNT);
        const sc = obj(container(r).securityContext);
        assert.equal(sc.readOnlyRootFilesystem, true);
        assert.equal(sc.allowPrivilegeEscalation, false);
        assert.deepEqual(obj(sc.capabilities).drop, ["ALL"]);
        assert.equal(obj(sc.capabilities).add, undefined);
        assert.equal(sc.privileged, false);
        const resources = obj(container(r).resources);
        for (const kind of ["requests", "limits"]) {
          for (const res of ["cpu", "memory"]) {
            assert.ok(obj(resources[kind])[res], `${r.name}: ${kind}.${res}`);
          }
        }
        assert.equal(container(r).image, `ghcr.io/vgate/vgate:${packageVersion}`);
      }),
    );

    it(
      "probes: startup and liveness on /healthz, readiness on /readyz, over HTTPS on the serving port",
      each((r) => {
        const c = container(r);
        const ports = list(c.ports).map((p) => obj(p));
        const https = ports.find((p) => p.name === "https");
        assert.ok(https, "a port named https");
        assert.equal(String(https.containerPort), flag(r, "port"), "--port is the https port");
        const probes: [string, string][] = [
          ["startupProbe", "/healthz"],
          ["readinessProbe", "/readyz"],
          ["livenessProbe", "/healthz"],
        ];
        for (const [probe, path] of probes) {
          const get = obj(obj(c[probe], probe).httpGet, `${probe}.httpGet`);
          assert.deepEqual(
            { scheme: get.scheme, port: get.port, path: get.path },
            { scheme: "HTTPS", port: "https", path },
            `${r.name}: ${probe}`,
          );
        }
        // vgate serves exactly these paths.
        const help = repoFile("webhook/src/cli/serve.ts");
        assert.ok(help.includes("GET  /healthz") && help.includes("GET  /readyz"));
      }),
    );

    it(
      "replicas are spread over nodes, and a PodDisruptionBudget keeps one up",
      each((r) => {
        const pod = podSpec(r);
        const template = obj(obj(one(r.objects, "Deployment", "vgate").spec).template);
        const labels = obj(meta(template).labels) as Record<string, string>;
        assert.ok(
          Object.entries(POD_LABELS).every(([k, v]) => labels[k] === v),
          "pod labels",
        );
        const spread = list(pod.topologySpreadConstraints).map((c) => obj(c));
        const byHost = spread.find((c) => c.topologyKey === "kubernetes.io/hostname");
        assert.ok(byHost, "spread over kubernetes.io/hostname");
        assert.equal(byHost.maxSkew, 1);
        assert.equal(byHost.whenUnsatisfiable, "DoNotSchedule");
        assert.ok(selects(obj(byHost.labelSelector), labels), "the constraint counts vgate's pods");
        const pdb = one(r.objects, "PodDisruptionBudget", "vgate");
        const pdbSpec = obj(pdb.spec);
        assert.equal(pdbSpec.minAvailable, 1);
        assert.ok(
          Number(pdbSpec.minAvailable) <
            Number(obj(obj(one(r.objects, "Deployment").spec)).replicas),
        );
        assert.ok(selects(obj(pdbSpec.selector), labels), "the budget covers vgate's pods");
      }),
    );

    it(
      "the Service: 443 to the https port of vgate's pods",
      each((r) => {
        const svc = obj(one(r.objects, "Service", SERVICE).spec);
        const labels = obj(meta(obj(obj(one(r.objects, "Deployment").spec).template)).labels);
        assert.ok(
          Object.entries(obj(svc.selector)).every(([k, v]) => labels[k] === v),
          "the selector picks vgate's pods",
        );
        const ports = list(svc.ports).map((p) => obj(p));
        assert.deepEqual(
          ports.map((p) => ({ port: p.port, targetPort: p.targetPort })),
          [{ port: 443, targetPort: "https" }],
        );
      }),
    );

    it(
      "vgate serve's flags: its own parser accepts them; hashed keys, the group domain, TLS from the Secret",
      each((r) => {
        const [command, ...rest] = args(r);
        assert.equal(command, "serve");
        const opts = parseServeArgs(rest);
        assert.ok(opts !== "help");
        assert.equal(opts.auth?.keyStorage, "hashed", r.name);
        assert.equal(opts.groupDomain, domain);
        const mounts = list(container(r).volumeMounts).map((m) => obj(m));
        const volumes = list(podSpec(r).volumes).map((v) => obj(v));
        for (const file of [opts.tlsCertFile, opts.tlsKeyFile]) {
          assert.ok(file, "--tls-cert-file and --tls-private-key-file are set");
          const mount = mounts.find((m) => m.mountPath === dirname(file));
          assert.ok(mount, `${file} is on a mounted volume`);
          assert.equal(mount.subPath, undefined, "no subPath, so a renewed Secret reaches the pod");
          const volume = volumes.find((v) => v.name === mount.name);
          assert.equal(obj(volume?.secret, "the TLS volume").secretName, TLS_SECRET);
        }
      }),
    );

    it(
      "every webhook: failurePolicy Fail, sideEffects None, a timeout, matchPolicy Equivalent, the Service",
      each((r) => {
        const hooks = webhooks(r);
        // endpoints adds one webhook; patches two: namespaced and cluster-scoped kinds.
        const added = r.components.includes("patches")
          ? 2
          : r.components.includes("endpoints")
            ? 1
            : 0;
        assert.equal(hooks.length, 2 + added, r.name);
        for (const { hook } of hooks) {
          const what = `${r.name}: ${String(hook.name)}`;
          assert.equal(hook.failurePolicy, "Fail", what);
          assert.equal(hook.sideEffects, "None", what);
          assert.equal(hook.matchPolicy, "Equivalent", what);
          assert.ok(Number(hook.timeoutSeconds) >= 1 && Number(hook.timeoutSeconds) <= 10, what);
          assert.deepEqual(hook.admissionReviewVersions, ["v1"], what);
          const service = obj(obj(hook.clientConfig).service, `${what}: clientConfig.service`);
          assert.deepEqual(
            { namespace: service.namespace, name: service.name, port: service.port },
            { namespace: NAMESPACE, name: SERVICE, port: 443 },
            what,
          );
          assert.ok(selectorExcludes(hook.namespaceSelector, EXCLUDED_NAMESPACES), what);
        }
      }),
    );

    it(
      "timeouts nest: vgate answers before kube-apiserver gives up, and exits before SIGKILL",
      each((r) => {
        const opts = parseServeArgs(args(r).slice(1));
        assert.ok(opts !== "help" && opts.operations);
        const grace = Number(podSpec(r).terminationGracePeriodSeconds);
        assert.ok(opts.operations.shutdownTimeoutMs < grace * 1000, `${r.name}: grace period`);
        for (const { hook } of webhooks(r)) {
          const limit = Number(hook.timeoutSeconds) * 1000;
          assert.ok(opts.operations.admissionTimeoutMs < limit, `${String(hook.name)} timeout`);
        }
      }),
    );

    it("each failurePolicy in the sources says why it was chosen", () => {
      const sources = [
        "manifests/webhook-configurations.yaml",
        "manifests/overlays/endpoints/endpoints-webhook.yaml",
        "manifests/overlays/endpoints/virtual-cluster.yaml",
        "manifests/overlays/patches/patches-webhook.yaml",
        "manifests/overlays/patches/cluster-patches-webhook.yaml",
        "manifests/overlays/patches/virtual-cluster.yaml",
      ];
      let seen = 0;
      for (const file of sources) {
        const lines = repoFile(file).split("\n");
        lines.forEach((line, i) => {
          if (!/^\s*failurePolicy:/.test(line)) return;
          seen++;
          assert.match(
            lines[i - 1] ?? "",
            /^\s*#/,
            `${file}:${i + 1}: a comment above failurePolicy`,
          );
        });
      }
      assert.equal(seen, 7);
    });

    it(
      "OwnedAccessKey webhooks have no objectSelector (labels are the client's to choose)",
      each((r) => {
        for (const path of ["/mutate/ownedaccesskeys", "/validate/ownedaccesskeys"]) {
          assert.equal(webhookFor(r, path).objectSelector, undefined, `${r.name}: ${path}`);
        }
      }),
    );

    it(
      "caBundle is left to the certificate Component (cainjector or vgate certs), never blanked by apply",
      each((r) => {
        for (const { hook } of webhooks(r)) {
          assert.equal(
            obj(hook.clientConfig).caBundle,
            undefined,
            `${r.name}: ${String(hook.name)}`,
          );
        }
      }),
    );

    it(
      "cert-manager: an Issuer and a Certificate for the Service into vgate-tls, CA injected into both configurations",
      each((r) => {
        if (!r.components.includes("cert-manager")) {
          assert.deepEqual(find(r.objects, "Certificate"), [], r.name);
          assert.deepEqual(find(r.objects, "Issuer"), [], r.name);
          return;
        }
        const cert = one(r.objects, "Certificate", "vgate-serving");
        const spec = obj(cert.spec);
        assert.equal(spec.secretName, TLS_SECRET);
        assert.ok(list(spec.dnsNames).includes(`${SERVICE}.${NAMESPACE}.svc`));
        const issuerRef = obj(spec.issuerRef);
        assert.equal(issuerRef.kind, "Issuer");
        // From a CA Issuer, not self-signed: a renewal keeps the CA that kube-apiserver trusts
        // (docs/decisions.md OPS-11).
        const servingIssuer = one(r.objects, "Issuer", String(issuerRef.name));
        const servingCa = String(obj(obj(servingIssuer.spec).ca).secretName);
        assert.equal(
          obj(one(r.objects, "Certificate", "vgate-serving-ca").spec).secretName,
          servingCa,
        );
        const injectFrom = `${String(meta(cert).namespace)}/${String(meta(cert).name)}`;
        const configs = r.objects.filter((o) => String(o.kind).endsWith("WebhookConfiguration"));
        assert.equal(configs.length, 2);
        for (const config of configs) {
          const annotations = obj(meta(config).annotations);
          assert.equal(
            annotations["cert-manager.io/inject-ca-from"],
            injectFrom,
            String(config.kind),
          );
        }
        // kube-apiserver's client certificate: from a CA of its own, into the Secret whose ca.crt
        // the Deployment mounts as --client-ca-file, with the name --client-allowed-names lists.
        const client = obj(one(r.objects, "Certificate", "vgate-apiserver-client").spec);
        assert.equal(client.secretName, "vgate-apiserver-client");
        assert.equal(client.commonName, flag(r, "client-allowed-names"));
        assert.deepEqual(list(client.usages), ["client auth", "digital signature"]);
        const clientIssuer = one(r.objects, "Issuer", String(obj(client.issuerRef).name));
        const caSecret = String(obj(obj(clientIssuer.spec).ca).secretName);
        const ca = obj(one(r.objects, "Certificate", "vgate-apiserver-client-ca").spec);
        assert.equal(ca.isCA, true);
        assert.equal(ca.secretName, caSecret);
        assert.notEqual(caSecret, TLS_SECRET, "not the serving certificate's CA");
      }),
    );

    it(
      "the Deployment trusts only kube-apiserver's client certificate, and never holds its key",
      each((r) => {
        const caFile = flag(r, "client-ca-file");
        assert.ok(caFile, "--client-ca-file");
        const mount = list(container(r).volumeMounts)
          .map((m) => obj(m))
          .find((m) => caFile.startsWith(`${String(m.mountPath)}/`));
        assert.ok(mount, "the CA file is on a mounted volume");
        const volume = list(podSpec(r).volumes)
          .map((v) => obj(v))
          .find((v) => v.name === mount.name);
        const secret = obj(volume?.secret, "a Secret volume");
        assert.equal(secret.secretName, "vgate-apiserver-client");
        assert.deepEqual(secret.items, [{ key: "ca.crt", path: "ca.crt" }], "ca.crt alone");
      }),
    );

    it(
      "vgate-info: every user may read how keys are stored, and the Deployment stores them so",
      each((r) => {
        const info = one(r.objects, "ConfigMap", "vgate-info");
        const data = obj(info.data) as Record<string, string>;
        assert.equal(flag(r, "key-storage"), data["keyStorage"]);
        assert.equal(data["keyStorage"], "hashed");
        assert.equal(flag(r, "group-domain"), data["groupDomain"]);
        const role = one(r.objects, "Role", "vgate-info-reader");
        assert.deepEqual(role.rules, [
          {
            apiGroups: [""],
            resources: ["configmaps"],
            resourceNames: ["vgate-info"],
            verbs: ["get"],
          },
        ]);
        const binding = one(r.objects, "RoleBinding", "vgate-info-reader");
        assert.deepEqual(obj(binding.roleRef).name, "vgate-info-reader");
        assert.deepEqual(binding.subjects, [
          { apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "system:authenticated" },
        ]);
      }),
    );

    it(
      "self-managed: documents the vgate certs command for exactly these names, and makes no Secret",
      each((r) => {
        if (!r.components.includes("self-managed")) return;
        const k = repoFile("manifests/overlays/self-managed/kustomization.yaml");
        assert.ok(k.includes(VGATE_CERTS), "the command line in the Component");
        assert.deepEqual(find(r.objects, "Secret"), []);
        one(r.objects, "MutatingWebhookConfiguration", WEBHOOK_CONFIGURATION);
        one(r.objects, "ValidatingWebhookConfiguration", WEBHOOK_CONFIGURATION);
        one(r.objects, "Service", SERVICE);
      }),
    );

    it(
      "RBAC: the ClusterRole is exactly vgate's rules, bound to its service account, in every rendering",
      each((r) => {
        const role = one(r.objects, "ClusterRole", "vgate");
        assert.deepEqual(role.rules, vgateRules(`management.${domain}`), r.name);
        assert.equal(find(r.objects, "ClusterRole").length, 1, "no other ClusterRole");
        // The one Role is vgate-info's reader (below); vgate's own rights are the ClusterRole.
        assert.deepEqual(
          find(r.objects, "Role").map((o) => meta(o).name),
          ["vgate-info-reader"],
        );
        assert.deepEqual(
          find(r.objects, "RoleBinding").map((o) => meta(o).name),
          ["vgate-info-reader"],
        );
        const binding = one(r.objects, "ClusterRoleBinding", "vgate");
        assert.deepEqual(obj(binding.roleRef).name, "vgate");
        assert.deepEqual(binding.subjects, [
          { kind: "ServiceAccount", name: SERVICE_ACCOUNT, namespace: NAMESPACE },
        ]);
        one(r.objects, "ServiceAccount", SERVICE_ACCOUNT);
      }),
    );

    it(
      "endpoints: /mutate/endpoints on the Endpoints and EndpointSlices of one virtual cluster, config from a ConfigMap",
      each(async (r) => {
        if (!r.components.includes("endpoints")) {
          if (!r.components.includes("patches")) assert.equal(flag(r, "config"), undefined, r.name);
          return;
        }
        const vc = await envFile(join(MANIFESTS, "overlays/endpoints/vcluster.env"));
        const opts = parseServeArgs(args(r).slice(1));
        assert.ok(opts !== "help" && opts.endpoints);
        assert.equal(opts.endpoints.vclusterName, vc["vcluster-name"]);
        assert.equal(opts.endpoints.vclusterNamespace, vc["vcluster-namespace"]);
        const hook = webhookFor(r, "/mutate/endpoints");
        assert.deepEqual(hook.rules, [
          {
            apiGroups: [""],
            apiVersions: ["v1"],
            resources: ["endpoints"],
            operations: ["CREATE", "UPDATE"],
            scope: "Namespaced",
          },
          {
            apiGroups: ["discovery.k8s.io"],
            apiVersions: ["v1"],
            resources: ["endpointslices"],
            operations: ["CREATE", "UPDATE"],
            scope: "Namespaced",
          },
        ]);
        assert.equal(hook.name, `mutate.endpoints.${domain}`);
        const nsExpr = list(obj(hook.namespaceSelector).matchExpressions).map((e) => obj(e));
        assert.deepEqual(nsExpr[0], {
          key: "kubernetes.io/metadata.name",
          operator: "In",
          values: [vc["vcluster-namespace"]],
        });
        assert.deepEqual(obj(hook.objectSelector).matchExpressions, [
          { key: "vcluster.loft.sh/managed-by", operator: "In", values: [vc["vcluster-name"]] },
        ]);
        // The config file is on a volume of the generated ConfigMap, and vgate accepts it.
        const file = opts.endpoints.config;
        const mount = list(container(r).volumeMounts)
          .map((m) => obj(m))
          .find((m) => m.mountPath === dirname(file));
        assert.ok(mount, `${file} is on a mounted volume`);
        const volume = list(podSpec(r).volumes)
          .map((v) => obj(v))
          .find((v) => v.name === mount.name);
        const cmName = String(obj(volume?.configMap, "the config volume").name);
        const data = obj(one(r.objects, "ConfigMap", cmName).data);
        const content = String(data[file.slice(dirname(file).length + 1)]);
        const copy = join(scratch, `vcluster-${randomBytes(4).toString("hex")}.yaml`);
        await writeFile(copy, content);
        const check = await run(process.execPath, [
          join(repoRoot, "webhook/bin/vgate"),
          "check-config",
          copy,
        ]);
        assert.equal(check.code, 0, `vgate check-config: ${check.stderr}`);
      }),
    );

    it(
      "patches: /mutate/patches on exactly the kinds vcluster.yaml patches, only vCluster's copies",
      each(async (r) => {
        if (!r.components.includes("patches")) return;
        const dir = join(MANIFESTS, "overlays/patches");
        const vc = await envFile(join(dir, "vcluster.env"));
        const opts = parseServeArgs(args(r).slice(1));
        assert.ok(opts !== "help" && opts.endpoints);
        assert.equal(opts.endpoints.vclusterName, vc["vcluster-name"]);
        assert.equal(opts.endpoints.vclusterNamespace, vc["vcluster-namespace"]);
        const hooks = webhooks(r)
          .map(({ hook }) => hook)
          .filter((h) => obj(obj(h.clientConfig).service).path === "/mutate/patches");
        const hook = hooks.find((h) => h.name === `mutate.patches.${domain}`);
        const clusterHook = hooks.find((h) => h.name === `mutate.cluster-patches.${domain}`);
        assert.ok(hook && clusterHook && hooks.length === 2, "two webhooks on /mutate/patches");
        // The rules name the sync.toHost kinds of the example config, in vCluster's field order:
        // the namespaced ones in one webhook, the cluster-scoped ones in the other.
        const config = parseYaml(await readFile(join(dir, "vcluster.yaml"), "utf8")) as {
          sync: { toHost: Record<string, { patches?: unknown[] }> };
        };
        const named = PATCH_KINDS.filter(
          (k) => k.section === "toHost" && (config.sync.toHost[k.key]?.patches ?? []).length > 0,
        );
        assert.ok(named.length >= 2, "the example patches more than one kind");
        assert.ok(
          named.some((k) => !k.namespaced),
          "the example patches a cluster-scoped kind",
        );
        const rulesOf = (namespaced: boolean): Json[] =>
          named
            .filter((k) => k.namespaced === namespaced)
            .map((k) => ({
              apiGroups: [k.group],
              apiVersions: ["*"],
              resources: [k.resource],
              operations: ["CREATE", "UPDATE"],
              scope: namespaced ? "Namespaced" : "Cluster",
            }));
        assert.deepEqual(hook.rules, rulesOf(true));
        assert.deepEqual(clusterHook.rules, rulesOf(false));
        // The cluster marker listed next to the example is vCluster's (and vgate's) for it.
        const marker = safeConcatName(vc["vcluster-namespace"]!, "x", vc["vcluster-name"]!);
        assert.equal(vc["vcluster-cluster-marker"], marker);
        assert.deepEqual(obj(clusterHook.objectSelector).matchExpressions, [
          { key: "vcluster.loft.sh/managed-by", operator: "In", values: [marker] },
        ]);
        assert.deepEqual(clusterHook.matchConditions, hook.matchConditions);
        const nsExpr = list(obj(hook.namespaceSelector).matchExpressions).map((e) => obj(e));
        assert.deepEqual(nsExpr[0], {
          key: "kubernetes.io/metadata.name",
          operator: "In",
          values: [vc["vcluster-namespace"]],
        });
        assert.deepEqual(obj(hook.objectSelector).matchExpressions, [
          { key: "vcluster.loft.sh/managed-by", operator: "In", values: [vc["vcluster-name"]] },
        ]);
        assert.deepEqual(
          list(hook.matchConditions).map((c) => obj(c).name),
          ["vcluster-copy"],
        );
        // The virtual cluster's webhook: the same kinds, updates only, on /mutate/patches/virtual.
        const virtual = parseAllDocuments(
          repoFile("manifests/overlays/patches/virtual-cluster.yaml"),
        )
          .map((d) => obj(d.toJSON()))
          .find((o) => o.kind === "MutatingWebhookConfiguration");
        const vhook = obj(list(virtual?.webhooks)[0]);
        assert.equal(obj(obj(vhook.clientConfig).service).path, "/mutate/patches/virtual");
        const vrules = list(vhook.rules).map((x) => obj(x));
        assert.deepEqual(
          vrules.map((x) => [
            x.apiGroups,
            list(x.resources).filter((n) => !String(n).includes("/")),
            x.scope,
          ]),
          named.map((k) => [[k.group], [k.resource], k.namespaced ? "Namespaced" : "Cluster"]),
        );
        for (const x of vrules) assert.deepEqual(x.operations, ["UPDATE"]);
        assert.equal(
          (
            await run(process.execPath, [
              join(repoRoot, "webhook/bin/vgate"),
              "check-config",
              join(dir, "vcluster.yaml"),
            ])
          ).code,
          0,
        );
      }),
    );

    it("manifests/README.md's marker command prints vgate's cluster marker, short and long names", async () => {
      const block = shBlocks(repoFile("manifests/README.md")).filter((b) =>
        b[0]!.startsWith("# vcluster.env's cluster marker"),
      );
      assert.equal(block.length, 1, "one marker block in manifests/README.md");
      const lines = block[0]!;
      assert.equal(lines[1], "NAME=my-vcluster NAMESPACE=vcluster-my-vcluster");
      const env = await envFile(join(MANIFESTS, "overlays/patches/vcluster.env"));
      const names: [string, string][] = [
        [env["vcluster-name"]!, env["vcluster-namespace"]!],
        ["a".repeat(30), "b".repeat(30)], // 63 bytes joined: kept
        ["a".repeat(30), "b".repeat(31)], // 64: shortened
        ["v".repeat(63), "w".repeat(63)],
        // The 52nd byte a dot: the shortened value's ".-" becomes "-", SafeConcatName's last step.
        [`${"a".repeat(8)}.${"b".repeat(20)}`, "n".repeat(40)],
      ];
      for (const [name, namespace] of names) {
        const script = [lines[0], `NAME=${name} NAMESPACE=${namespace}`, ...lines.slice(2)].join(
          "\n",
        );
        const out = await run("sh", ["-c", script]);
        assert.equal(out.code, 0, out.stderr);
        const want = safeConcatName(namespace, "x", name);
        assert.equal(out.stdout, `vcluster-cluster-marker=${want}\n`);
        if (name === env["vcluster-name"]) assert.equal(env["vcluster-cluster-marker"], want);
      }
    });

    it("the group domain, changed in group-domain.env alone, follows everywhere", async () => {
      const copy = await mkdtemp(join(scratch, "domain-"));
      await cp(MANIFESTS, copy, { recursive: true });
      const env = join(copy, "group-domain.env");
      await writeFile(
        env,
        (await readFile(env, "utf8")).replace(/^group-domain=.*$/m, "group-domain=example.com"),
      );
      for (const components of VARIANTS) {
        const r = await render(copy, components, scratch);
        const group = "management.example.com";
        const crd = one(r.objects, "CustomResourceDefinition");
        assert.equal(meta(crd).name, `ownedaccesskeys.${group}`);
        assert.equal(obj(crd.spec).group, group);
        assert.equal(flag(r, "group-domain"), "example.com");
        assert.deepEqual(one(r.objects, "ClusterRole").rules, vgateRules(group));
        for (const path of ["/mutate/ownedaccesskeys", "/validate/ownedaccesskeys"]) {
          const hook = webhookFor(r, path);
          assert.ok(String(hook.name).endsWith(`.ownedaccesskeys.${group}`), String(hook.name));
          assert.deepEqual(obj(list(hook.rules)[0]).apiGroups, [group]);
        }
        // Nothing of ours still names loft.sh; vCluster's own labels keep their prefix.
        const stray = r.text.match(/[\w.-]*loft\.sh[\w./-]*/g) ?? [];
        assert.deepEqual(
          stray.filter((s) => !s.startsWith("vcluster.loft.sh/")),
          [],
          `${r.name}: loft.sh left over`,
        );
      }
    });

    // --- on a real kube-apiserver ------------------------------------------------------------------

    (HAVE_KUBE ? describe : describe.skip)(
      `applied to the test rig's kube-apiserver${KUBE_SKIP_REASON}`,
      function () {
        this.timeout(120_000);
        // A control plane of its own: the shared cluster's webhook configurations, ClusterRole and
        // vgate process stay as they are.
        let plane: ControlPlane;
        let kubectl: Kubectl;

        before(async () => {
          plane = await startControlPlane();
          kubectl = kubectlFor(plane.adminKubeconfig, join(plane.dir, "kubectl-cache"));
          // cert-manager is not installed here: its two kinds, keeping whatever they are given.
          for (const [kind, plural] of [
            ["Issuer", "issuers"],
            ["Certificate", "certificates"],
          ] as const) {
            await installCrd(
              plane.admin,
              schemalessCrd("cert-manager.io", kind, plural, { namespaced: true }),
            );
          }
        });

        after(async () => {
          await plane?.stop();
        });

        it("every rendering is accepted, with no Pod Security warning", async () => {
          // The namespace first, so Pod Security admission knows its labels when the Deployment comes.
          const ns = renderings[0]!.objects.filter((o) => o.kind === "Namespace");
          const first = await kubectl(["apply", "-f", "-"], {
            input: JSON.stringify({ kind: "List", apiVersion: "v1", items: ns }),
          });
          assert.equal(first.code, 0, first.stderr);
          for (const r of renderings) {
            const out = await kubectl(["apply", "-f", "-"], { input: r.text });
            assert.equal(out.code, 0, `${r.name}: ${out.stderr}`);
            assert.doesNotMatch(out.stderr, /Warning/, `${r.name}: ${out.stderr}`);
            const applied = out.stdout.trim().split("\n");
            assert.equal(applied.length, r.objects.length, `${r.name}: ${out.stdout}`);
          }
          // The check can fail: the same Deployment without its seccomp profile is warned about.
          const loose = structuredClone(one(renderings[0]!.objects, "Deployment", "vgate"));
          delete obj(obj(obj(obj(loose.spec).template).spec).securityContext).seccompProfile;
          const warned = await kubectl(["apply", "--dry-run=server", "-f", "-"], {
            input: JSON.stringify(loose),
          });
          assert.equal(warned.code, 0, warned.stderr);
          assert.match(
            warned.stderr,
            /would violate PodSecurity "restricted:latest".*seccompProfile/,
          );
        });

        it("kube-apiserver reads the webhooks back as written: policies and selectors kept", async () => {
          const out = await kubectl([
            "get",
            "mutatingwebhookconfiguration",
            WEBHOOK_CONFIGURATION,
            "-o",
            "json",
          ]);
          assert.equal(out.code, 0, out.stderr);
          const live = obj(JSON.parse(out.stdout));
          const rendered = one(renderings.at(-1)!.objects, "MutatingWebhookConfiguration");
          const pick = (h: unknown) => {
            const o = obj(h);
            return [
              o.name,
              o.failurePolicy,
              o.sideEffects,
              o.matchPolicy,
              o.timeoutSeconds,
              o.namespaceSelector,
              o.objectSelector ?? {},
            ];
          };
          assert.deepEqual(list(live.webhooks).map(pick), list(rendered.webhooks).map(pick));
        });

        it("the service account may do exactly vgate's rules beyond what every user may", async () => {
          const sa = `system:serviceaccount:${NAMESPACE}:${SERVICE_ACCOUNT}`;
          // Another service account of the same namespace, bound to nothing: the defaults.
          const baseline = `system:serviceaccount:${NAMESPACE}:nobody-${randomBytes(3).toString("hex")}`;
          const expected = vgateRules(`management.${domain}`).flatMap(ruleRows).sort();
          for (const namespace of ["default", NAMESPACE]) {
            let extra: string[] = [];
            await until(async () => {
              const mine = await canIList(kubectl, sa, namespace);
              const theirs = new Set(await canIList(kubectl, baseline, namespace));
              extra = mine.filter((row) => !theirs.has(row)).sort();
              return extra.length >= expected.length;
            }, "RBAC serving vgate's ClusterRoleBinding");
            assert.deepEqual(extra, expected, `in namespace ${namespace}`);
          }
        });

        it("the changed group domain renders into objects kube-apiserver accepts", async () => {
          const copy = await mkdtemp(join(scratch, "domain-apply-"));
          await cp(MANIFESTS, copy, { recursive: true });
          await writeFile(join(copy, "group-domain.env"), "group-domain=example.com\n");
          const r = await render(copy, ["cert-manager", "endpoints"], scratch);
          const out = await kubectl(["apply", "--dry-run=server", "-f", "-"], { input: r.text });
          assert.equal(out.code, 0, out.stderr);
          assert.match(out.stdout, /ownedaccesskeys\.management\.example\.com/);
        });
      },
    );
  },
);

/** `kubectl auth can-i --list` rows (resource, non-resource URLs, names, verbs), as text. */
async function canIList(kubectl: Kubectl, user: string, namespace: string): Promise<string[]> {
  const out = await kubectl(["auth", "can-i", "--list", `--as=${user}`, "-n", namespace]);
  assert.equal(out.code, 0, out.stderr);
  return tableRows(out.stdout)
    .slice(1)
    .map((cells) => cells.join(" | "));
}

/** The rows `kubectl auth can-i --list` prints for a rule. */
function ruleRows(rule: PolicyRule): string[] {
  return rule.resources.flatMap((resource) =>
    rule.apiGroups.map((group) => {
      const [res = "", sub] = resource.split("/");
      const name = `${res}${group ? `.${group}` : ""}${sub ? `/${sub}` : ""}`;
      return [
        name,
        "[]",
        `[${(rule.resourceNames ?? []).join(" ")}]`,
        `[${rule.verbs.join(" ")}]`,
      ].join(" | ");
    }),
  );
}
