// kubectl accesskey prune and list --expiring as subprocesses, through kubectl's plugin discovery,
// against the real kube-apiserver of the test rig (wired to a real `vgate serve`): keys made with a
// TTL of one second, waited for until they are expired, and then exactly the caller's expired keys
// are deleted (everyone's with --all), dry runs delete nothing, and a delete whose preconditions
// no longer hold leaves the key alone.

import assert from "node:assert/strict";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../support/kube/binaries.js";
import { HAVE_KUBECTL, KUBECTL_SKIP_REASON } from "../support/kubectl.js";
import { AccessKeyApi, type KubeObject } from "../../plugin/src/kube/api.js";
import { connect } from "../../plugin/src/kube/connect.js";
import { KubeError } from "../../webhook/src/shared/status.js";
import { ACTIVITY_MARGIN_MS, pruneKey, prunable } from "../../plugin/src/commands/prune.js";
import { pluginCluster, RUN_ID, type PluginCluster } from "./plugin-cluster.js";
import { accesskey, kubectl, plugin } from "./plugin-run.js";

const KIND = "ownedaccesskey.management.loft.sh";
const RESOURCE = "ownedaccesskeys.management.loft.sh";
const why = KUBE_SKIP_REASON || KUBECTL_SKIP_REASON;

/** The plugin's own API client, logged in with `kubeconfig`. */
async function apiAs(kubeconfig: string): Promise<AccessKeyApi> {
  const connection = await connect({ kubeconfig }, {});
  return new AccessKeyApi(connection, {
    groupDomain: "loft.sh",
    timeoutMs: 10_000,
    warn: () => undefined,
  });
}

