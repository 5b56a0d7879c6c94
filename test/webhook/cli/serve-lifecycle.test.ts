// A key's end of life in `vgate serve` (cli/serve-lifecycle.ts) on the real kube-apiserver of the
// test rig: vgate runs in this process with a clock of the test's (ServeOptions.now, not a flag),
// as its own service account with the RBAC the key-lifecycle Component grants. The Events are read
// back from the API server, the metric from vgate's /metrics over HTTPS. The keys live in a group
// domain of this file's own, whose CRD no webhook watches, so vgate sees exactly these keys.

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LifecycleOptions } from "../../../webhook/src/cli/serve-options.js";
import { KeyLifecycle } from "../../../webhook/src/cli/serve-lifecycle.js";
import { createLogger } from "../../../webhook/src/server/logger.js";
import { createMetrics } from "../../../webhook/src/server/metrics.js";
import { loadKubeConfig } from "../../../webhook/src/shared/kubeconfig.js";
import {
  resourceIdentity,
  type OwnedAccessKey,
} from "../../../webhook/src/shared/ownedaccesskey.js";
import { KubeTransport } from "../../../webhook/src/shared/transport.js";
import {
  installAccessKeyCrd,
  sharedCluster,
  VGATE_NAMESPACE,
  type VgateCluster,
} from "../../support/cluster.js";
import { httpsRequest } from "../../support/https-client.js";
import { startInProcessVgate, type InProcessVgate } from "../../support/in-process-vgate.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../../support/kube/binaries.js";
import { crdRef } from "../../support/kube/crds.js";
import { vgateRules, type PolicyRule } from "../../support/kube/rbac.js";
import { serviceAccountWith, type TestServiceAccount } from "../../support/kube/service-account.js";
import { HAVE_ANY_KUBECTL, kubectlFor } from "../../support/kubectl.js";
import { until, untilValue } from "../../support/until.js";

const DOMAIN = "lifecycle.test";
const GROUP = `management.${DOMAIN}`;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** What manifests/overlays/key-lifecycle grants, beyond the base's rules (there, namespaced). */
const LIFECYCLE_RULES: PolicyRule[] = [
  { apiGroups: [""], resources: ["events"], verbs: ["create"] },
  { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["get", "create", "update"] },
  { apiGroups: [GROUP], resources: ["ownedaccesskeys"], verbs: ["delete"] },
];

interface KubeEvent {
  metadata: { name: string; namespace: string };
  type: string;
  reason: string;
  message: string;
  involvedObject: { kind: string; name: string; uid: string; apiVersion: string };
}

