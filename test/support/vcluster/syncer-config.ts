// The config vCluster's syncer reads. The syncer applies no defaults of its own: its Helm chart
// merges the chart's values.yaml with the user's values and stores the result in the
// vc-config-<name> Secret. The rig does that merge (as Helm does: maps merge key by key, anything
// else replaces) on the module's own values.yaml.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse, stringify } from "yaml";

export type Values = Record<string, unknown>;

const isMap = (v: unknown): v is Values => typeof v === "object" && v !== null && !Array.isArray(v);

/** `over` merged into a copy of `base`, Helm's way. */
export function mergeValues(base: Values, over: Values): Values {
  const out: Values = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const old = out[key];
    out[key] = isMap(value) && isMap(old) ? mergeValues(old, value) : value;
  }
  return out;
}

/** What the rig's syncer needs whatever the test configures (see vcluster-rig.ts). */
export interface RigSyncerFiles {
  virtualKubeconfig: string;
  caCert: string;
  caKey: string;
  frontProxyCaCert: string;
  etcdEndpoint: string;
  etcdCaFile: string;
  etcdCertFile: string;
  etcdKeyFile: string;
  proxyPort: number;
}

/** The rig's overrides: an external control plane (ours), and no telemetry. */
export function rigOverrides(f: RigSyncerFiles): Values {
  return {
    controlPlane: {
      distro: {
        k8s: {
          enabled: true,
          apiServer: { enabled: false },
          controllerManager: { enabled: false },
          scheduler: { enabled: false },
        },
      },
      backingStore: {
        etcd: {
          external: {
            enabled: true,
            endpoint: f.etcdEndpoint,
            tls: { caFile: f.etcdCaFile, certFile: f.etcdCertFile, keyFile: f.etcdKeyFile },
          },
        },
      },
      coredns: { enabled: false },
      proxy: { bindAddress: "0.0.0.0", port: f.proxyPort },
    },
    // The chart's values turn telemetry on, which sends usage data to vCluster's vendor. Off.
    telemetry: { enabled: false },
    experimental: {
      virtualClusterKubeConfig: {
        kubeConfig: f.virtualKubeconfig,
        serverCACert: f.caCert,
        serverCAKey: f.caKey,
        clientCACert: f.caCert,
        requestHeaderCACert: f.frontProxyCaCert,
      },
    },
  };
}

/**
 * The chart's values, then the user's (a test's `sync:` settings, for example), then the rig's;
 * telemetry stays off whatever the user's values say.
 */
export function syncerConfig(moduleDir: string, user: Values, rig: RigSyncerFiles): string {
  const chart = parse(readFileSync(join(moduleDir, "chart", "values.yaml"), "utf8")) as Values;
  return stringify(mergeValues(mergeValues(chart, user), rigOverrides(rig)));
}
