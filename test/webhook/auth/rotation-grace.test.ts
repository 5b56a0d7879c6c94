// Rotation with a grace window end to end (issue 27, docs/decisions.md OAK-38): a real kube-apiserver
// wired as manifests/apiserver/ says (its token cache TTL included), vgate with its webhooks, the
// plugin as a subprocess and kubectl. `kubectl accesskey rotate --grace` keeps the old key working
// until the deadline and not after it, in plain and hashed storage; only the old key's digest is
// stored; a disabled key is refused at once within a window; no client can plant or extend a
// window; a key can rotate itself when RBAC lets it update its own object. Timings are printed
// (they are the closing figures), never asserted beyond the 1 s bound every key change has.

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { plugin } from "../../plugin/plugin-run.js";
import {
  manifestTokenCacheTtl,
  startVgateCluster,
  type VgateCluster,
} from "../../support/cluster.js";
import { httpsRequest } from "../../support/https-client.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../../support/kube/binaries.js";
import { KubeTestClient } from "../../support/kube/kube-client.js";
import {
  clusterRole,
  clusterRoleBinding,
  role,
  roleBindingToUser,
  waitForAccess,
} from "../../support/kube/rbac.js";
import { HAVE_ANY_KUBECTL, ANY_KUBECTL_SKIP_REASON, kubectlFor } from "../../support/kubectl.js";
import { metricValue } from "../../support/prometheus-text.js";
import { until, untilValue } from "../../support/until.js";

const USER = "rotator";
const NAMESPACE = "rotation";
const CONFIGMAP = "rotation-cm";
const OBJECT_PATH = `/api/v1/namespaces/${NAMESPACE}/configmaps/${CONFIGMAP}`;
/** Every key change takes effect within this long (revocation.test.ts). */
const WITHIN_MS = 1000;
/**
 * The grace of the timed rotation: longer than kube-apiserver's 10 s cache of logins, so the old
 * key logs in afresh within the window, with time for a few kubectl runs on a loaded machine.
 */
const GRACE_S = 15;
const MAX_GRACE = "1h";

const EVERYTHING_ROLE = `roles:
  - name: everything
    rules:
      - apiGroups: ["*"]
        resources: ["*"]
        verbs: ["*"]
`;

