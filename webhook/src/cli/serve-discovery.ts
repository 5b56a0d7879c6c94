// `vgate serve --discover-vclusters`: one shared sandbox pool, the discovery of every vCluster's
// config Secret (sync/vcluster-discovery.ts), and POST /mutate/endpoints answering for each object
// with the patches of the vCluster its bookkeeping names (sync/vcluster-lookup.ts), never another's.

import { allow, deny } from "../admission/respond.js";
import type { AdmissionRequest, AdmissionReviewResponse } from "../admission/review.js";
import { EventRecorder } from "../kube/controller/event-recorder.js";
import type { NamespaceLabels } from "../kube/ports.js";
import type { Logger } from "../server/logger.js";
import type { ClientConfig } from "../shared/client-config.js";
import { newServiceUnavailable } from "../shared/status.js";
import { KubeTransport } from "../shared/transport.js";
import { admitEndpoints, type EndpointsAdmission } from "../sync/admit-endpoints.js";
import { hostNamespaceOwnership } from "../sync/host-ownership.js";
import { startSharedPatchRunner } from "../sync/patch-runner.js";
import { VClusterDiscovery } from "../sync/vcluster-discovery.js";
import {
  vclusterForObject,
  type DiscoveredVCluster,
  type VClusterMatch,
} from "../sync/vcluster-lookup.js";
import { CliError } from "./errors.js";
import type { DiscoveryOptions } from "./serve-options.js";

export interface StartedDiscovery {
  /** POST /mutate/endpoints (--side host) for every discovered vCluster. */
  admit: (req: AdmissionRequest) => Promise<AdmissionReviewResponse>;
  /**
   * The vCluster (its loaded config and patch runner) whose bookkeeping `req`'s object carries, for
   * an admission of any kind (docs/decisions.md KND-22).
   */
  lookup(req: AdmissionRequest): VClusterMatch;
  /** The namespace labels multi-namespace vClusters are matched with, once the API client exists. */
  useNamespaces(namespaces: NamespaceLabels): void;
  synced(): boolean;
  discovery: VClusterDiscovery;
  close(): Promise<void>;
}

export async function startDiscovery(
  opts: DiscoveryOptions,
  kc: ClientConfig | null,
  logger: Logger,
): Promise<StartedDiscovery> {
  if (kc === null) {
    throw new CliError(
      "--discover-vclusters reads the vClusters' config Secrets from the API server: give --kubeconfig (or run in a cluster)",
    );
  }
  const transport = new KubeTransport(kc, { timeoutMs: 10_000 });
  const runner = await startSharedPatchRunner({
    workers: opts.workers,
    deadlineMs: opts.deadlineMs,
  });
  const events = new EventRecorder(transport, {
    component: "vgate",
    log: (msg, fields) => logger.warn(fields ?? {}, msg),
  });
  const discovery = new VClusterDiscovery({
    transport,
    runner,
    events,
    log: logger,
    selfNamespace: opts.selfNamespace,
  });
  let namespaces: NamespaceLabels | undefined;
  const deps = new WeakMap<DiscoveredVCluster, EndpointsAdmission>();
  const depsFor = (vc: DiscoveredVCluster): EndpointsAdmission => {
    const known = deps.get(vc);
    if (known !== undefined) return known;
    const owner = {
      vclusterName: vc.ref.name,
      vclusterNamespace: vc.ref.namespace,
      ownNamespaces: [vc.ref.namespace],
      selfNamespace: opts.selfNamespace,
    };
    const made: EndpointsAdmission = {
      side: "host",
      enabled: vc.loaded.enabled,
      run: vc.runner.run,
      onPatchError: opts.onPatchError,
      owner: {
        vclusterName: vc.ref.name,
        ownership: (namespace) =>
          hostNamespaceOwnership(
            namespace,
            owner,
            vc.loaded.vcluster.namespaceMappings === undefined
              ? undefined
              : (namespaces ?? { synced: () => false, labels: () => undefined }),
          ),
      },
    };
    deps.set(vc, made);
    return made;
  };
  const lookup = (req: AdmissionRequest): VClusterMatch =>
    vclusterForObject(discovery, req.namespace, req.object, namespaces);
  discovery.start().catch((err: unknown) => {
    logger.warn({ err: String(err) }, "vCluster discovery did not start");
  });
  logger.info("serving /mutate/endpoints for every vCluster on the host (--discover-vclusters)");
  return {
    lookup,
    async admit(req) {
      const match = lookup(req);
      if (match.found) return admitEndpoints(req, depsFor(match.vcluster));
      if (match.reason === "NotManaged") return allow(req.uid);
      const what = `${req.resource.resource} ${JSON.stringify(`${req.namespace || "default"}/${req.name}`)}`;
      if (match.reason === "NotSynced") {
        return deny(req.uid, newServiceUnavailable(`${what}: ${match.why}`));
      }
      return allow(req.uid, [`${what} not patched: ${match.why}`]);
    },
    useNamespaces: (view) => (namespaces = view),
    synced: () => discovery.synced(),
    discovery,
    close: async () => {
      discovery.stop();
      await discovery.idle();
      await runner.close();
      transport.close();
    },
  };
}
