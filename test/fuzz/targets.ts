// The `vgate serve` processes the fuzzer sends to, all on one rig (one kube-apiserver and etcd) and
// all with the rig's certificates and client CA and the same --config:
// - plain: the rig's own vgate, wired into kube-apiserver, keys stored as they are;
// - hashed: a second vgate with --key-storage=hashed;
// - unsynced: a third whose access key cache never syncs. It talks to kube-apiserver through a
//   fault proxy that answers each of its LISTs of OwnedAccessKeys with 500 (as
//   test/faults/unsynced-keys.test.ts does); everything else reaches the real server.

import type { VgateCluster } from "../support/cluster.js";
import { kubeStatus, type FaultProxy } from "../support/kube/fault-proxy.js";
import { vgatePid } from "../soak/vgate-process.js";

export const TARGETS = ["plain", "hashed", "unsynced"] as const;
export type Target = (typeof TARGETS)[number];

export interface RunningTarget {
  url: string;
  pid: number;
}

export interface Targets {
  targets: Record<Target, RunningTarget>;
  /** The OwnedAccessKey LISTs the unsynced vgate has asked for (each answered 500). */
  failedLists(): number;
}

/** Starts the hashed and unsynced vgates next to the rig's own (started with `args`). */
export async function startTargets(cluster: VgateCluster, args: string[]): Promise<Targets> {
  const proxy = await cluster.plane.faultProxy();
  const isList = (r: FaultProxy["requests"][number]) =>
    r.method === "GET" &&
    r.path === `/apis/${cluster.group}/v1/ownedaccesskeys` &&
    !/[?&]watch=/.test(r.query);
  proxy.inject(
    isList,
    { status: 500, body: kubeStatus(500, "InternalError", "injected: etcd is slow") },
    Infinity,
  );
  const [hashed, unsynced] = await Promise.all([
    cluster.startVgate({ name: "hashed", vgateArgs: [...args, "--key-storage=hashed"] }),
    // It never becomes ready: live is all it can be.
    cluster.startVgate({ name: "unsynced", vgateArgs: args, server: proxy.url, waitFor: "live" }),
  ]);
  const running = (url: string): RunningTarget => ({
    url,
    pid: vgatePid(Number(new URL(url).port)),
  });
  return {
    targets: {
      plain: running(cluster.vgateUrl),
      hashed: running(hashed.url),
      unsynced: running(unsynced.url),
    },
    failedLists: () => proxy.requests.filter(isList).length,
  };
}
