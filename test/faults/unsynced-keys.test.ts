// Before its access key cache has synced, vgate cannot know which keys exist: every answer that
// depends on the cache fails closed with 503 ServiceUnavailable, and /readyz says why. The fault
// proxy answers vgate's LIST of OwnedAccessKeys with 500 (kube-apiserver cannot be made to fail
// one list on demand) while discovery, namespaces and everything else reach the real server. Once
// the list goes through, every answer is what it should be.

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { sharedCluster, type VgateCluster } from "../support/cluster.js";
import { httpsRequest } from "../support/https-client.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../support/kube/binaries.js";
import { kubeStatus } from "../support/kube/fault-proxy.js";
import { until } from "../support/until.js";
import { startVgateOnCluster, type VgateOnCluster } from "../webhook/server/vgate-on-cluster.js";
import { ask, reviewsFor } from "./fault-rig.js";

const DOMAIN = "faults-unsynced.test";

(HAVE_KUBE ? describe : describe.skip)(
  `faults: the access key cache has not synced${KUBE_SKIP_REASON}`,
  function () {
    this.timeout(60_000);
    let cluster: VgateCluster;
    let v: VgateOnCluster;
    let failLists = true;
    const run = randomBytes(3).toString("hex");

    before(async () => {
      cluster = await sharedCluster();
      v = await startVgateOnCluster(cluster, DOMAIN, {}, (proxy) =>
        proxy.inject(
          (r) =>
            failLists &&
            r.method === "GET" &&
            r.path === `/apis/management.${DOMAIN}/v1/ownedaccesskeys` &&
            !/[?&]watch=/.test(r.query),
          { status: 500, body: kubeStatus(500, "InternalError", "injected: etcd is slow") },
          1_000_000,
        ),
      );
    });
    after(async () => {
      await cluster?.admin.request("DELETE", `/apis/${v.group}/v1/ownedaccesskeys/k-${run}`);
      await v?.stop();
    });

    it("fails closed with 503 on every answer that needs the key cache, and is not ready", async () => {
      const reviews = reviewsFor(v.group, v.storageGroup, DOMAIN);
      const readyz = await httpsRequest(`${v.url}/readyz`, { ca: v.ca });
      assert.deepEqual(
        [readyz.status, readyz.text],
        [503, "not ready: the access keys are not loaded yet"],
      );

      const login = await ask(
        v,
        "tokenReview",
        "/authenticate",
        reviews.tokenReview("x".repeat(43)),
      );
      assert.deepEqual([login.http, login.code], [503, 503], JSON.stringify(login));
      assert.equal(login.message, "access keys are not loaded yet; try again");

      const access = await ask(v, "accessReview", "/authorize", reviews.accessReview("k", "u"));
      assert.deepEqual([access.http, access.code], [503, 503], JSON.stringify(access));

      const newKey = await ask(v, "newKey", "/validate/ownedaccesskeys", reviews.newKey());
      assert.deepEqual([newKey.http, newKey.allowed, newKey.code], [200, false, 503]);
      assert.match(newKey.message ?? "", /cannot check that no other key has this key/);

      // What does not depend on the key cache is still answered.
      const plain = await ask(v, "plain", "/validate/ownedaccesskeys", reviews.plain());
      assert.equal(plain.allowed, true, JSON.stringify(plain));
      assert.ok(
        v.proxy.requests.some((r) => r.path.endsWith("/ownedaccesskeys") && r.method === "GET"),
        "vgate asked for the list (and got the injected 500)",
      );
    });

    it("answers as it should once the list goes through", async () => {
      failLists = false;
      await until(
        async () => (await httpsRequest(`${v.url}/readyz`, { ca: v.ca })).status === 200,
        "ready once the keys are loaded",
        30_000,
      );
      const token = randomBytes(32).toString("base64url");
      const res = await cluster.admin.request("POST", `/apis/${v.group}/v1/ownedaccesskeys`, {
        apiVersion: `${v.group}/v1`,
        kind: "OwnedAccessKey",
        metadata: { name: `k-${run}` },
        spec: { key: token, user: "alice" },
      });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      const reviews = reviewsFor(v.group, v.storageGroup, DOMAIN);
      await until(
        async () =>
          (await ask(v, "tokenReview", "/authenticate", reviews.tokenReview(token)))
            .authenticated === true,
        "the key logs in",
      );
      const newKey = await ask(v, "newKey", "/validate/ownedaccesskeys", reviews.newKey());
      assert.equal(newKey.allowed, true, JSON.stringify(newKey));
      const metrics = (await httpsRequest(`${v.url}/metrics`, { ca: v.ca })).text;
      assert.match(metrics, /vgate_access_key_logins_total\{result="unavailable"\} [1-9]/);
      assert.match(metrics, /vgate_access_key_logins_total\{result="authenticated"\} [1-9]/);
    });
  },
);
