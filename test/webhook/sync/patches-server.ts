// /mutate/patches over real HTTPS, assembled as `vgate serve --config` assembles it
// (cli/serve-patches.ts) from a LoadedVCluster the test builds, with its own metrics registry.

import { Writable } from "node:stream";
import type { LoadedVCluster } from "../../../webhook/src/config/loaded-vcluster.js";
import { patchesAdmission } from "../../../webhook/src/cli/serve-patches.js";
import { createApp, listen, type RunningServer } from "../../../webhook/src/server/app.js";
import { createLogger } from "../../../webhook/src/server/logger.js";
import { createMetrics } from "../../../webhook/src/server/metrics.js";
import { selfSignedTls, type TlsMaterial } from "../../../webhook/src/server/tls.js";
import { admitPatches } from "../../../webhook/src/sync/admit-patches.js";
import { hostNamespaceOwnership } from "../../../webhook/src/sync/host-ownership.js";
import { startPatchRunner } from "../../../webhook/src/sync/patch-runner.js";
import { httpsRequest } from "../../support/https-client.js";
import { metricValue } from "../../support/prometheus-text.js";

export interface PatchesServer {
  url: string;
  virtualUrl: string;
  /** The value of vgate_sync_patch_failures_total{kind, patch}, 0 when absent. */
  failures(kind: string, patch: string): Promise<number>;
  stop(): Promise<void>;
}

export async function startPatchesServer(
  loaded: LoadedVCluster,
  opts: { onPatchError?: "deny" | "allow"; deadlineMs?: number; tls?: TlsMaterial } = {},
): Promise<PatchesServer> {
  const runner = await startPatchRunner(loaded, { workers: 1, deadlineMs: opts.deadlineMs ?? 500 });
  let server: RunningServer | undefined;
  try {
    const metrics = createMetrics(false);
    const owner = {
      vclusterName: loaded.vcluster.name,
      vclusterNamespace: loaded.vcluster.namespace,
      ownNamespaces: [loaded.vcluster.namespace],
    };
    const common = {
      onPatchError: opts.onPatchError ?? ("deny" as const),
      owner: {
        vclusterName: owner.vclusterName,
        vclusterNamespace: owner.vclusterNamespace,
        ownership: (namespace: string) => hostNamespaceOwnership(namespace, owner),
      },
    };
    const host = patchesAdmission(loaded, runner, metrics, { ...common, side: "host" });
    const virtual = patchesAdmission(loaded, runner, metrics, { ...common, side: "virtual" });
    const app = createApp({
      logger: createLogger("silent", new Writable({ write: (_c, _e, cb) => cb() })),
      metrics,
      routes: {
        "/mutate/patches": (req) => admitPatches(req, host),
        "/mutate/patches/virtual": (req) => admitPatches(req, virtual),
      },
    });
    server = await listen(app, opts.tls ?? (await selfSignedTls()), 0, "127.0.0.1");
  } catch (err) {
    await runner.close();
    throw err;
  }
  const base = `https://127.0.0.1:${server.port}`;
  const running = server;
  return {
    url: `${base}/mutate/patches`,
    virtualUrl: `${base}/mutate/patches/virtual`,
    async failures(kind, patch) {
      const text = (await httpsRequest(`${base}/metrics`)).text;
      return metricValue(text, "vgate_sync_patch_failures_total", { kind, patch });
    },
    async stop() {
      await running.close();
      await runner.close();
    },
  };
}
