// Two replicas of `vgate serve` (real processes, as two pods of the Deployment) on one real
// kube-apiserver, both answering TokenReviews for the same keys over real HTTPS: together they
// write a key's status.lastActivity at most once per --activity-write-interval (docs/decisions.md
// OAK-35). Each replica sees the other's writes through its watch cache and skips; two that decide
// at the same moment from the same stale cache write with the same resourceVersion, and the second
// gets a conflict and drops its write. The writes are counted by a watch on the key
// (test/support/kube/activity-writes.ts). Each replica talks to the API server through a fault
// proxy of its own, which holds or refuses its status writes on demand.

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { TOKEN_ERRORS } from "../../../webhook/src/auth/token-review.js";
import {
  installAccessKeyCrd,
  sharedCluster,
  VGATE_NAMESPACE,
  VGATE_SERVICE_ACCOUNT,
  VGATE_USER,
  type MoreVgate,
  type VgateCluster,
} from "../../support/cluster.js";
import { httpsRequest, postJson } from "../../support/https-client.js";
import {
  activityWriteViolations,
  watchActivityWrites,
  type ActivityWrites,
} from "../../support/kube/activity-writes.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../../support/kube/binaries.js";
import { crdRef } from "../../support/kube/crds.js";
import {
  kubeStatus,
  type FaultProxy,
  type RecordedRequest,
} from "../../support/kube/fault-proxy.js";
import {
  clusterRole,
  clusterRoleBinding,
  rulesInEffect,
  vgateRules,
} from "../../support/kube/rbac.js";
import { until } from "../../support/until.js";

const DOMAIN = "activity-replicas.test";
const GROUP = `management.${DOMAIN}`;
/** --activity-write-interval of both replicas (a minute in production). */
const INTERVAL_MS = 2000;
/** The flush period that follows from it (auth/activity.ts flushIntervalFor). */
const FLUSH_MS = INTERVAL_MS / 6;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Login {
  replica: string;
  /** Sent at; vgate notes the login between this and doneAt. */
  at: number;
  doneAt: number;
  authenticated: boolean;
  error?: string | undefined;
}

