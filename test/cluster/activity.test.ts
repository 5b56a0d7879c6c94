// Two replicas of vgate on a real node write a key's status.lastActivity at most once per
// --activity-write-interval between them (docs/decisions.md OAK-35), with the logins coming the
// way users send them: requests with the key as bearer token to kube-apiserver, which asks vgate
// through the Service.
//
// kube-apiserver keeps a successful TokenReview for the token cache TTL of
// manifests/apiserver/kube-apiserver.flags (10 s), so vgate sees a key's login at most once per
// TTL, whatever the client sends. The interval is therefore set above the TTL (20 s, against a
// minute by default; a 5 s interval would see every login written and could not tell one replica
// from two): the keys log in together in bursts just over the TTL apart, so each reaches vgate
// about twice per interval. kube-apiserver keeps its connections to vgate open, and kube-proxy
// picks a pod per connection; a burst's TokenReviews go out at once over several connections, so
// a key's logins land on one pod and then the other. Each pod's log names the key of every
// TokenReview: the test checks that this happened within an interval, where a replica deciding
// from its own writes alone would write the key again.

import assert from "node:assert/strict";
import { HAVE_NODE, NODE_SKIP_REASON, nodeImages } from "../support/node/cluster-tier.js";
import { startNodeRig, type NodeRig } from "../support/node/node-rig.js";
import {
  bash,
  installVgate,
  waitForWebhooks,
  type VgateInstall,
} from "../support/node/vgate-install.js";
import { podMetrics, vgatePods, VGATE_NAMESPACE } from "../support/node/vgate-pods.js";
import {
  activityWriteViolations,
  watchActivityWrites,
  type ActivityWrites,
} from "../support/kube/activity-writes.js";
import { KubeTestClient } from "../support/kube/kube-client.js";
import { metricValue } from "../support/prometheus-text.js";

const GROUP = "management.loft.sh";
/** --activity-write-interval for this file: above kube-apiserver's 10 s token cache. */
const INTERVAL_MS = 20_000;
/** Keys logged in at once per burst: several TokenReviews at once, over several connections. */
const KEYS = 8;
/** Bursts, each once the token cache has forgotten the one before. */
const BURSTS = 5;
/** Between the end of one burst and the next: past the 10 s token cache TTL. */
const GAP_MS = 11_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface PodCounts {
  authenticated: number;
  written: number;
}

