// Where cert-manager is: its controller and cainjector (make kube builds them into the kube cache
// from the wrapper module test/kube/cert-manager/), and its Go module's source in the module cache
// make kube filled, whose deploy/crds/ holds the CustomResourceDefinitions its releases ship.

import { accessSync, constants } from "node:fs";
import { join } from "node:path";
import { kubeCacheDir, kubeVersions } from "../kube/binaries.js";
import { findWrapperModule } from "../kube/wrapper-module.js";

export const CERT_MANAGER_MODULE = "github.com/cert-manager/cert-manager";

export interface CertManagerParts {
  controller: string;
  cainjector: string;
  /** deploy/crds/ of the module: one crd-<plural>.yaml per kind, Helm-templated labels. */
  crdsDir: string;
  version: string;
}

export function findCertManager(): { found: CertManagerParts } | { missing: string } {
  const dir = kubeCacheDir();
  const controller = join(dir, "cert-manager-controller");
  const cainjector = join(dir, "cert-manager-cainjector");
  for (const binary of [controller, cainjector]) {
    try {
      accessSync(binary, constants.X_OK);
    } catch {
      return { missing: `no ${binary}: run \`make kube\` (needs Go >= 1.26)` };
    }
  }
  const mod = findWrapperModule(
    "cert-manager",
    CERT_MANAGER_MODULE,
    "deploy/crds/crd-certificates.yaml",
  );
  if ("missing" in mod) return mod;
  return {
    found: {
      controller,
      cainjector,
      crdsDir: join(mod.found.dir, "deploy/crds"),
      version: kubeVersions().certManager,
    },
  };
}