(HAVE_KUBE ? describe : describe.skip)(
  `status.lastActivity from two replicas${KUBE_SKIP_REASON}`,
  function () {
    this.timeout(120_000);
    let cluster: VgateCluster;
    const run = randomBytes(3).toString("hex");
    const proxies: FaultProxy[] = [];
    const replicas: MoreVgate[] = [];
    const watches: ActivityWrites[] = [];
    /** Status writes through a proxy fail with 500 while this is true. */
    let refuseWrites = false;
    const rules = vgateRules(GROUP);
    const role = clusterRole(`vgate-${DOMAIN}`, rules);
    const binding = clusterRoleBinding(`vgate-${DOMAIN}`, `vgate-${DOMAIN}`, [
      { kind: "ServiceAccount", name: VGATE_SERVICE_ACCOUNT, namespace: VGATE_NAMESPACE },
    ]);

    before(async () => {
      cluster = await sharedCluster();
      // A keyspace of this file's own, no admission webhook in the way; vgate's service account
      // gets the rules an install gives it for that group.
      await installAccessKeyCrd(cluster.admin, DOMAIN);
      await cluster.admin.apply(role);
      await cluster.admin.apply(binding);
      await rulesInEffect(
        cluster.admin,
        { user: VGATE_USER, groups: ["system:serviceaccounts"] },
        rules,
      );
      for (const name of ["a", "b"]) {
        const proxy = await cluster.plane.faultProxy();
        proxy.inject(
          (r) => refuseWrites && isStatusPatch(r),
          { status: 500, body: kubeStatus(500, "InternalError", "etcdserver: request timed out") },
          1_000_000,
        );
        proxies.push(proxy);
        replicas.push(
          await cluster.startVgate({
            name: `activity-${name}`,
            server: proxy.url,
            vgateArgs: [
              `--group-domain=${DOMAIN}`,
              `--activity-write-interval=${INTERVAL_MS / 1000}s`,
            ],
          }),
        );
      }
    });

    after(async () => {
      for (const w of watches) w.stop();
      await Promise.all(replicas.map((r) => r.stop()));
      await Promise.all(proxies.map((p) => p.close()));
      await cluster?.admin.delete(crdRef(`ownedaccesskeys.${GROUP}`));
      await cluster?.admin.delete(binding);
      await cluster?.admin.delete(role);
    });

    const isStatusPatch = (r: RecordedRequest) =>
      r.method === "PATCH" && r.path.startsWith(`/apis/${GROUP}/`) && r.path.endsWith("/status");

    /**
     * Stores a key, starts counting its writes, and waits until both replicas log it in (logins
     * from `since` on).
     */
    async function storeKey(suffix: string, spec: Record<string, unknown> = {}) {
      const name = `k-${run}-${suffix}`;
      const token = randomBytes(32).toString("base64url");
      const res = await cluster.admin.request("POST", `/apis/${GROUP}/v1/ownedaccesskeys`, {
        apiVersion: `${GROUP}/v1`,
        kind: "OwnedAccessKey",
        metadata: { name },
        spec: { user: "alice", key: token, ...spec },
      });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      const writes = await watchActivityWrites(cluster.admin, GROUP, name);
      watches.push(writes);
      const since = Date.now();
      for (const replica of replicas) {
        await until(
          async () => (await login(replica, token)).authenticated,
          `${replica.log} knows ${name}`,
        );
      }
      return { name, token, writes, since };
    }

    /** A TokenReview as kube-apiserver sends it, to one replica. */
    async function login(replica: MoreVgate, token: string): Promise<Login> {
      const at = Date.now();
      const res = await postJson(
        `${replica.url}/authenticate`,
        {
          apiVersion: "authentication.k8s.io/v1",
          kind: "TokenReview",
          spec: { token },
        },
        cluster.caPem,
        cluster.apiserverClient,
      );
      assert.equal(res.status, 200, res.text);
      const status = res.json<{ status: { authenticated?: boolean; error?: string } }>().status;
      return {
        replica: replica.log,
        at,
        doneAt: Date.now(),
        authenticated: status.authenticated === true,
        error: status.error,
      };
    }

    /** Logins to both replicas every `everyMs`, at once and in turn, for `ms`. */
    async function logins(token: string, ms: number, everyMs = 100): Promise<Login[]> {
      const out: Login[] = [];
      const [a, b] = replicas as [MoreVgate, MoreVgate];
      for (let i = 0, end = Date.now() + ms; Date.now() < end; i++) {
        if (i % 3 === 0) out.push(...(await Promise.all([login(a, token), login(b, token)])));
        else out.push(await login(i % 3 === 1 ? a : b, token));
        await sleep(everyMs);
      }
      return out;
    }

    /** vgate_access_key_activity_writes_total{result} of one replica. */
    async function writeCounts(replica: MoreVgate): Promise<Record<string, number>> {
      const res = await httpsRequest(`${replica.url}/metrics`, { ca: cluster.caPem });
      const counts: Record<string, number> = {};
      for (const m of res.text.matchAll(
        /^vgate_access_key_activity_writes_total\{result="([a-z-]+)"\} (\d+)$/gm,
      )) {
        counts[m[1]!] = Number(m[2]);
      }
      return counts;
    }

    /** vgate_access_key_activity_writes_total{result="written"} of both replicas together. */
    const writtenCount = async () =>
      (await Promise.all(replicas.map(writeCounts))).reduce((n, c) => n + (c["written"] ?? 0), 0);

    const logSays = (replica: MoreVgate, text: string, key: string) =>
      import("node:fs/promises").then(async ({ readFile }) =>
        (await readFile(replica.log, "utf8"))
          .split("\n")
          .filter((l) => l.includes(text) && l.includes(key)),
      );

    it("logins on both replicas for five intervals: at most one write per interval between them, every login passes", async () => {
      // The TTL counts from the last activity; it is twice the interval, so a key whose activity
      // were not recorded would expire during the run.
      const ttl = (2 * INTERVAL_MS) / 1000;
      const marks = proxies.map((p) => p.requests.length);
      const writtenBefore = await writtenCount();
      const k = await storeKey("steady", { ttl, ttlAfterLastActivity: true });
      const load = await logins(k.token, 5 * INTERVAL_MS);
      // Whole seconds, as the values are: the first login's second to the last one's.
      const first = Math.floor(k.since / 1000) * 1000;
      const last = Math.max(...load.map((l) => l.doneAt));
      await sleep(FLUSH_MS + 1500);

      const refused = load.filter((l) => !l.authenticated);
      assert.deepEqual(refused, [], "every login passes");
      assert.equal(k.writes.failure, undefined);
      const values = k.writes.writes.map((w) => w.lastActivity);
      console.log(
        `      ${load.length} logins over ${last - k.since} ms on 2 replicas: ` +
          `${values.length} writes (${values.join(", ")})`,
      );
      assert.deepEqual(
        activityWriteViolations(k.writes.initial, k.writes.writes, INTERVAL_MS),
        [],
        "consecutive values at least an interval apart",
      );
      const span = last - first;
      assert.ok(
        values.length <= Math.floor(span / INTERVAL_MS) + 1,
        `${values.length} writes in ${span} ms`,
      );
      // Not vacuous: the activity is written about once per interval.
      assert.ok(values.length >= 3, `${values.length} writes in ${span} ms`);
      // No PATCH is wasted: each one either moved lastActivity (a write the watch saw) or met a
      // conflict. One that changed nothing (a second replica writing the same second) would be
      // answered 200 without a write.
      const patches = proxies.flatMap((p, i) =>
        p.requests.slice(marks[i]).filter((r) => isStatusPatch(r) && r.path.includes(k.name)),
      );
      const answers = patches.map((r) => r.answer);
      assert.equal(answers.filter((a) => a === 200).length, values.length, `answers ${answers}`);
      assert.deepEqual(
        answers.filter((a) => a !== 200 && a !== 409),
        [],
        "every other PATCH met a conflict",
      );
      // What the replicas count as written is what was written.
      assert.equal((await writtenCount()) - writtenBefore, values.length);
      for (const v of values) {
        const at = Date.parse(v);
        assert.ok(at >= first && at <= last, `${v} in the run`);
      }

      // Idle: the key expires a TTL after its last use, on both replicas.
      await sleep(Math.max(0, last + ttl * 1000 + 500 - Date.now()));
      for (const replica of replicas) {
        const after = await login(replica, k.token);
        assert.deepEqual([after.authenticated, after.error], [false, TOKEN_ERRORS.expired]);
      }
    });

    it("both replicas decide from the same stale cache: one write lands, the other is a conflict and is dropped", async () => {
      const [a, b] = replicas as [MoreVgate, MoreVgate];
      const k = await storeKey("race");
      // The logins that found the key were written; the race starts an interval later.
      await until(() => k.writes.writes.length > 0, "the first write", 10_000);
      await sleep(INTERVAL_MS + FLUSH_MS + 100);
      const before = k.writes.writes.length;
      const conflictsBefore = (await writeCounts(b))["conflict"] ?? 0;
      // Each replica's PATCH is held on its way, so neither sees the other's write before it
      // writes itself: both write with the resourceVersion both caches hold. The holds end by
      // order, not after a time: A's write lands first, then B's goes on. (Held for a fixed time,
      // a write could outlast the API client's 5 s timeout on a loaded machine; retried, it is
      // decided again from a fresh cache and is no longer the race.)
      const [holdA, holdB] = proxies.map((p) => p.hold(isStatusPatch)) as [
        { release(): void },
        { release(): void },
      ];
      const held = proxies.map((p) => p.requests.length);
      let atA: Login;
      try {
        atA = await login(a, k.token);
        // B logs in early in the next second: two writes would be two values, and B's login
        // stays within the interval of A's whole second (a fixed 1.1 s after a login late in its
        // second put B's two seconds on, making a second write due by the rule, not by the race).
        await sleep(1050 - (Date.now() % 1000));
        const atB = await login(b, k.token);
        assert.ok(atA.authenticated && atB.authenticated);
        await until(
          () => proxies.every((p, i) => p.requests.slice(held[i]).some(isStatusPatch)),
          "both replicas send their PATCH",
          10_000,
        );
        holdA.release();
        await until(() => k.writes.writes.length > before, "replica a's write lands", 10_000);
      } finally {
        holdA.release();
        holdB.release();
      }
      await sleep(2 * INTERVAL_MS);

      const values = k.writes.writes.slice(before).map((w) => w.lastActivity);
      assert.equal(values.length, 1, `one write, not one per replica: ${values.join(", ")}`);
      const value = Date.parse(values[0]!);
      assert.ok(
        value >= Math.floor(atA.at / 1000) * 1000 && value <= atA.doneAt,
        `${values[0]} is A's login`,
      );
      const conflicts = ((await writeCounts(b))["conflict"] ?? 0) - conflictsBefore;
      assert.ok(conflicts >= 1, "B's write met a conflict (else the race did not happen)");
      assert.deepEqual(await logSays(b, '"level":40', k.name), [], "a conflict is no warning");
      console.log(`      B's write: ${conflicts} conflict(s), dropped`);
    });

    it("status writes refused on both replicas: logins pass, one try per flush, one write once it works", async () => {
      const k = await storeKey("refused");
      await until(() => k.writes.writes.length > 0, "the first write", 10_000);
      await sleep(INTERVAL_MS + FLUSH_MS + 100);
      const before = k.writes.writes.length;
      refuseWrites = true;
      const marks = proxies.map((p) => p.requests.length);
      const startedAt = Date.now();
      const load = await logins(k.token, 2 * INTERVAL_MS);
      const tries = proxies.map(
        (p, i) =>
          p.requests
            .slice(marks[i])
            .filter((r) => isStatusPatch(r) && r.path.includes(`/${k.name}/`)).length,
      );
      refuseWrites = false;
      const ms = Date.now() - startedAt;
      assert.deepEqual(
        load.filter((l) => !l.authenticated),
        [],
        "every login passes",
      );
      assert.equal(k.writes.writes.length, before, "nothing written while refused");
      const perReplica = load.length / 2;
      for (const n of tries) {
        assert.ok(n >= 1, "the write was tried");
        assert.ok(n <= ms / FLUSH_MS + 2, `${n} tries in ${ms} ms for ${perReplica} logins`);
      }
      await sleep(FLUSH_MS + 2 * INTERVAL_MS);
      const values = k.writes.writes.slice(before).map((w) => w.lastActivity);
      assert.equal(values.length, 1, `one write once it works: ${values.join(", ")}`);
      console.log(
        `      ${load.length} logins while refused: ${tries.join(" and ")} tries, ` +
          `then ${values.length} write`,
      );
    });
  },
);
