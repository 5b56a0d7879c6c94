// A `vgate serve` started in this process, wired to the shared cluster's real kube-apiserver as a
// pod would be: a bound service-account token in a kubeconfig, and vgate's own RBAC. It talks to
// the API server through a fault proxy so tests can take the server down and count what vgate
// asked. It serves OwnedAccessKeys of a group domain of its own (--group-domain), whose CRD no
// webhook watches, so its access key cache sees exactly the keys the tests make, and the admin can
// write keys without the shared vgate in the way. Owners of kind User live in storage.<domain>, as
// Loft's users live in storage.loft.sh.

import type { ServeOptions } from "../../../webhook/src/cli/serve-options.js";
import type { StartedServe } from "../../../webhook/src/cli/serve-runtime.js";
import {
  installAccessKeyCrd,
  VGATE_NAMESPACE,
  VGATE_SERVICE_ACCOUNT,
  type VgateCluster,
} from "../../support/cluster.js";
import { startInProcessVgate } from "../../support/in-process-vgate.js";
import { crdRef, installCrd, schemalessCrd } from "../../support/kube/crds.js";
import type { FaultProxy } from "../../support/kube/fault-proxy.js";
import { vgateRules } from "../../support/kube/rbac.js";
import type { CertAndKey } from "../../support/kube/pki.js";
import { serviceAccountWith } from "../../support/kube/service-account.js";
import { httpsRequest } from "../../support/https-client.js";
import { until } from "../../support/until.js";

export interface VgateOnCluster {
  vgate: StartedServe;
  /** https://localhost:PORT of vgate. */
  url: string;
  /** The CA of vgate's (self-signed) serving certificate. */
  ca: string;
  /** The client certificate its review routes accept, as kube-apiserver presents it. */
  client: CertAndKey;
  /** Between vgate and kube-apiserver. */
  proxy: FaultProxy;
  /** management.<domain>: the OwnedAccessKey group vgate serves. */
  group: string;
  /** storage.<domain>: the group of the owner kind User (resource users). */
  storageGroup: string;
  /** vgate's bearer token (it must never be logged). */
  token: string;
  /** vgate's log, one JSON record a line. */
  logLines: string[];
  stop(): Promise<void>;
}

/**
 * Installs the CRDs, vgate's identity and RBAC, a fault proxy and starts vgate. `domain` must be
 * unique to the calling test file.
 */
export async function startVgateOnCluster(
  cluster: VgateCluster,
  domain: string,
  more: Partial<ServeOptions> = {},
  /**
   * Called with the fault proxy before vgate starts (faults vgate must meet from its start). With
   * it, vgate is returned at once; without, once /readyz answers 200 (its caches have synced), as
   * a rollout waits for a ready pod.
   */
  beforeStart?: (proxy: FaultProxy) => void,
): Promise<VgateOnCluster> {
  const { admin, plane } = cluster;
  const group = `management.${domain}`;
  const storageGroup = `storage.${domain}`;
  const undo: (() => Promise<unknown>)[] = [];
  try {
    await installAccessKeyCrd(admin, domain);
    undo.push(() => admin.delete(crdRef(`ownedaccesskeys.${group}`)));
    // Loft's storage User, reduced to what discovery and RBAC need.
    const userCrd = schemalessCrd(storageGroup, "User", "users", { status: true });
    await installCrd(admin, userCrd);
    undo.push(() => admin.delete(userCrd));

    // vgate's own service account, with the rules an installed vgate has, for this group.
    const account = await serviceAccountWith(
      plane,
      `${VGATE_SERVICE_ACCOUNT}-https`,
      vgateRules(group),
      VGATE_NAMESPACE,
    );
    undo.push(() => account.remove());
    const token = account.token;

    const proxy = await plane.faultProxy();
    undo.push(() => proxy.close());
    const kubeconfig = await account.kubeconfig(proxy.url);
    beforeStart?.(proxy);

    const vgate = await startInProcessVgate({ kubeconfig, domain, logLevel: "debug", more });
    undo.push(() => vgate.stop());
    if (!beforeStart) {
      await until(
        async () => (await httpsRequest(`${vgate.url}/readyz`, { ca: vgate.ca })).status === 200,
        "vgate ready",
        30_000,
      );
    }
    return {
      vgate: vgate.vgate,
      url: vgate.url,
      ca: vgate.ca,
      client: vgate.client,
      proxy,
      group,
      storageGroup,
      token,
      logLines: vgate.logLines,
      stop: () => runAll(undo),
    };
  } catch (err) {
    await runAll(undo);
    throw err;
  }
}

/** Undoes in reverse order; one failure does not stop the rest. */
async function runAll(undo: (() => Promise<unknown>)[]): Promise<void> {
  for (const step of undo.reverse()) await step().catch(() => undefined);
}
