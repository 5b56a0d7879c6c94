// Hashed key storage end to end: a cluster whose vgate runs with --key-storage=hashed (as the install
// will default to), a real kube-apiserver wired with manifests/apiserver/, and the plugin as a
// subprocess. etcd and every reader of the CRD see only sha256:<hex>; the key the client made logs
// in; a rotated key replaces the old one; a key the server would have to make up, and a key another
// object already has, are refused.

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { plugin } from "../../plugin/plugin-run.js";
import { startVgateCluster, type VgateCluster } from "../../support/cluster.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../../support/kube/binaries.js";
import { until } from "../../support/until.js";

const sha256 = (s: string): string => `sha256:${createHash("sha256").update(s).digest("hex")}`;

(HAVE_KUBE ? describe : describe.skip)(
  `--key-storage=hashed, end to end${KUBE_SKIP_REASON}`,
  function () {
    this.timeout(90_000);
    let cluster: VgateCluster;
    let dir: string;

    before(async () => {
      cluster = await startVgateCluster({ vgateArgs: ["--key-storage=hashed"] });
      dir = await mkdtemp(join(tmpdir(), "vgate-hashed-"));
    });
    after(async () => {
      await cluster?.stop();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    const admin = (args: string[], input?: string) =>
      plugin(args, { kubeconfig: cluster.kubeconfigPath, ...(input ? { input } : {}) });

    async function storedKey(name: string): Promise<string> {
      const res = await cluster.admin.request(
        "GET",
        `/apis/${cluster.group}/v1/ownedaccesskeys/${name}`,
      );
      return (res.body as { spec: { key: string } }).spec.key;
    }

    async function whoami(key: string): Promise<{ code: number; stdout: string; stderr: string }> {
      const made = await admin(["kubeconfig", "ci", "--key-file", "-"], key);
      assert.equal(made.code, 0, made.stderr);
      const file = join(dir, `${sha256(key).slice(7, 19)}.kubeconfig`);
      await writeFile(file, made.stdout, { mode: 0o600 });
      return plugin(["whoami", "-o", "json"], { kubeconfig: file });
    }

    it("stores only the hash of the key the plugin made, and that key logs in", async () => {
      const created = await admin(["create", "ci"]);
      assert.equal(created.code, 0, created.stderr);
      const key = created.stdout.trim();
      assert.equal(await storedKey("ci"), sha256(key));
      const shown = await admin(["get", "ci", "-o", "json", "--show-key"]);
      assert.ok(!shown.stdout.includes(key), "no reader can get the key back");
      const me = await whoami(key);
      assert.equal(me.code, 0, me.stderr);
      assert.equal(JSON.parse(me.stdout).status.userInfo.username, "admin");
    });

    it("a rotated key is stored hashed, logs in, and the old key stops at once", async () => {
      // A first rotation gives a key this test knows, and makes kube-apiserver cache its login.
      const old = (await admin(["rotate", "ci"])).stdout.trim();
      await until(async () => (await whoami(old)).code === 0, "the key to rotate logs in");
      const before = await storedKey("ci");
      const rotated = await admin(["rotate", "ci"]);
      assert.equal(rotated.code, 0, rotated.stderr);
      const key = rotated.stdout.trim();
      assert.equal(await storedKey("ci"), sha256(key));
      assert.notEqual(before, sha256(key));
      await until(async () => (await whoami(key)).code === 0, "the new key logs in");
      // kube-apiserver still has the old value cached as logged in (10 s at least); vgate's
      // authorization webhook refuses it by its key-id in the meantime.
      const stale = await whoami(old);
      assert.equal(stale.code, 1, stale.stdout);
      assert.match(stale.stderr, /forbidden: .*access key rotated since this login/);
    });

    it("refuses a key the server would have to make up, and a key another object has", async () => {
      const raw = await cluster.admin.request("POST", `/apis/${cluster.group}/v1/ownedaccesskeys`, {
        apiVersion: `${cluster.group}/v1`,
        kind: "OwnedAccessKey",
        metadata: { name: "nokey" },
        spec: {},
      });
      assert.equal(raw.status, 422, JSON.stringify(raw.body));
      assert.match(JSON.stringify(raw.body), /spec\.key: Required value: vgate stores keys hashed/);
      const taken = "taken-key-0123456789abcdefghijklmnopqrstuv";
      const first = await cluster.admin.request(
        "POST",
        `/apis/${cluster.group}/v1/ownedaccesskeys`,
        {
          apiVersion: `${cluster.group}/v1`,
          kind: "OwnedAccessKey",
          metadata: { name: "first" },
          spec: { key: taken },
        },
      );
      assert.equal(first.status, 201, JSON.stringify(first.body));
      let attempt = 0;
      await until(async () => {
        const dup = await cluster.admin.request(
          "POST",
          `/apis/${cluster.group}/v1/ownedaccesskeys`,
          {
            apiVersion: `${cluster.group}/v1`,
            kind: "OwnedAccessKey",
            // A fresh name each time: an attempt before vgate saw "first" would be stored.
            metadata: { name: `second-${attempt++}` },
            spec: { key: taken },
          },
        );
        return (
          dup.status === 422 &&
          /another access key already has this key/.test(JSON.stringify(dup.body))
        );
      }, "the duplicate is refused once vgate's index has the first key");
    });
  },
);
