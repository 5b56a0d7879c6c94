// A scoped key is decided from its namespace's labels. Until the namespace cache has synced, such a
// decision fails closed, so the replica must not be Ready either: after a kube-apiserver restart the
// key and namespace watches relist with independent backoffs, and a replica that was Ready with
// only its keys loaded refused scoped logins on the real node (CI, stop 29). The fault proxy fails
// vgate's LIST of namespaces (kube-apiserver cannot be made to fail one list on demand) while the
// key list and everything else reach the real server.

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { sharedCluster, type VgateCluster } from "../support/cluster.js";
import { httpsRequest } from "../support/https-client.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../support/kube/binaries.js";
import { kubeStatus } from "../support/kube/fault-proxy.js";
import { until } from "../support/until.js";
import { startVgateOnCluster, type VgateOnCluster } from "../webhook/server/vgate-on-cluster.js";
import { ask, reviewsFor } from "./fault-rig.js";

const DOMAIN = "faults-unsynced-ns.test";

(HAVE_KUBE ? describe : describe.skip)(
  `faults: the namespace cache has not synced${KUBE_SKIP_REASON}`,
  function () {
    this.timeout(60_000);
    let cluster: VgateCluster;
    let v: VgateOnCluster;
    let failLists = true;
    const run = randomBytes(3).toString("hex");
    const name = `scoped-${run}`;

    before(async () => {
      cluster = await sharedCluster();
      v = await startVgateOnCluster(cluster, DOMAIN, {}, (proxy) =>
        proxy.inject(
          (r) =>
            failLists &&
            r.method === "GET" &&
            r.path === "/api/v1/namespaces" &&
            !/[?&]watch=/.test(r.query),
          { status: 500, body: kubeStatus(500, "InternalError", "injected: etcd is slow") },
          1_000_000,
        ),
      );
    });
    after(async () => {
      await cluster?.admin.request("DELETE", `/apis/${v.group}/v1/ownedaccesskeys/${name}`);
      await v?.stop();
    });

    it("is not ready, and refuses a scoped key's requests, until the namespaces are loaded", async () => {
      const res = await cluster.admin.request("POST", `/apis/${v.group}/v1/ownedaccesskeys`, {
        apiVersion: `${v.group}/v1`,
        kind: "OwnedAccessKey",
        metadata: { name },
        spec: {
          key: randomBytes(32).toString("base64url"),
          user: "alice",
          scope: { projects: [{ project: `web-${run}` }] },
        },
      });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      const uid = (res.body as { metadata: { uid: string } }).metadata.uid;
      const reviews = reviewsFor(v.group, v.storageGroup, DOMAIN);
      const review = () => ask(v, "accessReview", "/authorize", reviews.accessReview(name, uid));

      // The key cache syncs (the key is found), the namespace cache does not: fail closed.
      await until(
        async () => (await review()).reason === "access keys are not loaded yet",
        "the scoped key's request fails closed",
        30_000,
      );
      const readyz = await httpsRequest(`${v.url}/readyz`, { ca: v.ca });
      assert.deepEqual(
        [readyz.status, readyz.text],
        [503, "not ready: the namespace labels are not loaded yet"],
      );
      assert.ok(
        v.proxy.requests.some((r) => r.path === "/api/v1/namespaces" && r.method === "GET"),
        "vgate asked for the namespaces (and got the injected 500)",
      );

      failLists = false;
      await until(
        async () => (await httpsRequest(`${v.url}/readyz`, { ca: v.ca })).status === 200,
        "ready once the namespaces are loaded",
        30_000,
      );
      // "default" is in no project: now an answer from the labels, not from a missing cache.
      const answer = await review();
      assert.equal(answer.denied, true, JSON.stringify(answer));
      assert.match(answer.reason ?? "", /outside the key's scope/);
    });
  },
);
