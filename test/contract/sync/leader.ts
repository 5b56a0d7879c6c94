// Two replicas with leader election: a coordination.k8s.io Lease in the vCluster's host namespace
// names one holder, only that replica writes, and when it is killed (SIGKILL: no release) the other
// takes over once the Lease expires and keeps syncing.

import assert from "node:assert/strict";
import { freePort } from "../../support/kube/processes.js";
import type { SyncProcess } from "../../support/sync-rig.js";
import { until } from "../../support/until.js";
import { BASE_CONFIG, LEADER_ARGS, metric, type SyncContext } from "./sync-context.js";

/** Writes a replica made (vgate_sync_writes_total; absent = none). */
async function writes(replica: SyncProcess): Promise<number> {
  return (await metric(replica, "vgate_sync_writes_total")) || 0;
}

const LEASE = "vgate-sync-my-vcluster";

interface Lease {
  metadata: { name: string; resourceVersion?: string };
  spec?: { holderIdentity?: string; leaseDurationSeconds?: number; leaseTransitions?: number };
}

export function leaderTests(ctx: SyncContext): void {
  const replicas: SyncProcess[] = [];
  before(() => ctx.stopMain());
  after(() => Promise.all(replicas.map((r) => r.stop())));

  const leases = async (): Promise<Lease[]> => {
    const res = await ctx.host.request<{ items?: Lease[] }>(
      "GET",
      `/apis/coordination.k8s.io/v1/namespaces/${ctx.vc.namespace}/leases`,
    );
    return res.body.items ?? [];
  };
  const holder = async (): Promise<string> =>
    (await leases()).map((l) => l.spec?.holderIdentity ?? "").find((h) => h !== "") ?? "";

  /**
   * The replica whose log gives `identity` as its own (a log field "identity"); logs are flushed
   * every second, so this waits a little for the line.
   */
  const replicaNamed = async (identity: string): Promise<SyncProcess | undefined> => {
    const own = `"identity":${JSON.stringify(identity)}`;
    let found: SyncProcess | undefined;
    await until(async () => {
      for (const r of replicas) if ((await r.log()).includes(own)) found = r;
      return found !== undefined;
    }, `a replica logging its identity ${identity}`).catch(() => undefined);
    return found;
  };

  it("elects one leader, and the other replica takes over when it is killed", async () => {
    const path = await ctx.rig.writeConfig("leader.yaml", BASE_CONFIG);
    for (const name of ["replica-a", "replica-b"]) {
      const r = await ctx.rig.startSync({ name, config: path, args: LEADER_ARGS });
      replicas.push(r);
    }
    await Promise.all(replicas.map((r) => r.waitReady()));
    let first = "";
    await until(
      async () => (first = await holder()) !== "",
      "a Lease holder in the host namespace",
    );
    const all = await leases();
    assert.equal(all.filter((l) => l.spec?.holderIdentity).length, 1, "one Lease, one holder");

    const ns = await ctx.namespace();
    await ctx.syncable(ns, "led", { annotations: { "example.com/owner": "lee" } });
    await ctx.waitForHost(
      ns,
      "led",
      (h) => h.metadata.annotations?.["example.com/owner"] === "LEE",
    );
    const leader = await replicaNamed(first);
    assert.ok(leader, `the holder ${first} is named in one replica's log`);
    const follower = replicas.find((r) => r !== leader)!;
    assert.equal(await writes(follower), 0, "the follower writes nothing");
    assert.equal(await metric(leader, "leader_election_master_status", { name: LEASE }), 1);
    assert.equal(await metric(follower, "leader_election_master_status", { name: LEASE }), 0);
    assert.deepEqual(
      all.map((l) => l.metadata.name),
      [LEASE],
      "the Lease is vgate-sync-<vcluster name>",
    );
    assert.ok((await writes(leader)) > 0, "the leader wrote the host copy");
    assert.equal(await holder(), first, "the leader keeps the Lease");

    await leader.kill("SIGKILL");
    let second = "";
    await until(
      async () => (second = await holder()) !== "" && second !== first,
      "the other replica holding the Lease",
      30_000,
    );
    assert.equal(await replicaNamed(second), follower);
    await ctx.syncable(ns, "after", { annotations: { "example.com/owner": "max" } });
    await ctx.waitForHost(
      ns,
      "after",
      (h) => h.metadata.annotations?.["example.com/owner"] === "MAX",
    );
    await ctx.updateVirtual(ns, "led", (e) => {
      e.metadata.annotations!["example.com/owner"] = "lou";
    });
    await ctx.waitForHost(
      ns,
      "led",
      (h) => h.metadata.annotations?.["example.com/owner"] === "LOU",
    );
  });

  it("a replica whose caches never sync never takes the Lease, even a released one", async () => {
    // The previous test's replicas go (releasing the Lease): only this test's run.
    await Promise.all(replicas.map((r) => r.stop()));
    const path = await ctx.rig.writeConfig("leader-cold.yaml", BASE_CONFIG);
    // The virtual cluster at an address where nothing listens: this replica's caches never sync.
    const nowhere = await ctx.rig.virtual.tokenKubeconfig(
      "unused",
      "nowhere",
      `https://127.0.0.1:${await freePort()}`,
    );
    const warm = await ctx.rig.startSync({ name: "warm", config: path, args: LEADER_ARGS });
    replicas.push(warm);
    await warm.waitReady();
    const cold = await ctx.rig.startSync({
      name: "cold",
      config: path,
      args: [...LEADER_ARGS, `--virtual-kubeconfig=${nowhere}`],
    });
    replicas.push(cold);
    ctx.exemptFromRbacCheck(cold);
    await until(async () => (await cold.get("/healthz")).status === 200, "the cold replica up");
    let warmId = "";
    await until(async () => (warmId = await holder()) !== "", "a Lease holder");
    assert.equal(await replicaNamed(warmId), warm, "the warm replica holds the Lease");
    // Every holder the Lease has from here on.
    const holders = new Set<string>();
    let watching = true;
    const watch = (async () => {
      while (watching) {
        holders.add(await holder());
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    try {
      // SIGTERM: the warm replica releases the Lease, and the cold one retries every 500 ms.
      await warm.stop();
      await new Promise((r) => setTimeout(r, 3_000));
      const next = await ctx.rig.startSync({ name: "next", config: path, args: LEADER_ARGS });
      replicas.push(next);
      await next.waitReady();
      let nextId = "";
      await until(
        async () => (nextId = await holder()) !== "" && nextId !== warmId,
        "a ready replica taking the released Lease",
        30_000,
      );
      assert.equal(await replicaNamed(nextId), next, "the ready replica holds the Lease");
      assert.equal((await cold.get("/readyz")).status, 503, "the cold replica never became ready");
    } finally {
      watching = false;
      await watch;
    }
    holders.delete("");
    assert.equal(
      holders.size,
      2,
      `only the ready replicas held the Lease: ${[...holders].join(", ")}`,
    );
  });
}
