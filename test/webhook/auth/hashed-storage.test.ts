// Hashed key storage end to end: a cluster whose vgate runs with --key-storage=hashed (as the install
// will default to), a real kube-apiserver wired with manifests/apiserver/, and the plugin as a
// subprocess. etcd and every reader of the CRD see only sha256:<hex>; the key the client made logs
// in; a rotated key replaces the old one; a key the server would have to make up, and a key another
// object already has, are refused.

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { randomBytes } from "node:crypto";
import { repoFile } from "../../support/fixtures.js";
import { writeKubeconfig } from "../../support/kube/kubeconfig-file.js";
import {
  HAVE_ANY_KUBECTL,
  ANY_KUBECTL_SKIP_REASON,
  kubectlFor,
  type Kubectl,
} from "../../support/kubectl.js";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { plugin } from "../../plugin/plugin-run.js";
import { startVgateCluster, type VgateCluster } from "../../support/cluster.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../../support/kube/binaries.js";
import { until } from "../../support/until.js";
import { httpsRequest } from "../../support/https-client.js";

const sha256 = (s: string): string => `sha256:${createHash("sha256").update(s).digest("hex")}`;

(HAVE_KUBE ? describe : describe.skip)(
  `--key-storage=hashed, end to end${KUBE_SKIP_REASON}`,
  function () {
    this.timeout(90_000);
    let cluster: VgateCluster;
    let dir: string;

    let kubectl: Kubectl;
    let auditLog: string;

    before(async () => {
      cluster = await startVgateCluster({
        vgateArgs: ["--key-storage=hashed"],
        // manifests/apiserver/audit-policy.yaml first, then a rule that logs every body: the
        // snippet's rules must win for keys, or request bodies would hold them.
        configure: async (planeDir) => {
          auditLog = join(planeDir, "audit.log");
          const policy = `${repoFile("manifests/apiserver/audit-policy.yaml")}  - level: RequestResponse\n`;
          return {
            files: { "audit-policy.yaml": policy },
            args: [
              `--audit-policy-file=${join(planeDir, "audit-policy.yaml")}`,
              `--audit-log-path=${auditLog}`,
              "--audit-log-mode=blocking",
            ],
          };
        },
      });
      dir = await mkdtemp(join(tmpdir(), "vgate-hashed-"));
      kubectl = kubectlFor(cluster.kubeconfigPath, join(dir, "kubectl-cache"));
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

    it("the key the plugin makes never leaves the machine: create and rotate send only its hash", async () => {
      // Every request the plugin sends goes through a recording proxy (as the admin upstream).
      const proxy = await cluster.plane.faultProxy({ client: cluster.plane.adminCert });
      const kubeconfig = await writeKubeconfig(join(dir, "via-proxy.kubeconfig"), {
        server: proxy.url,
        caPem: cluster.caPem,
        name: "via-proxy",
        token: "unused-by-the-proxy",
      });
      const via = (args: string[]) => plugin(args, { kubeconfig });
      const created = await via(["create", "never-sent"]);
      assert.equal(created.code, 0, created.stderr);
      const rotated = await via(["rotate", "never-sent"]);
      assert.equal(rotated.code, 0, rotated.stderr);
      const keys = [created.stdout.trim(), rotated.stdout.trim()];
      const bodies = proxy.requests.map((r) => r.body).join("\n");
      assert.ok(
        proxy.requests.some((r) => r.path.endsWith("/configmaps/vgate-info")),
        "asked vgate-info",
      );
      for (const key of keys) {
        assert.ok(!bodies.includes(key), "a plaintext key was sent");
        assert.ok(bodies.includes(sha256(key)), "its hash was sent");
      }
      assert.equal(await storedKey("never-sent"), sha256(keys[1]!));
      await until(async () => (await whoami(keys[1]!)).code === 0, "the rotated key logs in");
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
      const taken = "taken-key-0123456789abcdefghijklmnopqrstuvwxyz";
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
      // Each such answer tells the caller that a key exists: they are counted.
      const metrics = await httpsRequest(`${cluster.vgateUrl}/metrics`, { ca: cluster.caPem });
      assert.match(metrics.text, /^vgate_duplicate_key_refusals_total [1-9]/m);
    });

    /** Every value stored under /registry/ in etcd, decoded as text. */
    async function etcdContents(): Promise<string> {
      const b64 = (t: string) => Buffer.from(t).toString("base64");
      const res = await fetch(`${cluster.plane.etcdUrl}/v3/kv/range`, {
        method: "POST",
        body: JSON.stringify({ key: b64("/registry/"), range_end: b64("/registry0") }),
      });
      const body = (await res.json()) as { kvs?: { value: string }[] };
      assert.ok((body.kvs ?? []).length > 10, "etcd was read");
      return (body.kvs ?? [])
        .map((kv) => Buffer.from(kv.value, "base64").toString("latin1"))
        .join("\n");
    }

    const newKey = (): string => randomBytes(32).toString("base64url");
    const manifest = (name: string, key: string, more: Record<string, unknown> = {}) =>
      JSON.stringify({
        apiVersion: `${cluster.group}/v1`,
        kind: "OwnedAccessKey",
        metadata: { name, ...more },
        spec: { key, user: "admin", type: "User", displayName: name },
      });
    /** Every plaintext key this describe sends, for the etcd and audit log checks at the end. */
    const sent: string[] = [];

    async function storedJson(name: string): Promise<string> {
      const res = await cluster.admin.request(
        "GET",
        `/apis/${cluster.group}/v1/ownedaccesskeys/${name}`,
      );
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return JSON.stringify(res.body);
    }

    (HAVE_ANY_KUBECTL ? describe : describe.skip)(
      `no plaintext key at rest: kubectl's last-applied-configuration${ANY_KUBECTL_SKIP_REASON}`,
      () => {
        const ways: [string, (name: string, key: string) => Promise<void>][] = [
          [
            "kubectl apply, then the same apply again",
            async (name, key) => {
              for (let i = 0; i < 2; i++) {
                const r = await kubectl(["apply", "-f", "-"], { input: manifest(name, key) });
                assert.equal(r.code, 0, r.stderr);
              }
            },
          ],
          [
            "kubectl create --save-config",
            async (name, key) => {
              const r = await kubectl(["create", "--save-config", "-f", "-"], {
                input: manifest(name, key),
              });
              assert.equal(r.code, 0, r.stderr);
            },
          ],
          [
            "kubectl replace --save-config (a rotation)",
            async (name, key) => {
              const first = newKey();
              sent.push(first);
              const c = await kubectl(["create", "-f", "-"], { input: manifest(name, first) });
              assert.equal(c.code, 0, c.stderr);
              const r = await kubectl(["replace", "--save-config", "-f", "-"], {
                input: manifest(name, key),
              });
              assert.equal(r.code, 0, r.stderr);
            },
          ],
          [
            "kubectl apply --server-side",
            async (name, key) => {
              const r = await kubectl(["apply", "--server-side", "-f", "-"], {
                input: manifest(name, key),
              });
              assert.equal(r.code, 0, r.stderr);
            },
          ],
        ];
        for (const [i, [how, write]] of ways.entries()) {
          it(`${how}: only the hash is stored, in spec.key and in the annotation, and the key logs in`, async () => {
            const name = `at-rest-${i}`;
            const key = newKey();
            sent.push(key);
            await write(name, key);
            const stored = await storedJson(name);
            assert.ok(!stored.includes(key), `the stored object holds the key: ${stored}`);
            assert.ok(stored.includes(sha256(key)), "spec.key holds the hash");
            const applied = JSON.parse(stored).metadata.annotations?.[
              "kubectl.kubernetes.io/last-applied-configuration"
            ] as string | undefined;
            if (applied !== undefined) {
              assert.equal(JSON.parse(applied).spec.key, sha256(key));
            }
            await until(async () => (await whoami(key)).code === 0, "the key logs in");
          });
        }

        it("refuses the key in an annotation or a label, on create and on a later edit", async () => {
          const key = newKey();
          sent.push(key);
          const inAnnotation = await kubectl(["apply", "-f", "-"], {
            input: manifest("exposed-a", key, {
              annotations: { "example.com/token": `Bearer ${key}` },
            }),
          });
          assert.equal(inAnnotation.code, 1);
          assert.match(
            inAnnotation.stderr,
            /metadata\.annotations\[example\.com\/token\]: Forbidden: must not contain the access key/,
          );
          assert.ok(!inAnnotation.stderr.includes(key), "the error does not echo the key");
          const inLabel = await kubectl(["create", "-f", "-"], {
            input: manifest("exposed-l", key, { labels: { copy: key } }),
          });
          assert.equal(inLabel.code, 1);
          assert.match(inLabel.stderr, /metadata\.labels\[copy\]: Forbidden/);
          // Stored cleanly, then the key pasted into an annotation by an edit that does not send
          // spec.key in plain: found by its hash.
          const ok = await kubectl(["apply", "-f", "-"], { input: manifest("exposed-e", key) });
          assert.equal(ok.code, 0, ok.stderr);
          const edit = await kubectl([
            "annotate",
            "oak",
            "exposed-e",
            `example.com/note=key is ${key}`,
          ]);
          assert.equal(edit.code, 1, edit.stdout);
          assert.match(edit.stderr, /Forbidden: must not contain the access key/);
          assert.ok(!(await storedJson("exposed-e")).includes(key));
          for (const n of ["exposed-a", "exposed-l"]) {
            assert.equal(
              (await cluster.admin.request("GET", `/apis/${cluster.group}/v1/ownedaccesskeys/${n}`))
                .status,
              404,
            );
          }
        });

        it("etcd and the audit log hold none of the keys; key logins carry their credential id", async () => {
          assert.ok(sent.length >= 5);
          const etcd = await etcdContents();
          for (const key of sent) assert.ok(!etcd.includes(key), "a plaintext key in etcd");
          // The reading works: the stored hashes are there.
          assert.ok(
            sent.some((key) => etcd.includes(sha256(key))),
            "no stored hash found in etcd",
          );
          const log = await readFile(auditLog, "utf8");
          const events = log
            .split("\n")
            .filter(Boolean)
            .map((l) => JSON.parse(l) as Record<string, unknown>);
          assert.ok(events.length > 0);
          for (const key of sent) assert.ok(!log.includes(key), "a plaintext key in the audit log");
          const keyEvents = events.filter(
            (e) =>
              (e["objectRef"] as { resource?: string } | undefined)?.resource === "ownedaccesskeys",
          );
          assert.ok(keyEvents.length > 0);
          for (const e of keyEvents) assert.equal(e["level"], "Metadata", JSON.stringify(e));
          // Some other request (the catch-all rule) shows the policy logs bodies elsewhere.
          assert.ok(events.some((e) => e["level"] === "RequestResponse"));
          const byKey = events.filter((e) =>
            ((e["user"] as { extra?: Record<string, string[]> }).extra ?? {})[
              "authentication.kubernetes.io/credential-id"
            ]?.[0]?.startsWith("ACCESSKEYID="),
          );
          assert.ok(byKey.length > 0, "no event of a key login carries its credential id");
          const extra = (byKey[0]!["user"] as { extra: Record<string, string[]> }).extra;
          assert.match(
            extra["authentication.kubernetes.io/credential-id"]![0]!,
            /^ACCESSKEYID=[0-9a-f]{16}$/,
          );
          assert.deepEqual(
            extra["authentication.kubernetes.io/credential-id"],
            extra["accesskey.loft.sh/key-id"]!.map((id) => `ACCESSKEYID=${id}`),
          );
        });
      },
    );
  },
);