(HAVE_KUBE ? describe : describe.skip)(
  `vgate serve: expiry warnings, the expiry metric and retention${KUBE_SKIP_REASON}`,
  function () {
    this.timeout(120_000);
    let cluster: VgateCluster;
    let account: TestServiceAccount;
    let kubeconfig: string;
    let cacheDir: string;
    const run = randomBytes(3).toString("hex");
    const running: InProcessVgate[] = [];
    /** The clock vgate reads: the real one, moved forward by this much. */
    let offset = 0;

    before(async () => {
      cluster = await sharedCluster();
      await installAccessKeyCrd(cluster.admin, DOMAIN);
      account = await serviceAccountWith(
        cluster.plane,
        "vgate-lifecycle",
        [...vgateRules(GROUP), ...LIFECYCLE_RULES],
        VGATE_NAMESPACE,
      );
      kubeconfig = await account.kubeconfig();
      cacheDir = await mkdtemp(join(tmpdir(), "vgate-lifecycle-kubectl-"));
    });

    afterEach(async () => {
      await Promise.all(running.splice(0).map((v) => v.stop()));
      offset = 0;
      // Each test sees only its own keys.
      await cluster.admin.request("DELETE", `/apis/${GROUP}/v1/ownedaccesskeys`);
      await untilValue(
        "no keys left",
        () =>
          cluster.admin.request<{ items: unknown[] }>("GET", `/apis/${GROUP}/v1/ownedaccesskeys`),
        (r) => r.status === 200 && r.body.items.length === 0,
      );
    });

    after(async () => {
      await account?.remove();
      if (cacheDir) await rm(cacheDir, { recursive: true, force: true });
      await cluster?.admin.delete(crdRef(`ownedaccesskeys.${GROUP}`));
    });

    function lifecycle(more: Partial<LifecycleOptions>, lease: string): LifecycleOptions {
      return {
        warnings: true,
        thresholdsMs: [7 * DAY, DAY],
        metricMaxSeries: 1000,
        leaderElection: {
          enabled: true,
          id: `lifecycle-${run}-${lease}`,
          namespace: VGATE_NAMESPACE,
          leaseDurationMs: 3000,
          renewDeadlineMs: 2000,
          retryPeriodMs: 500,
        },
        ...more,
      };
    }

    async function startVgate(opts: LifecycleOptions): Promise<InProcessVgate> {
      const vgate = await startInProcessVgate({
        kubeconfig,
        domain: DOMAIN,
        logLevel: "info",
        more: {
          lifecycle: opts,
          lifecycleIntervalMs: 200,
          now: () => Date.now() + offset,
          activityWriteIntervalMs: 1000,
        },
      });
      running.push(vgate);
      await until(
        async () => (await httpsRequest(`${vgate.url}/readyz`, { ca: vgate.ca })).status === 200,
        "vgate ready",
        30_000,
      );
      return vgate;
    }

    const tokens: string[] = [];

    async function newKey(suffix: string, ttlSeconds?: number): Promise<OwnedAccessKey> {
      const token = randomBytes(32).toString("base64url");
      tokens.push(token);
      const spec: Record<string, unknown> = { user: "alice", key: token };
      if (ttlSeconds !== undefined) spec["ttl"] = ttlSeconds;
      const res = await cluster.admin.request<OwnedAccessKey>(
        "POST",
        `/apis/${GROUP}/v1/ownedaccesskeys`,
        {
          apiVersion: `${GROUP}/v1`,
          kind: "OwnedAccessKey",
          metadata: { name: `k-${run}-${suffix}` },
          spec,
        },
      );
      assert.equal(res.status, 201, JSON.stringify(res.body));
      return res.body;
    }

    async function exists(key: OwnedAccessKey): Promise<boolean> {
      const path = `/apis/${GROUP}/v1/ownedaccesskeys/${key.metadata!.name}`;
      const res = await cluster.admin.request("GET", path);
      return res.status === 200;
    }

    /** The AccessKeyExpiring Events about `key`, where kube keeps a cluster-scoped object's. */
    async function eventsOf(key: OwnedAccessKey): Promise<KubeEvent[]> {
      const selector = encodeURIComponent(
        `involvedObject.name=${key.metadata!.name},reason=AccessKeyExpiring`,
      );
      const res = await cluster.admin.request<{ items: KubeEvent[] }>(
        "GET",
        `/api/v1/namespaces/default/events?fieldSelector=${selector}`,
      );
      assert.equal(res.status, 200);
      return res.body.items;
    }

    async function metrics(vgate: InProcessVgate): Promise<string> {
      const res = await httpsRequest(`${vgate.url}/metrics`, { ca: vgate.ca });
      assert.equal(res.status, 200);
      return res.text;
    }

    /** A sample's value, undefined when the series is absent. */
    function sample(text: string, series: string): number | undefined {
      const line = text.split("\n").find((l) => l.startsWith(`${series} `));
      return line === undefined ? undefined : Number(line.slice(series.length + 1));
    }

    const expirySeconds = (text: string, key: OwnedAccessKey) =>
      sample(text, `vgate_accesskey_expiry_seconds{name="${key.metadata!.name}"}`);

    const createdAt = (key: OwnedAccessKey) => Date.parse(key.metadata!.creationTimestamp!);

    /** Seconds from vgate's clock (now) to the key's expiry, as the metric should say. */
    const secondsLeft = (key: OwnedAccessKey, ttl: number) =>
      (createdAt(key) + ttl * 1000 - (Date.now() + offset)) / 1000;

    it("warns once per key and threshold, across a restart, and exports the seconds left", async () => {
      const far = await newKey("far", (30 * DAY) / 1000);
      const week = await newKey("week", (3 * DAY) / 1000);
      const day = await newKey("day", (12 * HOUR) / 1000);
      const never = await newKey("never");
      let vgate = await startVgate(lifecycle({}, "warn"));

      // Inside 7d: the 7d warning; inside 1d (and so 7d): only the 1d one.
      const [weekEvent] = await untilValue(
        "the 7d warning",
        () => eventsOf(week),
        (e) => e.length === 1,
      );
      await untilValue(
        "the 1d warning",
        () => eventsOf(day),
        (e) => e.length === 1,
      );
      assert.equal(weekEvent!.type, "Warning");
      assert.equal(weekEvent!.metadata.namespace, "default");
      assert.equal(weekEvent!.involvedObject.kind, "OwnedAccessKey");
      assert.equal(weekEvent!.involvedObject.apiVersion, `${GROUP}/v1`);
      assert.equal(weekEvent!.involvedObject.uid, week.metadata!.uid);
      const weekExpiry = new Date(createdAt(week) + 3 * DAY).toISOString().replace(/\.\d+Z$/, "Z");
      assert.match(
        weekEvent!.message,
        new RegExp(`^Access key expires in 2d23h\\d+m \\(at ${weekExpiry}\\)`),
      );
      for (const token of tokens) assert.ok(!weekEvent!.message.includes(token));
      if (HAVE_ANY_KUBECTL) {
        // kubectl finds vgate's Event as it finds any object's: by involvedObject, all namespaces.
        const kubectl = kubectlFor(cluster.kubeconfigPath, cacheDir);
        const out = await kubectl(["describe", `ownedaccesskeys.${GROUP}`, week.metadata!.name!]);
        assert.equal(out.code, 0, out.stderr);
        assert.match(
          out.stdout,
          /\n {2}Warning {2}AccessKeyExpiring {2}\S+ +vgate +Access key expires in 2d23h/,
        );
      }

      let text = await metrics(vgate);
      assert.ok(Math.abs(expirySeconds(text, week)! - secondsLeft(week, 3 * 86400)) < 30, text);
      assert.ok(Math.abs(expirySeconds(text, day)! - secondsLeft(day, 12 * 3600)) < 30);
      assert.equal(expirySeconds(text, far), undefined, "beyond the 7d horizon");
      assert.equal(expirySeconds(text, never), undefined, "no TTL");
      assert.equal(sample(text, "vgate_accesskey_expiry_series_dropped"), 0);
      assert.deepEqual(await eventsOf(far), []);
      assert.deepEqual(await eventsOf(never), []);

      // 2.5 days later: `week` is inside 1d (one more Event); `day` has expired (none, no series).
      offset = 2.5 * DAY;
      const weekEvents = await untilValue(
        "the second warning",
        () => eventsOf(week),
        (e) => e.length === 2,
      );
      assert.match(weekEvents.map((e) => e.message).join("\n"), /expires in 11h\d+m/);
      text = await untilValue(
        "the metric after the clock moved",
        () => metrics(vgate),
        (t) => expirySeconds(t, day) === undefined,
      );
      assert.ok(Math.abs(expirySeconds(text, week)! - secondsLeft(week, 3 * 86400)) < 30);

      // A restart (a new process, nothing remembered) decides the same warnings again: the
      // Events' fixed names make the API server refuse the repeats.
      await running.pop()!.stop();
      vgate = await startVgate(lifecycle({}, "warn"));
      await untilValue(
        "the restarted vgate finding the Events recorded",
        () => metrics(vgate),
        (t) => (sample(t, 'vgate_accesskey_expiry_warnings_total{result="exists"}') ?? 0) >= 1,
      );
      text = await metrics(vgate);
      assert.equal(
        sample(text, 'vgate_accesskey_expiry_warnings_total{result="created"}'),
        undefined,
      );
      assert.equal((await eventsOf(week)).length, 2);
      assert.equal((await eventsOf(day)).length, 1);
    });

    it("bounds the metric to the keys expiring soonest", async () => {
      const keys: OwnedAccessKey[] = [];
      for (const hours of [30, 10, 20]) keys.push(await newKey(`bound-${hours}`, hours * 3600));
      const vgate = await startVgate(lifecycle({ warnings: false, metricMaxSeries: 2 }, "bound"));
      const text = await untilValue(
        "the bounded metric",
        () => metrics(vgate),
        (t) =>
          sample(t, "vgate_accesskey_expiry_series_dropped") !== undefined &&
          expirySeconds(t, keys[1]!) !== undefined,
      );
      assert.notEqual(expirySeconds(text, keys[1]!), undefined, "10h: the soonest");
      assert.equal(expirySeconds(text, keys[0]!), undefined, "30h: dropped");
      assert.equal(sample(text, "vgate_accesskey_expiry_series_dropped"), 1);
    });

    it("deletes exactly the keys expired longer than the retention", async () => {
      const old = await newKey("old", 3600);
      const recent = await newKey("recent", 20 * 3600);
      const live = await newKey("live", 2 * 86400);
      const never = await newKey("never-deleted");
      // A day later: `old` expired 23 h ago, `recent` 4 h ago; the retention is 12 h.
      offset = DAY;
      const vgate = await startVgate(
        lifecycle({ warnings: false, retentionMs: 12 * HOUR }, "retain"),
      );
      await until(async () => !(await exists(old)), "the old expired key deleted", 30_000);
      await untilValue(
        "more checks after the deletion",
        () => metrics(vgate),
        (t) => sample(t, 'vgate_accesskey_expired_deletions_total{result="deleted"}') === 1,
      );
      await new Promise((r) => setTimeout(r, 1000));
      for (const key of [recent, live, never]) assert.ok(await exists(key), key.metadata!.name);
      // Its own user, which the validating webhook lets delete such keys (a SelfSubjectReview).
      assert.ok(
        vgate.logLines.some((l) => l.includes(`"user":"${account.username}"`)),
        "vgate learnt its user",
      );
      const lines = vgate.logLines.filter((l) => l.includes("expired longer than"));
      assert.equal(lines.length, 1);
      assert.match(lines[0]!, new RegExp(`"accessKey":"${old.metadata!.name}"`));
      for (const token of tokens) assert.ok(!vgate.logLines.some((l) => l.includes(token)));
    });

    it("does not delete a key renewed since it was read (uid and resourceVersion preconditions)", async () => {
      const stale = await newKey("renewed", 3600);
      // Renewed by its owner: a longer TTL, a new resourceVersion.
      const path = `/apis/${GROUP}/v1/ownedaccesskeys/${stale.metadata!.name}`;
      const renewed = await cluster.admin.request(
        "PATCH",
        path,
        { spec: { ttl: 30 * 86400 } },
        {
          "Content-Type": "application/merge-patch+json",
        },
      );
      assert.equal(renewed.status, 200);
      // A lifecycle whose cache still holds the key as it was (a watch event not yet arrived).
      const kc = (await loadKubeConfig({ kubeconfig, env: {} }))!;
      const transport = new KubeTransport(kc, { timeoutMs: 10_000 });
      const metricsOf = createMetrics(false);
      const stage = new KeyLifecycle({
        opts: {
          ...lifecycle({ warnings: false, retentionMs: HOUR }, "stale"),
          leaderElection: { ...lifecycle({}, "stale").leaderElection, enabled: false },
        },
        identity: resourceIdentity(DOMAIN),
        transport,
        logger: createLogger("silent"),
        metrics: metricsOf,
        now: () => Date.now() + DAY,
      });
      const view = {
        synced: () => true,
        get: (n: string) => (n === stale.metadata!.name ? stale : undefined),
      };
      stage.start(view);
      stage.onChange("ADDED", stale.metadata!.name!);
      await stage.check();
      await stage.stop();
      transport.close();
      const counted = await metricsOf.registry.getSingleMetricAsString(
        "vgate_accesskey_expired_deletions_total",
      );
      assert.match(counted, /result="conflict"\} 1/);
      assert.ok(await exists(stale), "the renewed key is kept");
    });

    it("only the leader writes; the other replica takes over when it stops", async () => {
      const first = await newKey("leader-1", 12 * 3600);
      const opts = lifecycle({}, "two");
      const a = await startVgate(opts);
      const b = await startVgate(opts);
      await untilValue(
        "the warning",
        () => eventsOf(first),
        (e) => e.length === 1,
      );
      const master = `leader_election_master_status{name="${opts.leaderElection.id}"}`;
      const texts = await untilValue(
        "one leader",
        () => Promise.all([metrics(a), metrics(b)]),
        (t) =>
          t
            .map((x) => sample(x, master))
            .sort()
            .join() === "0,1",
      );
      const [leader, standby] = sample(texts[0]!, master) === 1 ? [a, b] : [b, a];
      const tried = (t: string) =>
        ["created", "exists", "dropped", "failed"].reduce(
          (n, r) => n + (sample(t, `vgate_accesskey_expiry_warnings_total{result="${r}"}`) ?? 0),
          0,
        );
      assert.ok(tried(await metrics(leader)) >= 1);
      assert.equal(tried(await metrics(standby)), 0, "the standby records nothing");

      // The leader stops (and releases the Lease): the standby leads and warns about a new key.
      running.splice(running.indexOf(leader), 1);
      await leader.stop();
      const second = await newKey("leader-2", 12 * 3600);
      await untilValue(
        "the new leader's warning",
        () => eventsOf(second),
        (e) => e.length === 1,
        30_000,
      );
      assert.equal(sample(await metrics(standby), master), 1);
    });
  },
);
