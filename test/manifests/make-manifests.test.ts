// `make manifests`: every supported install rendered into dist/manifests/<name>.yaml, each file
// exactly what `kubectl kustomize` gives for a kustomization of the base (manifests, or vgate
// sync's manifests/sync) and its Components (as the READMEs' installs build one), holding the kinds
// that install needs. That these renderings are accepted by a real kube-apiserver is
// test/manifests/kustomize.test.ts's and sync-kustomize.test.ts's job. Without kubectl on PATH the
// target says so and exits 2.

import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { parseAllDocuments } from "yaml";
import { repoRoot } from "../support/fixtures.js";
import { HAVE_ANY_KUBECTL, ANY_KUBECTL_SKIP_REASON } from "../support/kubectl.js";
import { runIn, which } from "./make.js";

const BASE_KINDS = [
  "ClusterRole",
  "ClusterRoleBinding",
  "ConfigMap",
  "CustomResourceDefinition",
  "Deployment",
  "MutatingWebhookConfiguration",
  "Namespace",
  "PodDisruptionBudget",
  "Role",
  "RoleBinding",
  "Service",
  "ServiceAccount",
  "ValidatingWebhookConfiguration",
];
const COMPONENT_KINDS: Record<string, string[]> = {
  "cert-manager": ["Certificate", "Issuer"],
  "self-managed": [],
  endpoints: ["ConfigMap"],
  "multi-namespace": ["ClusterRole", "ClusterRoleBinding"],
};
/** vgate sync's host install (manifests/sync) and its Component. */
const SYNC_KINDS = [
  "ConfigMap",
  "Deployment",
  "PodDisruptionBudget",
  "Role",
  "RoleBinding",
  "ServiceAccount",
];
const INSTALLS = [
  ["cert-manager"],
  ["self-managed"],
  ["cert-manager", "endpoints"],
  ["self-managed", "endpoints"],
  ["sync"],
  ["sync", "multi-namespace"],
];
const isSync = (install: readonly string[]): boolean => install[0] === "sync";

/** `kubectl kustomize` of a kustomization of one's own, as the README shows it. */
async function kustomize(install: readonly string[], scratch: string): Promise<string> {
  const dir = mkdtempSync(join(scratch, "install-"));
  const rel = (p: string): string => relative(dir, join(repoRoot, p));
  const [base, components] = isSync(install)
    ? ["manifests/sync", install.slice(1).map((c) => `manifests/sync/${c}`)]
    : ["manifests", install.map((c) => `manifests/overlays/${c}`)];
  writeFileSync(
    join(dir, "kustomization.yaml"),
    [
      "apiVersion: kustomize.config.k8s.io/v1beta1",
      "kind: Kustomization",
      `resources: [${rel(base)}]`,
      `components: [${components.map(rel).join(", ")}]`,
      "",
    ].join("\n"),
  );
  const out = await runIn("kubectl", ["kustomize", dir]);
  assert.equal(out.code, 0, out.stderr);
  return out.stdout;
}

describe("make manifests", function () {
  this.timeout(120_000);

  (HAVE_ANY_KUBECTL ? it : it.skip)(
    `renders every install into dist/manifests/, as kubectl kustomize does${ANY_KUBECTL_SKIP_REASON}`,
    async () => {
      const made = await runIn("make", ["--no-print-directory", "manifests"]);
      assert.equal(made.code, 0, made.stderr);
      const names = INSTALLS.map((c) => c.join("+"));
      assert.deepEqual(
        made.stdout.trim().split("\n"),
        names.map((n) => `dist/manifests/${n}.yaml`),
      );
      const scratch = mkdtempSync(join(tmpdir(), "vgate-make-manifests-"));
      try {
        for (const install of INSTALLS) {
          const name = install.join("+");
          const text = readFileSync(join(repoRoot, "dist/manifests", `${name}.yaml`), "utf8");
          const docs = parseAllDocuments(text);
          for (const d of docs) assert.deepEqual(d.errors, [], `${name}: YAML errors`);
          const kinds = new Set(docs.map((d) => (d.toJS() as { kind: string }).kind));
          const [base, components] = isSync(install)
            ? [SYNC_KINDS, install.slice(1)]
            : [BASE_KINDS, install];
          const expected = [...base, ...components.flatMap((c) => COMPONENT_KINDS[c]!)];
          assert.deepEqual([...kinds].sort(), [...new Set(expected)].sort(), name);
          assert.equal(text, await kustomize(install, scratch), `${name}: not kustomize's`);
        }
      } finally {
        rmSync(scratch, { recursive: true, force: true });
      }
    },
  );

  it("without kubectl on PATH: says so and what to do, exit 2", async () => {
    const empty = mkdtempSync(join(tmpdir(), "vgate-no-kubectl-"));
    try {
      const make = await runIn(await which("make"), ["--no-print-directory", "manifests"], {
        PATH: empty,
      });
      assert.equal(make.code, 2, make.stdout + make.stderr);
      assert.match(make.stderr, /^kubectl is not installed: .*install kubectl \(https:\/\//);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
