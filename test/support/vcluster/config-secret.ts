// The Secret in which vCluster's chart keeps a virtual cluster's config on the host
// (chart/templates/config-secret.yaml; docs/reference.md#vcluster-config-secret), as the tests and
// the bench give it to `vgate serve --discover-vclusters`.

import type { KubeObject } from "../kube/kube-client.js";

/** `vc-config-<name>` in `namespace`, holding `yaml` (text or bytes) under `config.yaml`. */
export function configSecret(namespace: string, name: string, yaml: string | Buffer): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name: `vc-config-${name}`,
      namespace,
      labels: { app: "vcluster", chart: "vcluster-0.34.0", release: name, heritage: "Helm" },
    },
    type: "Opaque",
    data: { "config.yaml": Buffer.from(yaml).toString("base64") },
  };
}
