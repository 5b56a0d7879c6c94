// A key that stops working is refused within 1 s, through a real kube-apiserver wired exactly as
// manifests/apiserver/ says (the token cache TTL of kube-apiserver.flags included), even right after
// the same request, made again and again up to the change, has warmed every cache kube-apiserver
// keeps: its 10 s cache of successful TokenReviews (no flag changes it) and the 500 ms cache of
// vgate's authorization answers (authorization-config.yaml). One loop sends the same GET with the
// key back to back while the test disables, deletes or rotates the key, or narrows its scope, each
// change made just after vgate answered a SubjectAccessReview for that GET (the freshest cached
// answer: the worst case), or while the key expires; no request sent 1 s or more after the change
// may succeed, and the last answer must be vgate's refusal, with vgate's reason.

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import {
  manifestTokenCacheTtl,
  startVgateCluster,
  type VgateCluster,
} from "../../support/cluster.js";
import { httpsRequest } from "../../support/https-client.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../../support/kube/binaries.js";
import { KubeTestClient } from "../../support/kube/kube-client.js";
import { role, roleBindingToUser } from "../../support/kube/rbac.js";
import { metricValue } from "../../support/prometheus-text.js";
import { until } from "../../support/until.js";

const USER = "revoked-user";
const NAMESPACE = "revocation";
const CONFIGMAP = "revocation-cm";
const OBJECT_PATH = `/api/v1/namespaces/${NAMESPACE}/configmaps/${CONFIGMAP}`;
/** The bound: a key change takes effect within this long. */
const WITHIN_MS = 1000;
/** How long the loop warms the caches before a change: several of the 500 ms TTLs. */
const WARM_MS = 1500;
/** How long the loop goes on after the change: past the bound, to see it hold. */
const AFTER_MS = WITHIN_MS + 500;

interface Sample {
  /** Date.now() when the request was sent. */
  sentAt: number;
  status: number;
  message: string;
}

interface Outcome {
  /** When the change was made (the write sent, or the expiry instant). */
  changedAt: number;
  samples: Sample[];
}