(HAVE_KUBE && HAVE_KUBECTL ? describe : describe.skip)(
  `kubectl accesskey prune and list --expiring on a real cluster${why}`,
  function () {
    this.timeout(90_000);
    let env: PluginCluster;
    let pat: string;
    let quinn: string;
    const patName = `pat-${RUN_ID}`;
    const quinnName = `quinn-${RUN_ID}`;
    const made: string[] = [];
    const name = (base: string) => {
      const n = `${base}-${RUN_ID}`;
      made.push(n);
      return n;
    };
    const exists = async (n: string): Promise<boolean> =>
      (await env.cluster.admin.get({
        apiVersion: `${env.cluster.group}/v1`,
        kind: "OwnedAccessKey",
        metadata: { name: n },
      })) !== null;
    const names = (out: string) => out.trimEnd().split("\n").filter(Boolean).sort();
    /** Polls `list` until its STATUS says Expired for every key of `want`. */
    const untilExpired = async (kubeconfig: string, args: string[], want: string[]) => {
      const deadline = Date.now() + 30_000;
      for (;;) {
        const r = await accesskey(kubeconfig, ["list", "--no-headers", ...args]);
        assert.equal(r.code, 0, r.stderr);
        const expired = (n: string) => new RegExp(`^${n} .* Expired `, "m").test(r.stdout);
        if (want.every(expired)) return;
        assert.ok(Date.now() < deadline, `not expired in time: ${r.stdout}`);
        await new Promise((r) => setTimeout(r, 300));
      }
    };

    before(async function () {
      this.timeout(120_000);
      env = await pluginCluster();
      pat = await env.userKubeconfig(patName);
      quinn = await env.userKubeconfig(quinnName);
    });
    after(async () => env && (await env.cleanup(made)));

    it("deletes exactly the caller's expired keys; dry runs delete nothing; --all: everyone's", async () => {
      const gone1 = name("gone1");
      const gone2 = name("gone2");
      const forever = name("forever");
      const hour = name("hour");
      const theirs = name("theirs");
      // Expired on paper, but vgate may know of a use it has not written yet: kept for now.
      const idle = name("idle");
      for (const [kc, n, ...flags] of [
        [pat, gone1, "--ttl", "1s"],
        [pat, gone2, "--ttl", "1s"],
        [pat, forever],
        [pat, hour, "--ttl", "1h"],
        [pat, idle, "--ttl", "1s", "--ttl-after-last-activity"],
        [quinn, theirs, "--ttl", "1s"],
      ] as const) {
        const r = await accesskey(kc, ["create", n, ...flags]);
        assert.equal(r.code, 0, r.stderr);
      }
      await untilExpired(pat, [], [gone1, gone2, idle]);
      await untilExpired(quinn, [], [theirs]);

      // list --expiring: the keys that expire within the duration, the expired ones included.
      const soon = await accesskey(pat, ["list", "--expiring", "2h", "-o", "name"]);
      assert.equal(soon.code, 0, soon.stderr);
      assert.deepEqual(
        names(soon.stdout),
        [gone1, gone2, hour, idle].map((n) => `${KIND}/${n}`).sort(),
      );
      const table = await accesskey(pat, ["list", "--expiring", "1m"]);
      assert.match(table.stdout, new RegExp(`^${gone1} +.* Expired `, "m"));
      assert.ok(!table.stdout.includes(hour), table.stdout);
      const selected = await accesskey(pat, [
        "list",
        "--expiring",
        "2h",
        "--field-selector",
        `metadata.name=${hour}`,
        "-o",
        "jsonpath={.items[*].metadata.name}",
      ]);
      assert.equal(selected.stdout, hour);

      // Client dry run: kubectl delete's words for each key, nothing sent.
      const client = await accesskey(pat, ["prune", "--dry-run=client"]);
      assert.equal(client.code, 0, client.stderr);
      const theirsLine = await kubectl(["delete", RESOURCE, gone1, "--dry-run=client"], {
        kubeconfig: pat,
      });
      assert.equal(theirsLine.code, 0, theirsLine.stderr);
      assert.equal(client.stdout.split("\n")[0], theirsLine.stdout.trimEnd());
      assert.deepEqual(names(client.stdout), [
        `${KIND} "${gone1}" deleted (dry run)`,
        `${KIND} "${gone2}" deleted (dry run)`,
      ]);
      // Server dry run: the API server (and vgate) see each delete, and nothing is deleted.
      const server = await accesskey(pat, ["prune", "--dry-run=server", "-o", "name"]);
      assert.equal(server.code, 0, server.stderr);
      assert.deepEqual(names(server.stdout), [`${KIND}/${gone1}`, `${KIND}/${gone2}`]);
      for (const n of [gone1, gone2, forever, hour, theirs]) assert.ok(await exists(n), n);

      // -l narrows: a label only on gone2.
      const labelled = await kubectl(["label", RESOURCE, gone2, `prune-test=${RUN_ID}`], {
        kubeconfig: env.admin,
      });
      assert.equal(labelled.code, 0, labelled.stderr);
      const one = await accesskey(pat, ["prune", "-l", `prune-test=${RUN_ID}`, "--wait"]);
      assert.equal(one.code, 0, one.stderr);
      assert.equal(one.stdout, `${KIND} "${gone2}" deleted\n`);
      assert.equal(await exists(gone2), false);

      // The caller's expired keys, and nobody else's.
      const pruned = await accesskey(pat, ["prune", "--wait", "--timeout", "30s"]);
      assert.equal(pruned.code, 0, pruned.stderr);
      assert.equal(pruned.stdout, `${KIND} "${gone1}" deleted\n`);
      assert.deepEqual(await Promise.all([gone1, forever, hour, idle, theirs].map(exists)), [
        false,
        true,
        true,
        true,
        true,
      ]);
      const again = await accesskey(pat, ["prune"]);
      assert.deepEqual([again.code, again.stdout, again.stderr], [0, "No resources found\n", ""]);

      // --all (the admin): everyone's, here narrowed to quinn's keys.
      const all = await accesskey(env.admin, [
        "prune",
        "--all",
        "--field-selector",
        `spec.user=${quinnName}`,
        "-o",
        "name",
      ]);
      assert.equal(all.code, 0, all.stderr);
      assert.equal(all.stdout, `${KIND}/${theirs}\n`);
      assert.equal(await exists(forever), true);
    });

    it("a key that counts activity is pruned only 5 minutes after it expired on paper", () => {
      const created = Date.parse("2026-11-29T12:00:00Z");
      const key = {
        metadata: { name: "k", creationTimestamp: "2026-11-29T12:00:00Z" },
        spec: { ttl: 60, ttlAfterLastActivity: true },
      };
      const expired = created + 60_000;
      assert.equal(prunable(key, expired + ACTIVITY_MARGIN_MS - 1000), false);
      assert.equal(prunable(key, expired + ACTIVITY_MARGIN_MS), true);
      const plain = { ...key, spec: { ttl: 60 } };
      assert.equal(prunable(plain, expired - 1), false);
      assert.equal(prunable(plain, expired), true);
    });

    it("refuses what it cannot do: arguments, -o other than name, --expiring with -w", async () => {
      const args = await accesskey(pat, ["prune", "some-key"]);
      assert.deepEqual(
        [args.code, args.stderr],
        [1, "error: prune takes no arguments (got some-key); use delete NAME\n"],
      );
      const yaml = await accesskey(pat, ["prune", "-o", "yaml"]);
      assert.deepEqual(
        [yaml.code, yaml.stderr],
        [1, "error: unexpected -o output mode: yaml. We only support '-o name'\n"],
      );
      const watch = await plugin(["list", "--expiring", "7d", "-w"], { kubeconfig: pat });
      assert.deepEqual(
        [watch.code, watch.stderr],
        [1, "error: --expiring cannot be used with --watch or --watch-only\n"],
      );
    });

    it("a key renewed or replaced after the list is kept; one only annotated is still pruned", async () => {
      const renewed = name("renewed");
      const replaced = name("replaced");
      const touched = name("touched");
      for (const n of [renewed, replaced, touched]) {
        assert.equal((await accesskey(pat, ["create", n, "--ttl", "1s"])).code, 0);
      }
      await untilExpired(pat, [], [renewed, replaced, touched]);
      const api = await apiAs(pat);
      try {
        // The keys as prune listed them, expired.
        const listed = await Promise.all([renewed, replaced, touched].map((n) => api.get(n)));
        // Then: one gets a TTL of a day, one is deleted and made anew, one only annotated.
        const patched = await kubectl(
          ["patch", RESOURCE, renewed, "--type=merge", "-p", '{"spec":{"ttl":86400}}'],
          { kubeconfig: env.admin },
        );
        assert.equal(patched.code, 0, patched.stderr);
        assert.equal((await accesskey(pat, ["delete", replaced, "--wait"])).code, 0);
        assert.equal((await accesskey(pat, ["create", replaced, "--ttl", "1s"])).code, 0);
        assert.equal((await accesskey(pat, ["annotate", touched, "example.com/seen=yes"])).code, 0);
        const now = () => Date.now();
        const outcomes = [];
        for (const key of listed) outcomes.push(await pruneKey(api, key, "none", now));
        assert.deepEqual(outcomes, [
          "it is no longer expired",
          "it was replaced by a new key",
          "deleted",
        ]);
        assert.equal(await exists(renewed), true);
        assert.equal(await exists(replaced), true);
      } finally {
        api.close();
      }
    });

    it("a delete with preconditions leaves a key that changed (or a dry run) in place", async () => {
      const n = name("pre");
      assert.equal((await accesskey(pat, ["create", n, "--ttl", "1s"])).code, 0);
      const api = await apiAs(pat);
      try {
        const listed = await api.get(n);
        const uid = listed.metadata?.["uid"] as string;
        const resourceVersion = listed.metadata?.resourceVersion;
        // Changed after it was listed (here: annotated), as a renewal would change it.
        assert.equal((await accesskey(pat, ["annotate", n, "example.com/renewed=yes"])).code, 0);
        await assert.rejects(
          api.delete(n, { preconditions: { uid, resourceVersion } }),
          (err: unknown) => err instanceof KubeError && err.code === 409,
        );
        await assert.rejects(
          api.delete(n, { preconditions: { uid: "00000000-0000-0000-0000-000000000000" } }),
          (err: unknown) => err instanceof KubeError && err.code === 409,
        );
        const now = await api.get(n);
        const current = { uid, resourceVersion: now.metadata?.resourceVersion };
        await api.delete(n, { preconditions: current, dryRun: true });
        assert.equal(await exists(n), true, "a dry run deletes nothing");
        await api.delete(n, { preconditions: current });
        const after: unknown = await api.get(n).catch((err: unknown) => err);
        const gone = after instanceof KubeError && after.code === 404;
        const ending = !gone && !!(after as KubeObject).metadata?.["deletionTimestamp"];
        assert.ok(gone || ending, "deleted, or waiting for its finalizers");
      } finally {
        api.close();
      }
    });
  },
);
