// `vgate serve --discover-vclusters`: one shared sandbox pool, the discovery of every vCluster's
// config Secret (sync/vcluster-discovery.ts), and POST /mutate/endpoints and POST /mutate/patches
// answering for each object with the patches of the vCluster its bookkeeping names
// (sync/vcluster-lookup.ts), never another's: /mutate/patches with that vCluster's patches for the
// object's kind, under the rules /mutate/patches has with --config (sync/admit-patches.ts,
// docs/decisions.md KND-30..KND-34).

import { allow, deny } from "../admission/respond.js";
import type { AdmissionRequest, AdmissionReviewResponse } from "../admission/review.js";
import { EventRecorder } from "../kube/controller/event-recorder.js";
import type { NamespaceLabels } from "../kube/ports.js";
import type { Logger } from "../server/logger.js";
import type { ClientConfig } from "../shared/client-config.js";
import type { Metrics } from "../server/metrics.js";
import { newBadRequest, newServiceUnavailable } from "../shared/status.js";
import { KubeTransport } from "../shared/transport.js";
import { admitEndpoints, type EndpointsAdmission } from "../sync/admit-endpoints.js";
import { admitPatches, patchesResource, type PatchesAdmission } from "../sync/admit-patches.js";
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
import { patchesAdmission, slicePatches } from "./serve-patches.js";

/**
 * Failing patches past this index share the `patch` label `50+`: a tenant writes the config, and
 * must not be able to make a metric series per patch (docs/decisions.md KND-33).
 */
export const MAX_PATCH_LABEL = 50;

/** One vCluster's admissions, made once per loaded config (a reload makes a new entry). */
interface VClusterAdmissions {
  endpoints: EndpointsAdmission;
  patches: PatchesAdmission;
}

export interface StartedDiscovery {
  /** POST /mutate/endpoints (--side host) for every discovered vCluster. */
  admit: (req: AdmissionRequest) => Promise<AdmissionReviewResponse>;
  /** POST /mutate/patches (--side host): every namespaced sync.toHost kind, per vCluster. */
  admitPatches: (req: AdmissionRequest) => Promise<AdmissionReviewResponse>;
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
  metrics: Pick<Metrics, "patchFailures" | "watchVClusters">,
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
  // Keyed by the discovered entry: a reloaded config is a new entry, so its admissions are new too.
  const made = new WeakMap<DiscoveredVCluster, VClusterAdmissions>();
  const admissionsOf = (vc: DiscoveredVCluster): VClusterAdmissions => {
    const known = made.get(vc);
    if (known !== undefined) return known;
    const owner = {
      vclusterName: vc.ref.name,
      vclusterNamespace: vc.ref.namespace,
      ownNamespaces: [vc.ref.namespace],
      selfNamespace: opts.selfNamespace,
    };
    const ownership = (namespace: string) =>
      hostNamespaceOwnership(
        namespace,
        owner,
        vc.loaded.vcluster.namespaceMappings === undefined
          ? undefined
          : (namespaces ?? { synced: () => false, labels: () => undefined }),
      );
    const endpoints: EndpointsAdmission = {
      side: "host",
      enabled: vc.loaded.enabled,
      run: vc.runner.run,
      onPatchError: opts.onPatchError,
      owner: { vclusterName: vc.ref.name, ownership },
      ...slicePatches(vc.loaded, vc.runner, metrics, MAX_PATCH_LABEL),
    };
    const patches = patchesAdmission(vc.loaded, vc.runner, metrics, {
      side: "host",
      onPatchError: opts.onPatchError,
      owner: { vclusterName: vc.ref.name, vclusterNamespace: vc.ref.namespace, ownership },
      endpoints: (r) => admitEndpoints(r, endpoints),
      maxPatchLabel: MAX_PATCH_LABEL,
    });
    const both = { endpoints, patches };
    made.set(vc, both);
    return both;
  };
  const lookup = (req: AdmissionRequest): VClusterMatch =>
    vclusterForObject(discovery, req.namespace, req.object, namespaces);
  metrics.watchVClusters(() => discovery.counts());
  discovery.start().catch((err: unknown) => {
    logger.warn({ err: String(err) }, "vCluster discovery did not start");
  });
  logger.info(
    "serving /mutate/endpoints and /mutate/patches for every vCluster on the host (--discover-vclusters)",
  );
  /** The answer when no vCluster's patches apply: admitted, untouched (KND-24), or 503. */
  const unmatched = (
    req: AdmissionRequest,
    match: Exclude<VClusterMatch, { found: true }>,
  ): AdmissionReviewResponse => {
    if (match.reason === "NotManaged") return allow(req.uid);
    const what = `${req.resource.resource} ${JSON.stringify(`${req.namespace || "default"}/${req.name}`)}`;
    if (match.reason === "NotSynced") {
      return deny(req.uid, newServiceUnavailable(`${what}: ${match.why}`));
    }
    return allow(req.uid, [`${what} not patched: ${match.why}`]);
  };
  return {
    lookup,
    async admit(req) {
      const match = lookup(req);
      return match.found
        ? admitEndpoints(req, admissionsOf(match.vcluster).endpoints)
        : unmatched(req, match);
    },
    async admitPatches(req) {
      // Cluster-scoped copies are proven by a marker alone, with no namespace of a tenant's to
      // confine them (KND-13); this mode does not patch them (KND-32).
      if (req.namespace === "") {
        const r = req.resource;
        return deny(
          req.uid,
          newBadRequest(
            `with --discover-vclusters this endpoint admits namespaced kinds only, but the request is for the cluster-scoped ${r.group || "core"}/${r.version} ${r.resource}; check the webhook configuration's rules`,
          ),
        );
      }
      const match = lookup(req);
      if (!match.found) return unmatched(req, match);
      const deps = admissionsOf(match.vcluster).patches;
      // A kind this vCluster's config does not patch is no misconfiguration here: the webhook's
      // kinds are the platform's, the configs the tenants' (KND-31).
      if (!patchesResource(req, deps)) return allow(req.uid);
      return admitPatches(req, deps);
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