const sha256 = (s: string): string => `sha256:${createHash("sha256").update(s).digest("hex")}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const SKIP = !HAVE_KUBE ? KUBE_SKIP_REASON : !HAVE_ANY_KUBECTL ? ANY_KUBECTL_SKIP_REASON : "";

for (const storage of ["plain", "hashed"] as const) {
  (SKIP === "" ? describe : describe.skip)(
    `kubectl accesskey rotate --grace, ${storage} storage${SKIP}`,
    function () {
      this.timeout(120_000);
      let cluster: VgateCluster;
      let dir: string;
      let keysPath: string;
      let n = 0;

      before(async () => {
        dir = await mkdtemp(join(tmpdir(), "vgate-rotation-"));
        // A scope role that allows everything: a key scoped to it may update only its own object
        // (credential-requests.ts), since no role names access keys explicitly.
        const roles = join(dir, "roles.yaml");
        await writeFile(roles, EVERYTHING_ROLE);
        cluster = await startVgateCluster({
          tokenCacheTtl: manifestTokenCacheTtl(),
          vgateArgs: [
            ...(storage === "hashed" ? ["--key-storage=hashed"] : []),
            `--max-rotation-grace=${MAX_GRACE}`,
            `--roles-file=${roles}`,
            // status.previousKey (the old key's last login) is written within a third of a second.
            "--activity-write-interval=2s",
          ],
        });
        keysPath = `/apis/${cluster.group}/v1/ownedaccesskeys`;
        const { admin } = cluster;
        await admin.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: NAMESPACE } });
        await admin.apply({
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: CONFIGMAP, namespace: NAMESPACE },
          data: { greeting: "hello" },
        });
        const get = { apiGroups: [""], resources: ["configmaps"], verbs: ["get"] };
        await admin.apply(role("reader", NAMESPACE, [get]));
        await admin.apply(roleBindingToUser("reader", NAMESPACE, "reader", USER));
      });

      after(async () => {
        await cluster?.stop();
        if (dir) await rm(dir, { recursive: true, force: true });
      });

      const admin = (args: string[], input?: string) =>
        plugin(args, { kubeconfig: cluster.kubeconfigPath, ...(input ? { input } : {}) });

      /** A kubeconfig that logs in with `key` (of the key `name`) alone, made by the plugin. */
      async function kubeconfigFor(name: string, key: string): Promise<string> {
        const made = await admin(["kubeconfig", name, "--key-file", "-"], key);
        assert.equal(made.code, 0, made.stderr);
        const file = join(dir, `${sha256(key).slice(7, 19)}.kubeconfig`);
        await writeFile(file, made.stdout, { mode: 0o600 });
        return file;
      }

      /** kubectl get configmap with `key`: its exit code and stderr. */
      async function read(name: string, key: string) {
        const file = await kubeconfigFor(name, key);
        const kubectl = kubectlFor(file, join(dir, "kubectl-cache"));
        return kubectl(["-n", NAMESPACE, "get", "configmap", CONFIGMAP, "-o", "name"]);
      }

      const works = async (name: string, key: string) => (await read(name, key)).code === 0;

      async function newKey(...flags: string[]): Promise<{ name: string; key: string }> {
        const name = `ci-${n++}`;
        const created = await admin(["create", name, "--user", USER, ...flags]);
        assert.equal(created.code, 0, created.stderr);
        const key = created.stdout.trim();
        await until(() => works(name, key), "the new key logs in");
        return { name, key };
      }

      async function stored(name: string): Promise<Record<string, unknown>> {
        const res = await cluster.admin.request("GET", `${keysPath}/${name}`);
        assert.equal(res.status, 200);
        return res.body as Record<string, unknown>;
      }

      async function previousKeyLogins(name: string): Promise<number> {
        const page = (await httpsRequest(`${cluster.vgateUrl}/metrics`, { ca: cluster.caPem }))
          .text;
        return metricValue(page, "vgate_access_key_previous_key_logins_total", { name });
      }

      /**
       * Sends the GET with `key` back to back from now until `stopAt`: when each went, and its
       * status.
       */
      async function loop(key: string, stopAt: number) {
        const client = new KubeTestClient(cluster.url, { ca: cluster.caPem, token: key });
        const samples: { sentAt: number; status: number; message: string }[] = [];
        try {
          while (Date.now() < stopAt) {
            const sentAt = Date.now();
            const res = await client.request<{ message?: string }>("GET", OBJECT_PATH);
            samples.push({ sentAt, status: res.status, message: res.body.message ?? "" });
          }
        } finally {
          client.close();
        }
        return samples;
      }

      it("both keys log in during the window, only the new one after it", async () => {
        const { name, key: old } = await newKey();
        const rotateAt = Date.now();
        const rotated = await admin(["rotate", name, "--grace", `${GRACE_S}s`]);
        const rotatedAt = Date.now();
        assert.equal(rotated.code, 0, rotated.stderr);
        const key = rotated.stdout.trim();
        assert.notEqual(key, old);
        const said = /the previous key works until (\S+)/.exec(rotated.stderr);
        assert.ok(said, rotated.stderr);
        const deadline = Date.parse(said[1]!);
        // The deadline is the grace after the rotation (second precision).
        assert.ok(deadline >= rotateAt + GRACE_S * 1000 - 1000, "deadline not before the grace");
        assert.ok(deadline <= rotatedAt + GRACE_S * 1000, "deadline not after the grace");

        // Stored: the old key's digest and the deadline; never the old key; no annotation left.
        const object = await stored(name);
        const spec = object.spec as Record<string, unknown>;
        assert.deepEqual(spec.previousKey, { key: sha256(old), until: said[1] });
        assert.equal(spec.key, storage === "hashed" ? sha256(key) : key);
        assert.ok(!JSON.stringify(object).includes(old), "the old key is not stored");
        const annotations = (object.metadata as { annotations?: object }).annotations ?? {};
        assert.ok(
          !JSON.stringify(annotations).includes("rotation-grace"),
          "the annotation is gone",
        );
        const described = await admin(["describe", name]);
        assert.match(
          described.stdout,
          /Previous Key:\s+still logs in until \S+ \(in \d+s\) \(never shown\); not used since the rotation\n/,
        );
        assert.ok(!described.stdout.includes(sha256(old).slice(7)), "describe shows no digest");

        // During the window: the new key logs in, and so does the old one, through kubectl.
        const before = await previousKeyLogins(name);
        await until(() => works(name, key), "the new key logs in");
        const newKeyWorksAt = Date.now();
        const oldDuring = await read(name, old);
        const checkedAt = Date.now();
        assert.ok(
          checkedAt < deadline,
          `the check ended ${checkedAt - deadline} ms after the deadline; a slower machine needs a longer GRACE_S`,
        );
        assert.equal(oldDuring.code, 0, oldDuring.stderr);
        // Logged (the key's name and user, never the key) and counted, at the old key's next
        // TokenReview: kube-apiserver caches a login for 10 s (kube-apiserver.flags), so the old
        // key is used until its cached login from before the rotation has run out.
        while ((await previousKeyLogins(name)) === before) {
          assert.ok(Date.now() < deadline - 1000, "the old key logged in afresh within the window");
          const again = await read(name, old);
          assert.equal(again.code, 0, again.stderr);
        }
        const countedAt = Date.now();
        // The log is written asynchronously: read it until the line is there.
        let log = "";
        const previousKeyLine = () =>
          log
            .split("\n")
            .find((l) => l.includes(`"accessKey":"${name}"`) && l.includes("previous key"));
        await until(async () => {
          log = await readFile(cluster.vgateLog, "utf8");
          return previousKeyLine() !== undefined;
        }, "a log line names the key");
        const line = previousKeyLine()!;
        assert.match(line, new RegExp(`"user":"${USER}"`));
        assert.ok(!log.includes(old) && !log.includes(key), "the log never holds a key");

        // Across the deadline: the old key, sent back to back (kube-apiserver caches its login),
        // is refused from at most WITHIN_MS after the deadline; the new key goes on working.
        await sleep(Math.max(0, deadline - 1500 - Date.now()));
        const samples = await loop(old, deadline + WITHIN_MS + 1000);
        const lastOk = samples.filter((s) => s.status === 200).at(-1);
        assert.ok(lastOk, "the old key worked up to the deadline");
        assert.ok(
          lastOk.sentAt - deadline < WITHIN_MS,
          `the old key still worked ${lastOk.sentAt - deadline} ms after the deadline`,
        );
        const after = samples.filter((s) => s.sentAt > lastOk.sentAt);
        assert.ok(after.length > 0 && after.every((s) => s.status === 401 || s.status === 403));
        const firstRefused = after[0]!;
        assert.equal((await read(name, old)).code, 1, "kubectl with the old key is refused");
        assert.equal((await read(name, key)).code, 0, "the new key still works");

        // The owner sees it where they look: status.previousKey names the window and holds the old
        // key's last login (never a key or a digest), and describe says when it was last used.
        // Only status is read back (a failure prints it): spec holds the key in plain storage.
        const withUse = await untilValue(
          "status.previousKey is written after the old key's login",
          async () => (await stored(name)).status as { previousKey?: unknown } | undefined,
          (status) => status?.previousKey !== undefined,
          20_000,
        );
        const status = withUse as { previousKey: { until: string; lastActivity: string } };
        assert.deepEqual(Object.keys(status.previousKey).sort(), ["lastActivity", "until"]);
        assert.equal(status.previousKey.until, said[1]);
        const lastUse = Date.parse(status.previousKey.lastActivity);
        assert.ok(lastUse >= Math.floor(rotatedAt / 1000) * 1000 - 1000, "used after the rotation");
        assert.ok(lastUse < deadline, "used within the window");
        const statusText = JSON.stringify(withUse);
        assert.ok(!statusText.includes(old) && !statusText.includes(key), "no key in status");
        assert.ok(!statusText.includes(sha256(old).slice(7)), "no digest in status");
        const describedAfter = await admin(["describe", name]);
        assert.equal(describedAfter.code, 0, describedAfter.stderr);
        assert.match(
          describedAfter.stdout,
          /Previous Key:\s+refused since \S+ \(\d+s ago\) \(never shown\); last used \d+s ago\n/,
        );
        assert.ok(
          !describedAfter.stdout.includes(sha256(old).slice(7)),
          "describe shows no digest",
        );
        console.log(
          `      [${storage}] rotate took ${rotatedAt - rotateAt} ms; the new key worked ${newKeyWorksAt - rotatedAt} ms after it; ` +
            `the old key worked ${checkedAt - rotatedAt} ms into the ${GRACE_S} s window, logged in afresh (counted) ${countedAt - rotatedAt} ms into it, ` +
            `and last succeeded ${lastOk.sentAt - deadline} ms after the deadline; ` +
            `refused ${firstRefused.sentAt - deadline} ms after the deadline (${firstRefused.status}: ${firstRefused.message || "Unauthorized"})`,
        );
      });

      it("a disabled key is refused at once within a window, old and new key alike", async () => {
        const { name, key: old } = await newKey();
        const rotated = await admin(["rotate", name, "--grace", "1h"]);
        assert.equal(rotated.code, 0, rotated.stderr);
        const key = rotated.stdout.trim();
        await until(() => works(name, key), "the new key logs in");
        assert.ok(await works(name, old), "the old key works in its window");
        const disabled = await admin(["disable", name]);
        assert.equal(disabled.code, 0, disabled.stderr);
        await sleep(WITHIN_MS);
        for (const k of [old, key]) {
          const res = await read(name, k);
          assert.equal(res.code, 1, "refused");
          // Cached by kube-apiserver: vgate's 403 with its reason; or not cached: 401.
          assert.match(res.stderr, /access key disabled|Unauthorized/);
        }
      });

      it("no client can plant or extend a window, and a grace above the maximum is refused", async () => {
        const { name } = await newKey();
        const kubectl = kubectlFor(cluster.kubeconfigPath, join(dir, "kubectl-cache-admin"));
        const plant = JSON.stringify({
          spec: { previousKey: { key: sha256("guessed"), until: "2099-01-01T00:00:00Z" } },
        });
        const planted = await kubectl(["patch", "oak", name, "--type", "merge", "-p", plant]);
        assert.equal(planted.code, 1, planted.stdout);
        assert.match(planted.stderr, /spec\.previousKey: Forbidden: is set by vgate on a rotation/);

        const rotated = await admin(["rotate", name, "--grace", "30m"]);
        assert.equal(rotated.code, 0, rotated.stderr);
        const extend = JSON.stringify({ spec: { previousKey: { until: "2099-01-01T00:00:00Z" } } });
        const extended = await kubectl(["patch", "oak", name, "--type", "merge", "-p", extend]);
        assert.equal(extended.code, 1, extended.stdout);
        assert.match(extended.stderr, /spec\.previousKey: Forbidden/);
        // Asking through the annotation without a rotation is refused too.
        const annotated = await kubectl([
          "annotate",
          "oak",
          name,
          "accesskey.loft.sh/rotation-grace-seconds=60",
        ]);
        assert.equal(annotated.code, 1, annotated.stdout);
        assert.match(annotated.stderr, /spec\.key must change in the same update/);

        const tooLong = await admin(["rotate", name, "--grace", "2h"]);
        assert.equal(tooLong.code, 1, tooLong.stdout);
        assert.match(tooLong.stderr, /must be at most 3600 seconds.*--max-rotation-grace/);
        assert.equal(tooLong.stdout, "", "no key printed for a refused rotation");
      });

      it("a scoped key rotates itself with its own kubeconfig when RBAC lets it update its object", async () => {
        const { name, key: old } = await newKey("--role", "everything");
        const self = clusterRole(`rotate-${name}`, [
          {
            apiGroups: [cluster.group],
            resources: ["ownedaccesskeys"],
            verbs: ["get", "update"],
            resourceNames: [name],
          },
        ]);
        await cluster.admin.apply(self);
        await cluster.admin.apply(
          clusterRoleBinding(`rotate-${name}`, `rotate-${name}`, [
            { apiGroup: "rbac.authorization.k8s.io", kind: "User", name: USER },
          ]),
        );
        const update = { verb: "update", group: cluster.group, resource: "ownedaccesskeys", name };
        await waitForAccess(cluster.admin, { user: USER, resourceAttributes: update }, true);
        const own = await kubeconfigFor(name, old);
        const first = await plugin(["rotate", name, "--grace", "1h"], { kubeconfig: own });
        assert.equal(first.code, 0, first.stderr);
        const key = first.stdout.trim();
        await until(() => works(name, key), "the new key logs in");
        assert.ok(await works(name, old), "the old key works in its window");
        // The job now holds the new key, and rotates again without a window.
        const next = await plugin(["rotate", name], { kubeconfig: await kubeconfigFor(name, key) });
        assert.equal(next.code, 0, next.stderr);
        const third = next.stdout.trim();
        await until(() => works(name, third), "the third key logs in");
        await sleep(WITHIN_MS);
        assert.equal((await read(name, key)).code, 1, "the second key is refused");
        assert.equal((await read(name, old)).code, 1, "the first key is refused");
        // It may not update another key: RBAC says no, and so does its scope (vgate's reason).
        const other = await newKey();
        const foreign = await plugin(["rotate", other.name], {
          kubeconfig: await kubeconfigFor(name, third),
        });
        assert.equal(foreign.code, 1, foreign.stdout);
        assert.match(foreign.stderr, /forbidden/i);
      });
    },
  );
}