(HAVE_KUBE ? describe : describe.skip)(
  `a key change takes effect within 1 s, caches warm${KUBE_SKIP_REASON}`,
  function () {
    this.timeout(90_000);
    let cluster: VgateCluster;
    let keysPath = "";
    let n = 0;

    before(async () => {
      cluster = await startVgateCluster({ tokenCacheTtl: manifestTokenCacheTtl() });
      keysPath = `/apis/${cluster.group}/v1/ownedaccesskeys`;
      const { admin } = cluster;
      await admin.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: NAMESPACE } });
      await admin.apply({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: CONFIGMAP, namespace: NAMESPACE },
        data: { greeting: "hello" },
      });
      const getConfigMaps = { apiGroups: [""], resources: ["configmaps"], verbs: ["get"] };
      await admin.apply(role("reader", NAMESPACE, [getConfigMaps]));
      await admin.apply(roleBindingToUser("reader", NAMESPACE, "reader", USER));
    });

    after(async () => {
      await cluster?.stop();
    });

    /** A key of USER made as a user makes one (vgate's mutating webhook fills in spec.key). */
    async function newKey(spec: Record<string, unknown> = {}) {
      const name = `revoked-${n++}`;
      const res = await cluster.admin.request<{
        metadata: { creationTimestamp: string };
        spec: { key: string };
      }>("POST", keysPath, {
        apiVersion: `${cluster.group}/v1`,
        kind: "OwnedAccessKey",
        metadata: { name },
        spec: { user: USER, type: "User", ...spec },
      });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      const { key } = res.body.spec;
      assert.ok(key, "vgate's webhook filled in spec.key");
      return { name, key, created: Date.parse(res.body.metadata.creationTimestamp) };
    }

    function patchKey(name: string, patch: Record<string, unknown>) {
      return cluster.admin.request("PATCH", `${keysPath}/${name}`, patch, {
        "Content-Type": "application/merge-patch+json",
      });
    }

    /** SubjectAccessReviews vgate has answered (its /metrics). */
    async function authorizeCalls(): Promise<number> {
      const page = (await httpsRequest(`${cluster.vgateUrl}/metrics`, { ca: cluster.caPem })).text;
      return metricValue(page, "vgate_admission_requests_total", {
        route: "authorize",
        operation: "review",
      });
    }

    /**
     * Returns just after vgate answered another SubjectAccessReview: with only the loop's GET
     * being sent with a key, kube-apiserver has just cached that answer afresh.
     */
    async function freshAnswer(): Promise<void> {
      const seen = await authorizeCalls();
      await until(async () => (await authorizeCalls()) > seen, "vgate asked again", 5_000);
    }

    /**
     * Sends the GET with `key` back to back: until it has succeeded for WARM_MS (and then for as
     * long as `change` takes to come), then for AFTER_MS past the moment `change` returns.
     */
    async function throughChange(key: string, change: () => Promise<number>): Promise<Outcome> {
      const client = new KubeTestClient(cluster.url, { ca: cluster.caPem, token: key });
      const samples: Sample[] = [];
      let stopAt = Number.POSITIVE_INFINITY;
      let firstOk: number | undefined;
      const loop = (async () => {
        while (Date.now() < stopAt) {
          const sentAt = Date.now();
          const res = await client.request<{ message?: string }>("GET", OBJECT_PATH);
          if (res.status === 200) firstOk ??= sentAt;
          samples.push({ sentAt, status: res.status, message: res.body.message ?? "" });
        }
      })();
      try {
        // RBAC and vgate's index take effect a moment after they are written.
        await until(
          () => firstOk !== undefined && Date.now() - firstOk >= WARM_MS,
          "the key works, for a while",
        );
        const changedAt = await change();
        stopAt = Math.max(Date.now(), changedAt) + AFTER_MS;
        await loop;
        return { changedAt, samples };
      } finally {
        stopAt = 0;
        await loop.catch(() => undefined);
        client.close();
      }
    }

    /** The change's effect: refused by vgate within WITHIN_MS, warm caches notwithstanding. */
    function assertRefusedWithin(outcome: Outcome, reason: RegExp): void {
      const { changedAt, samples } = outcome;
      const odd = samples.filter((s) => ![200, 401, 403].includes(s.status));
      assert.deepEqual(odd, [], "only 200, 401 or 403");
      const before = samples.filter((s) => s.sentAt < changedAt);
      // Warm: the key was used moments before the change (less than one cache TTL).
      const lastOkBefore = before.filter((s) => s.status === 200).at(-1);
      assert.ok(lastOkBefore, "the key worked before the change");
      assert.ok(
        changedAt - lastOkBefore.sentAt < 250,
        `the key was last used ${changedAt - lastOkBefore.sentAt} ms before the change`,
      );
      const lastOk = samples.filter((s) => s.status === 200).at(-1)!;
      const delay = lastOk.sentAt - changedAt;
      assert.ok(
        delay < WITHIN_MS,
        `a request sent ${delay} ms after the change still succeeded (${samples.length} requests)`,
      );
      const after = samples.filter((s) => s.sentAt > lastOk.sentAt);
      assert.ok(
        after.some((s) => s.sentAt >= changedAt + WITHIN_MS),
        "requests went on past the bound",
      );
      assert.ok(
        after.every((s) => s.status === 401 || s.status === 403),
        "refused from then on",
      );
      const last = after.at(-1)!;
      // kube-apiserver still has the login cached (10 s): the refusal is vgate's 403, with its
      // reason, not a 401.
      assert.equal(last.status, 403, last.message);
      assert.match(last.message, reason);
    }

    it("a disabled key", async () => {
      const k = await newKey();
      const outcome = await throughChange(k.key, async () => {
        await freshAnswer();
        const at = Date.now();
        assert.equal((await patchKey(k.name, { spec: { disabled: true } })).status, 200);
        return at;
      });
      assertRefusedWithin(outcome, /access key disabled/);
    });

    it("an expired key, from the moment its ttl runs out", async () => {
      // creationTimestamp has second precision: the key expires at created + ttl.
      const ttl = 4;
      const k = await newKey({ ttl });
      const expiresAt = k.created + ttl * 1000;
      const outcome = await throughChange(k.key, async () => {
        await new Promise((r) => setTimeout(r, Math.max(0, expiresAt - Date.now())));
        return expiresAt;
      });
      assertRefusedWithin(outcome, /access key expired/);
    });

    it("a deleted key", async () => {
      const k = await newKey();
      const outcome = await throughChange(k.key, async () => {
        await freshAnswer();
        const at = Date.now();
        assert.equal((await cluster.admin.request("DELETE", `${keysPath}/${k.name}`)).status, 200);
        return at;
      });
      assertRefusedWithin(outcome, /access key not found/);
    });

    it("the old value of a rotated key", async () => {
      const k = await newKey();
      const outcome = await throughChange(k.key, async () => {
        await freshAnswer();
        const at = Date.now();
        const rotated = randomBytes(32).toString("base64url");
        const res = await patchKey(k.name, { spec: { key: rotated } });
        assert.equal(res.status, 200, JSON.stringify(res.body));
        return at;
      });
      assertRefusedWithin(outcome, /access key rotated since this login/);
    });

    it("a request a narrowed scope leaves out", async () => {
      // No scope: the key may do what its user may. Then a project the namespace is not in.
      const k = await newKey();
      const outcome = await throughChange(k.key, async () => {
        await freshAnswer();
        const at = Date.now();
        const res = await patchKey(k.name, {
          spec: { scope: { projects: [{ project: "other" }] } },
        });
        assert.equal(res.status, 200, JSON.stringify(res.body));
        return at;
      });
      assertRefusedWithin(outcome, /outside the key's scope/);
    });
  },
);
