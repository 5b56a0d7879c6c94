// cert-manager's real controller and cainjector (built by make kube) as plain processes inside the
// node rig's network namespace, with its CustomResourceDefinitions installed as its release
// manifests install them. Their flags are those of cert-manager's Helm chart: the controller's
// cluster resource namespace is cert-manager, both elect a leader with a Lease in kube-system.
// Both use the rig's admin kubeconfig, where the chart gives them a ServiceAccount and RBAC of
// their own: what is tested is what they do, not their rights. cert-manager's webhook is not run
// (docs/decisions.md OPS-10).
//
// Nothing leaves the machine: the namespace has no default route, and the test counts with the
// outbound sink (../vcluster/outbound-sink.ts) that neither tried. Nothing is left behind: both are
// the rig's processes (rig.startInNetns), stopped with it, also by its keeper when the run dies.

import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { waitUntil, type Supervised } from "../kube/processes.js";
import type { NodeRig } from "../node/node-rig.js";
import type { CertManagerParts } from "./cert-manager-parts.js";

export const CERT_MANAGER_NAMESPACE = "cert-manager";
const LEASE_NAMESPACE = "kube-system";

export interface CertManager {
  controller: Supervised;
  cainjector: Supervised;
  /** The CustomResourceDefinitions installed, by name. */
  crds: string[];
}

interface Crd {
  metadata: { name: string; labels?: Record<string, string> };
}

/**
 * deploy/crds/*.yaml as `helm template cert-manager` renders them: their only template
 * expressions are the labels, which name the chart and the release.
 */
export function renderCrds(parts: CertManagerParts): Crd[] {
  return readdirSync(parts.crdsDir)
    .filter((f) => /^crd-.*\.yaml$/.test(f))
    .sort()
    .map((f) => {
      const crd = parseYaml(readFileSync(join(parts.crdsDir, f), "utf8")) as Crd;
      crd.metadata.labels = {
        app: "cert-manager",
        "app.kubernetes.io/name": "cert-manager",
        "app.kubernetes.io/instance": "cert-manager",
        "app.kubernetes.io/version": parts.version,
      };
      return crd;
    });
}

/** Installs cert-manager's CRDs and starts its controller and cainjector; resolves once both lead. */
export async function startCertManager(
  rig: NodeRig,
  parts: CertManagerParts,
  timeoutMs = 120_000,
): Promise<CertManager> {
  const must = async (args: string[], input?: string) => {
    const r = await rig.kubectl(args, input === undefined ? {} : { input });
    if (r.code !== 0) throw new Error(`cert-manager: kubectl ${args.join(" ")}: ${r.stderr}`);
    return r.stdout;
  };
  const crds = renderCrds(parts);
  // Server-side: the largest CRDs do not fit client-side apply's last-applied annotation.
  await must(
    ["apply", "--server-side", "-f", "-"],
    JSON.stringify({ apiVersion: "v1", kind: "List", items: crds }),
  );
  const names = crds.map((c) => c.metadata.name);
  await must([
    "wait",
    "--for=condition=Established",
    "--timeout=60s",
    ...names.map((n) => `crd/${n}`),
  ]);
  await must(["create", "namespace", CERT_MANAGER_NAMESPACE]);
  const common = [
    `--kubeconfig=${rig.adminKubeconfig}`,
    `--leader-election-namespace=${LEASE_NAMESPACE}`,
    // One replica on a rig whose tests restart kube-apiserver: with the defaults (renew within
    // 40 s) a slow restart loses the Lease, and cert-manager exits when it loses it. Nobody else
    // waits for this Lease, so holding it long costs nothing.
    "--leader-election-lease-duration=10m",
    "--leader-election-renew-deadline=9m",
    "--v=2",
  ];
  const controller = rig.startInNetns("cert-manager-controller", parts.controller, [
    ...common,
    `--cluster-resource-namespace=${CERT_MANAGER_NAMESPACE}`,
    // Inside the rig's namespace only (the chart's default is every address).
    "--metrics-listen-address=127.0.0.1:9402",
  ]);
  const cainjector = rig.startInNetns("cert-manager-cainjector", parts.cainjector, common);
  const leads = (proc: Supervised, lease: string) =>
    waitUntil(
      `the Lease ${LEASE_NAMESPACE}/${lease}`,
      proc,
      async () => {
        const r = await rig.admin.request<{ spec?: { holderIdentity?: string } }>(
          "GET",
          `/apis/coordination.k8s.io/v1/namespaces/${LEASE_NAMESPACE}/leases/${lease}`,
        );
        return r.status === 200 && !!r.body.spec?.holderIdentity;
      },
      timeoutMs,
    );
  await Promise.all([
    leads(controller, "cert-manager-controller"),
    leads(cainjector, "cert-manager-cainjector-leader-election"),
  ]);
  return { controller, cainjector, crds: names };
}

/** Whether each process still runs, and the end of its log: for a test's failure message. */
export async function certManagerState(cm: CertManager): Promise<string> {
  const parts: string[] = [];
  for (const proc of [cm.controller, cm.cainjector]) {
    const state = proc.exited() ? "exited" : "running";
    parts.push(`${proc.name} (${state}), its log ends:\n${await proc.logTail(30)}`);
  }
  return parts.join("\n");
}