(HAVE_NODE ? describe : describe.skip)(
  `status.lastActivity from two replicas on a real node${NODE_SKIP_REASON}`,
  function () {
    this.timeout(600_000);
    let rig: NodeRig;
    let install: VgateInstall;

    before(async () => {
      const images = nodeImages();
      rig = await startNodeRig({ pause: images.pause });
      install = await installVgate(rig, images.vgate);
      // What a user would do to change a flag: patch the Deployment and let it roll.
      const patch = await rig.kubectl([
        "-n",
        VGATE_NAMESPACE,
        "patch",
        "deployment",
        "vgate",
        "--type=json",
        "-p",
        JSON.stringify([
          {
            op: "add",
            path: "/spec/template/spec/containers/0/args/-",
            value: `--activity-write-interval=${INTERVAL_MS / 1000}s`,
          },
        ]),
      ]);
      assert.equal(patch.code, 0, patch.stderr);
      await waitForWebhooks(rig);
    });
    after(async () => rig?.stop());

    /** Each running pod's login and write counters. */
    async function counts(): Promise<Map<string, PodCounts>> {
      const out = new Map<string, PodCounts>();
      for (const pod of await vgatePods(rig)) {
        const page = await podMetrics(rig, pod.name);
        out.set(pod.name, {
          authenticated: metricValue(page, "vgate_access_key_logins_total", {
            result: "authenticated",
          }),
          written: metricValue(page, "vgate_access_key_activity_writes_total", {
            result: "written",
          }),
        });
      }
      return out;
    }

    /**
     * From each pod's log (a "review" line per TokenReview, with the key's name): how often a
     * key's next login came to the other pod less than an interval after the one before.
     */
    async function crossReplicaLogins(names: readonly string[]): Promise<number> {
      const logins: { key: string; pod: string; at: number }[] = [];
      for (const pod of await vgatePods(rig)) {
        const log = await rig.kubectl(["-n", VGATE_NAMESPACE, "logs", pod.name]);
        assert.equal(log.code, 0, log.stderr);
        for (const line of log.stdout.split("\n")) {
          if (!line.includes('"route":"authenticate"')) continue;
          const entry = JSON.parse(line) as { accessKey?: string; time: string; msg: string };
          if (entry.msg === "review" && entry.accessKey && names.includes(entry.accessKey)) {
            logins.push({ key: entry.accessKey, pod: pod.name, at: Date.parse(entry.time) });
          }
        }
      }
      let crossings = 0;
      for (const name of names) {
        const mine = logins.filter((l) => l.key === name).sort((a, b) => a.at - b.at);
        for (let i = 1; i < mine.length; i++) {
          const [a, b] = [mine[i - 1]!, mine[i]!];
          if (a.pod !== b.pod && b.at - a.at < INTERVAL_MS) crossings++;
        }
      }
      return crossings;
    }

    it("logins through kube-apiserver reach both pods, and each key is written at most once per interval between them", async () => {
      const pods = await vgatePods(rig);
      assert.equal(pods.length, 2, "two replicas");
      for (const p of pods) assert.ok(p.ready, `${p.name} is ready`);
      const before = await counts();

      // Keys as a user makes them, each with a client that logs in with it.
      const names = Array.from({ length: KEYS }, (_, i) => `activity-${i}`);
      // The key on stdout (bash() returns stdout, then stderr, which names the key).
      const tokens = await Promise.all(
        names.map(
          async (name, i) =>
            (
              await bash(
                `kubectl accesskey create ${name} --user activity-user-${i} --ttl 1h`,
                install.workDir,
                install.env,
              )
            ).split("\n")[0]!,
        ),
      );
      const watches: ActivityWrites[] = [];
      for (const name of names) watches.push(await watchActivityWrites(rig.admin, GROUP, name));
      const clients = tokens.map(
        (token) => new KubeTestClient(rig.url, { ca: rig.ca.cert, token }),
      );

      let first = 0;
      let last = 0;
      const refused: string[] = [];
      try {
        for (let b = 0; b < BURSTS; b++) {
          const sent = Date.now();
          if (b === 0) first = sent;
          const answers = await Promise.all(
            clients.map((c) =>
              c.request<{ status?: { userInfo?: { username?: string } } }>(
                "POST",
                "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" },
              ),
            ),
          );
          last = Date.now();
          answers.forEach((a, i) => {
            if (a.status !== 201 || a.body.status?.userInfo?.username !== `activity-user-${i}`) {
              refused.push(`burst ${b} key ${i}: ${a.status} ${JSON.stringify(a.body)}`);
            }
          });
          if (b < BURSTS - 1) await sleep(GAP_MS);
        }
        // The last logins reach status within a flush (a sixth of the interval).
        await sleep(INTERVAL_MS / 6 + 2000);
      } finally {
        for (const c of clients) c.close();
        for (const w of watches) w.stop();
      }
      const after = await counts();
      assert.deepEqual(refused, [], "every login passes");
      // The counters are per process: the same two, never restarted.
      assert.deepEqual([...after.keys()], [...before.keys()], "the same pods throughout");
      for (const p of await vgatePods(rig)) assert.equal(p.restarts, 0, `${p.name} restarted`);

      const logins = [...after].map(
        ([pod, c]) => [pod, c.authenticated - (before.get(pod)?.authenticated ?? 0)] as const,
      );
      const written = [...after].reduce(
        (n, [pod, c]) => n + c.written - (before.get(pod)?.written ?? 0),
        0,
      );
      const perKey = watches.map((w) => w.writes.map((x) => x.lastActivity));
      const seen = perKey.reduce((n, v) => n + v.length, 0);
      // The values are whole seconds: the first burst's second to the last one's.
      const span = Math.floor(last / 1000) * 1000 - Math.floor(first / 1000) * 1000;
      const most = Math.floor(span / INTERVAL_MS) + 1;
      console.log(
        `      ${KEYS} keys, ${BURSTS} bursts over ${((last - first) / 1000).toFixed(1)} s ` +
          `(interval ${INTERVAL_MS / 1000} s): TokenReviews per pod ` +
          `${logins.map(([p, n]) => `${p.slice(-5)} ${n}`).join(", ")}; ` +
          `writes per key ${perKey.map((v) => v.length).join(" ")} (at most ${most} each), ` +
          `${seen} seen, ${written} counted written`,
      );

      for (const [i, w] of watches.entries()) {
        assert.equal(w.failure, undefined, `${names[i]}: ${w.failure}`);
        assert.deepEqual(
          activityWriteViolations(w.initial, w.writes, INTERVAL_MS),
          [],
          `${names[i]}: consecutive values at least an interval apart`,
        );
        const n = w.writes.length;
        assert.ok(n <= most, `${names[i]}: ${n} writes in ${span} ms (at most ${most})`);
        // Not vacuous: a key used all along is written about once per interval.
        assert.ok(n >= most - 1 && n >= 2, `${names[i]}: ${n} writes in ${span} ms`);
        for (const v of w.writes) {
          const at = Date.parse(v.lastActivity);
          assert.ok(
            at >= Math.floor(first / 1000) * 1000 && at <= last,
            `${v.lastActivity} in the run`,
          );
        }
      }
      // Every burst reached vgate (the token cache had forgotten the one before), on both pods.
      assert.equal(
        logins.reduce((n, [, c]) => n + c, 0),
        KEYS * BURSTS,
        "one TokenReview per key and burst",
      );
      for (const [pod, n] of logins) assert.ok(n > 0, `${pod} answered TokenReviews`);
      // The case that matters happened: a key's login on one pod within an interval of its
      // login on the other, which a replica deciding from its own writes would write again.
      const crossings = await crossReplicaLogins(names);
      console.log(
        `      logins of one key on one pod and then the other, less than an interval apart: ${crossings}`,
      );
      assert.ok(crossings > 0, "some key logged in on both pods within one interval");
      // What the replicas count as written is what was written.
      assert.equal(written, seen, "vgate_access_key_activity_writes_total{result=written}");
    });
  },
);
