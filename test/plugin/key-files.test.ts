// Files that hold a key (docs/decisions.md OAK-31), with the plugin as a subprocess against the real
// test cluster: `create --kubeconfig-out` onto an existing 0644 file leaves a 0600 file; a link or
// a directory at the path, or a missing directory, is refused before any key exists; a write that
// fails after the key was created (the path turned into a directory while the API server was
// slow, through a fault proxy) prints the key and how to make the kubeconfig.

import assert from "node:assert/strict";
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../support/kube/binaries.js";
import type { FaultProxy } from "../support/kube/fault-proxy.js";
import { pluginCluster, RUN_ID, type PluginCluster } from "./plugin-cluster.js";
import { plugin } from "./plugin-run.js";
import { suiteTempDir } from "../support/temp-dir.js";

const KEY_LINE = /^[A-Za-z0-9_-]{43}\n$/;

(HAVE_KUBE ? describe : describe.skip)(
  `kubectl accesskey: files that hold a key${KUBE_SKIP_REASON}`,
  function () {
    this.timeout(90_000);
    let env: PluginCluster;
    const made: string[] = [];
    const name = (base: string) => {
      const n = `${base}-${RUN_ID}`;
      made.push(n);
      return n;
    };
    const dir = suiteTempDir("accesskey-files-");
    const exists = async (n: string) =>
      (await env.cluster.admin.get({
        apiVersion: `${env.cluster.group}/v1`,
        kind: "OwnedAccessKey",
        metadata: { name: n },
      })) !== null;
    const leftovers = (d: string) => readdirSync(d).filter((f) => f.endsWith(".tmp"));

    before(async function () {
      this.timeout(120_000);
      env = await pluginCluster();
    });
    after(async () => env && (await env.cleanup(made)));

    it("an existing 0644 file is replaced by a 0600 file holding the kubeconfig", async () => {
      const out = join(dir, "existing.kubeconfig");
      writeFileSync(out, "old content\n");
      chmodSync(out, 0o644);
      const r = await plugin(["create", name("existing"), "--kubeconfig-out", out], {
        kubeconfig: env.admin,
      });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, KEY_LINE);
      assert.equal(statSync(out).mode & 0o777, 0o600);
      const text = readFileSync(out, "utf8");
      assert.ok(text.includes(`token: "${r.stdout.trim()}"`), text);
      assert.ok(!text.includes("old content"));
      assert.deepEqual(leftovers(dir), []);
    });

    it("a symbolic link at the path is refused before the key exists; its target is untouched", async () => {
      const target = join(dir, "link-target");
      writeFileSync(target, "someone else's file\n");
      chmodSync(target, 0o644);
      const link = join(dir, "link.kubeconfig");
      symlinkSync(target, link);
      const n = name("link");
      const r = await plugin(["create", n, "--kubeconfig-out", link], { kubeconfig: env.admin });
      assert.equal(r.code, 1);
      assert.equal(r.stdout, "");
      assert.equal(
        r.stderr,
        `error: cannot write --kubeconfig-out "${link}": it is a symbolic link, which is not followed for a file that holds a key; give the path it points to, or remove the link\n`,
      );
      assert.equal(readFileSync(target, "utf8"), "someone else's file\n");
      assert.equal(statSync(target).mode & 0o777, 0o644);
      assert.ok(lstatSync(link).isSymbolicLink());
      assert.equal(await exists(n), false, "no key was created");
      assert.deepEqual(leftovers(dir), []);
    });

    it("a missing or unwritable directory, or a directory at the path: a clear error, and no key", async () => {
      const missing = join(dir, "nowhere", "ci.kubeconfig");
      const n = name("nodir");
      const r = await plugin(["create", n, "--kubeconfig-out", missing], {
        kubeconfig: env.admin,
      });
      assert.equal(r.code, 1);
      assert.equal(
        r.stderr,
        `error: cannot write --kubeconfig-out "${missing}": the directory "${join(dir, "nowhere")}" does not exist; create it first, or give a path in a directory that exists\n`,
      );
      assert.ok(!r.stderr.includes("ENOENT"));
      assert.equal(await exists(n), false);
      // A directory nobody may write to, root included (these tests run as root): sysfs.
      if (existsSync("/sys/kernel")) {
        const denied = "/sys/kernel/ci.kubeconfig";
        const p = await plugin(["create", n, "--kubeconfig-out", denied], {
          kubeconfig: env.admin,
        });
        assert.equal(p.code, 1);
        assert.equal(
          p.stderr,
          `error: cannot write --kubeconfig-out "${denied}": permission denied (in "/sys/kernel"); give a path in a directory you can write\n`,
        );
        assert.equal(await exists(n), false);
      }
      const asDir = join(dir, "a-directory");
      mkdirSync(asDir);
      const d = await plugin(["create", n, "--kubeconfig-out", asDir], { kubeconfig: env.admin });
      assert.equal(d.code, 1);
      assert.equal(
        d.stderr,
        `error: cannot write --kubeconfig-out "${asDir}": it is a directory; give the path of a file (in that directory or elsewhere)\n`,
      );
      assert.equal(await exists(n), false);
    });

    it("--kubeconfig-out - or an empty path is refused before the key exists: stdout is the key's", async () => {
      const n = name("dash");
      const dash = await plugin(["create", n, "--kubeconfig-out", "-"], { kubeconfig: env.admin });
      assert.equal(dash.code, 1);
      assert.equal(dash.stdout, "");
      assert.match(
        dash.stderr,
        /^error: --kubeconfig-out - is not taken: standard output carries the key alone\. Give a file path, or make the kubeconfig from the key: .*--key-file -\n$/,
      );
      const empty = await plugin(["create", n, "--kubeconfig-out="], { kubeconfig: env.admin });
      assert.equal(empty.code, 1);
      assert.equal(empty.stderr, "error: --kubeconfig-out needs a file path\n");
      assert.equal(await exists(n), false);
    });

    describe("when the file cannot be written after the key was created", () => {
      let proxy: FaultProxy;
      let slow: string;

      before(async () => {
        proxy = await env.cluster.plane.faultProxy({ client: env.cluster.plane.adminCert });
        slow = await env.cluster.plane.clientCertKubeconfig("admin", ["system:masters"], proxy.url);
      });
      after(async () => proxy?.close());

      it("the key is printed on stdout with how to make the kubeconfig, exit 1, nothing left behind", async () => {
        const sub = mkdtempSync(join(dir, "race-"));
        const out = join(sub, "ci.kubeconfig");
        const n = name("race");
        proxy.setDelay(1500);
        const running = plugin(["create", n, "--kubeconfig-out", out], { kubeconfig: slow });
        // The plugin reserves its temporary file first; then, while the API server is slow, the
        // path becomes a directory that rename(2) cannot replace.
        for (let i = 0; leftovers(sub).length === 0; i++) {
          assert.ok(i < 100, "the plugin reserved no temporary file");
          await new Promise((done) => setTimeout(done, 20));
        }
        mkdirSync(out);
        writeFileSync(join(out, "keep"), "");
        const r = await running;
        proxy.setDelay(0);
        assert.equal(r.code, 1, r.stderr);
        assert.match(r.stdout, KEY_LINE);
        assert.equal(
          r.stderr,
          [
            `ownedaccesskey.management.loft.sh/${n} created, but its kubeconfig was not written`,
            `error: cannot write --kubeconfig-out "${out}": it is a directory`,
            "The key is printed on standard output; make the kubeconfig from it with:",
            `  kubectl accesskey kubeconfig ${n} --key-file - > FILE`,
            "",
          ].join("\n"),
        );
        assert.deepEqual(leftovers(sub), []);
        assert.equal(await exists(n), true);
        // The printed key is the one the server holds, and it makes a working kubeconfig.
        const kc = await plugin(["kubeconfig", n, "--key-file", "-"], {
          kubeconfig: env.admin,
          input: r.stdout,
        });
        assert.equal(kc.code, 0, kc.stderr);
        const file = join(sub, "made.kubeconfig");
        writeFileSync(file, kc.stdout, { mode: 0o600 });
        const who = await plugin(["whoami"], { kubeconfig: file });
        assert.equal(who.code, 0, who.stderr);
        assert.ok(existsSync(join(out, "keep")));
      });
    });
  },
);
