// Every subcommand of kubectl accesskey as a subprocess against the real kube-apiserver of the test
// rig, wired to a real `vgate serve`: what it prints, what the server then holds, and how failures
// (admission denials, conflicts, bad tokens) come back.

import assert from "node:assert/strict";
import { chmodSync, existsSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { installAccessKeyCrd } from "../support/cluster.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../support/kube/binaries.js";
import { kubeStatus, type FaultProxy, type RecordedRequest } from "../support/kube/fault-proxy.js";
import type { KubeObject } from "../support/kube/kube-client.js";
import { pluginCluster, RUN_ID, type PluginCluster } from "./plugin-cluster.js";
import { PLUGIN, plugin, type Run } from "./plugin-run.js";
import { suiteTempDir } from "../support/temp-dir.js";

const KEY_RE = /^[A-Za-z0-9_-]{43}\n$/;
const dir = suiteTempDir("accesskey-commands-");

(HAVE_KUBE ? describe : describe.skip)(
  `kubectl accesskey commands on a real cluster${KUBE_SKIP_REASON}`,
  function () {
    this.timeout(90_000);
    let env: PluginCluster;
    let alice: string;
    const aliceName = `alice-${RUN_ID}`;
    const made: string[] = [];
    const name = (base: string) => {
      const n = `${base}-${RUN_ID}`;
      made.push(n);
      return n;
    };
    const asAlice = (args: string[], input?: string): Promise<Run> =>
      plugin(args, { kubeconfig: alice, ...(input === undefined ? {} : { input }) });
    const asAdmin = (args: string[]): Promise<Run> => plugin(args, { kubeconfig: env.admin });
    const stored = async (n: string): Promise<KubeObject> => {
      const ref = {
        apiVersion: `${env.cluster.group}/v1`,
        kind: "OwnedAccessKey",
        metadata: { name: n },
      };
      const obj = await env.cluster.admin.get(ref);
      assert.ok(obj, `${n} exists`);
      return obj;
    };
    const spec = async (n: string) => (await stored(n))["spec"] as Record<string, unknown>;

    before(async function () {
      this.timeout(120_000);
      env = await pluginCluster();
      alice = await env.userKubeconfig(aliceName);
    });
    after(async () => env && (await env.cleanup(made)));

    it("create prints only the key on stdout and the name on stderr; the key logs in", async () => {
      const n = name("ci");
      const r = await asAlice(["create", n, "--ttl", "30d", "--description", "pipeline"]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, KEY_RE);
      assert.equal(r.stderr, `ownedaccesskey.management.loft.sh/${n} created\n`);
      const s = await spec(n);
      assert.equal(s["ttl"], 30 * 86_400);
      assert.equal(s["user"], aliceName);
      assert.equal(s["description"], "pipeline");
      assert.equal(s["type"], "User");
      // This cluster's vgate stores keys plain and publishes so in vgate-info: the plugin sent the
      // key itself, which a reader with --show-key can get back.
      assert.equal(s["key"], r.stdout.trim());
    });

    it("create: every flag lands in the spec (as admin, for another user)", async () => {
      const n = name("full");
      const r = await asAdmin([
        "create",
        n,
        "--display-name",
        "Full",
        "--ttl",
        "12h",
        "--ttl-after-last-activity",
        "--project",
        "p1",
        "--project",
        "p2",
        "--space",
        "p1/s1",
        "--virtual-cluster",
        "p2/v1",
        "--cluster",
        "c1",
        "--role",
        "vcluster",
        "--group",
        "g1",
        "--user",
        "bob",
      ]);
      assert.equal(r.code, 0, r.stderr);
      const s = await spec(n);
      assert.equal(s["displayName"], "Full");
      assert.equal(s["ttl"], 43_200);
      assert.equal(s["ttlAfterLastActivity"], true);
      assert.equal(s["user"], "bob");
      assert.deepEqual(s["groups"], ["g1"]);
      assert.deepEqual(s["scope"], {
        projects: [{ project: "p1" }, { project: "p2" }],
        spaces: [{ project: "p1", space: "s1" }],
        virtualClusters: [{ project: "p2", virtualCluster: "v1" }],
        clusters: [{ cluster: "c1" }],
        roles: [{ role: "vcluster" }],
      });
    });

    it("create --generate-name: the server picks the name, printed on stderr", async () => {
      const r = await asAlice(["create", "--generate-name", `gen-${RUN_ID}-`]);
      assert.equal(r.code, 0, r.stderr);
      const m = new RegExp(
        `^ownedaccesskey\\.management\\.loft\\.sh/(gen-${RUN_ID}-[a-z0-9]{5}) created\\n$`,
      ).exec(r.stderr);
      assert.ok(m, r.stderr);
      made.push(m[1]!);
      assert.match(r.stdout, KEY_RE);
    });

    it("create for another user as a non-admin: vgate's denial comes back as kubectl prints it", async () => {
      const n = name("denied");
      const r = await asAlice(["create", n, "--user", "bob"]);
      assert.equal(r.code, 1);
      assert.equal(r.stdout, "");
      assert.match(
        r.stderr,
        /^Error from server \((Forbidden|Invalid)\): admission webhook "[^"]+" denied the request: /,
      );
      assert.equal(r.stderr.split("\n").length, 2, r.stderr);
    });

    it("create of an existing name: Error from server (AlreadyExists)", async () => {
      const n = name("twice");
      assert.equal((await asAlice(["create", n])).code, 0);
      const r = await asAlice(["create", n]);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /^Error from server \(AlreadyExists\): .*already exists\n$/);
      assert.equal(r.stdout, "");
    });

    it("create --kubeconfig-out writes a kubeconfig whose token is the key, readable by its owner only", async () => {
      const n = name("kc");
      const out = join(dir, "kc.kubeconfig");
      const r = await asAlice(["create", n, "--kubeconfig-out", out]);
      assert.equal(r.code, 0, r.stderr);
      const text = readFileSync(out, "utf8");
      assert.ok(text.includes(`token: "${r.stdout.trim()}"`));
      assert.ok(text.includes(`server: "${env.cluster.url}"`));
      assert.match(text, /certificate-authority-data: \S+/);
      assert.equal(statSync(out).mode & 0o777, 0o600, "only the owner may read a key");
    });

    it("list shows your own keys only, filtered on the server; --all shows others'", async () => {
      const mine = await asAlice(["list", "-o", "name"]);
      assert.equal(mine.code, 0, mine.stderr);
      const names = mine.stdout.trim().split("\n");
      assert.ok(names.length >= 2, mine.stdout);
      for (const line of names)
        assert.match(line, new RegExp(`^ownedaccesskey\\.management\\.loft\\.sh/`));
      assert.ok(!mine.stdout.includes(`full-${RUN_ID}`), "bob's key is not alice's");
      const all = await asAdmin(["list", "--all", "-o", "name"]);
      assert.ok(all.stdout.includes(`full-${RUN_ID}`));
      assert.ok(all.stdout.includes(`ci-${RUN_ID}`));
    });

    it("list: the table has kubectl's header and never the key", async () => {
      const r = await asAlice(["list"]);
      assert.equal(r.code, 0, r.stderr);
      const [header, ...rows] = r.stdout.trimEnd().split("\n");
      assert.match(
        header!,
        /^NAME +DISPLAY NAME +OWNER +TYPE +SCOPE +STATUS +EXPIRES +LAST ACTIVITY +AGE$/,
      );
      assert.ok(
        rows.some((row) =>
          new RegExp(`^ci-${RUN_ID} .* User/${aliceName} +User .* Active `).test(row),
        ),
        r.stdout,
      );
      const noHeaders = await asAlice(["list", "--no-headers"]);
      assert.equal(noHeaders.stdout.trimEnd().split("\n").length, rows.length);
      const key = String((await spec(`ci-${RUN_ID}`))["key"]);
      for (const out of [
        r.stdout,
        noHeaders.stdout,
        (await asAlice(["list", "-o", "wide"])).stdout,
      ]) {
        assert.ok(!out.includes(key));
      }
    });

    it("list of a user without keys: No resources found on stderr", async () => {
      const nobody = await env.userKubeconfig(`nobody-${RUN_ID}`);
      const r = await plugin(["list"], { kubeconfig: nobody });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, "");
      assert.equal(r.stderr, "No resources found\n");
    });

    it("list -l filters by label on the server", async () => {
      const n = name("labelled");
      assert.equal((await asAlice(["create", n])).code, 0);
      await env.cluster.admin.request(
        "PATCH",
        `/apis/${env.cluster.group}/v1/ownedaccesskeys/${n}`,
        { metadata: { labels: { run: RUN_ID } } },
        { "Content-Type": "application/merge-patch+json" },
      );
      const r = await asAlice(["list", "-l", `run=${RUN_ID}`, "-o", "name"]);
      assert.equal(r.stdout, `ownedaccesskey.management.loft.sh/${n}\n`);
    });

    it("get -o json masks spec.key unless --show-key; get of a missing name is NotFound", async () => {
      const n = `ci-${RUN_ID}`;
      const key = String((await spec(n))["key"]);
      const masked = await asAlice(["get", n, "-o", "json"]);
      assert.equal(masked.code, 0, masked.stderr);
      assert.ok(!masked.stdout.includes(key));
      assert.equal((JSON.parse(masked.stdout) as { metadata: { name: string } }).metadata.name, n);
      const shown = await asAlice(["get", n, "-o", "yaml", "--show-key"]);
      assert.ok(shown.stdout.includes(key));
      const missing = await asAlice(["get", `missing-${RUN_ID}`]);
      assert.equal(missing.code, 1);
      assert.equal(
        missing.stderr,
        `Error from server (NotFound): ownedaccesskeys.management.loft.sh "missing-${RUN_ID}" not found\n`,
      );
    });

    it("describe shows the computed expiry and never the key", async () => {
      const n = `ci-${RUN_ID}`;
      const key = String((await spec(n))["key"]);
      const r = await asAlice(["describe", n]);
      assert.equal(r.code, 0, r.stderr);
      assert.ok(r.stdout.includes(n));
      assert.ok(!r.stdout.includes(key));
      const created = Date.parse(
        String(((await stored(n))["metadata"] as { creationTimestamp: string }).creationTimestamp),
      );
      const expiry = new Date(created + 30 * 86_400_000).toISOString().slice(0, 10);
      assert.ok(r.stdout.includes(expiry), `describe names the expiry day ${expiry}:\n${r.stdout}`);
    });

    it("disable and enable flip spec.disabled; the table's STATUS follows", async () => {
      const n = name("toggle");
      assert.equal((await asAlice(["create", n])).code, 0);
      const off = await asAlice(["disable", n]);
      assert.equal(off.code, 0, off.stderr);
      assert.equal(off.stdout, `ownedaccesskey.management.loft.sh/${n} disabled\n`);
      assert.equal((await spec(n))["disabled"], true);
      const row = (await asAlice(["get", n, "--no-headers"])).stdout;
      assert.match(row, / Disabled /);
      const again = await asAlice(["disable", n]);
      assert.match(again.stdout, /unchanged/);
      const on = await asAlice(["enable", n]);
      assert.equal(on.stdout, `ownedaccesskey.management.loft.sh/${n} enabled\n`);
      assert.notEqual((await spec(n))["disabled"], true);
    });

    it("rotate prints a new key once and keeps the metadata", async () => {
      const n = name("rot");
      const first = await asAlice(["create", n, "--display-name", "Rot", "--ttl", "2w"]);
      const before = await stored(n);
      const r = await asAlice(["rotate", n]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, KEY_RE);
      assert.notEqual(r.stdout, first.stdout);
      assert.equal(r.stderr, `ownedaccesskey.management.loft.sh/${n} rotated\n`);
      const after = await stored(n);
      const s = after["spec"] as Record<string, unknown>;
      assert.notEqual(s["key"], (before["spec"] as Record<string, unknown>)["key"]);
      assert.equal(s["displayName"], "Rot");
      assert.equal(s["ttl"], 14 * 86_400);
      assert.equal(
        (after["metadata"] as { uid: string }).uid,
        (before["metadata"] as { uid: string }).uid,
      );
    });

    it("annotate sends escaped JSON-patch paths: set, refuse overwrite, overwrite, remove", async () => {
      const n = name("ann");
      assert.equal((await asAlice(["create", n])).code, 0);
      const annotations = async () =>
        ((await stored(n))["metadata"] as { annotations?: Record<string, string> }).annotations ??
        {};
      const set = await asAlice(["annotate", n, "example.com/pipeline=deploy", "plain=1"]);
      assert.equal(set.code, 0, set.stderr);
      assert.equal(set.stdout, `ownedaccesskey.management.loft.sh/${n} annotated\n`);
      assert.equal((await annotations())["example.com/pipeline"], "deploy");
      const refused = await asAlice(["annotate", n, "example.com/pipeline=other"]);
      assert.equal(refused.code, 1);
      assert.match(
        refused.stderr,
        /^error: --overwrite is false but found the following declared annotation\(s\): 'example\.com\/pipeline' already has a value \(deploy\)/,
      );
      assert.equal(
        (await asAlice(["annotate", n, "example.com/pipeline=other", "--overwrite"])).code,
        0,
      );
      assert.equal((await annotations())["example.com/pipeline"], "other");
      assert.equal((await asAlice(["annotate", n, "example.com/pipeline-"])).code, 0);
      assert.deepEqual(await annotations(), { plain: "1" });
    });

    it("edit replaces the object with the edited file; the key is kept and never in the file", async () => {
      const n = name("edit");
      assert.equal((await asAlice(["create", n, "--description", "old"])).code, 0);
      const key = (await spec(n))["key"];
      const editor = join(dir, "editor.sh");
      writeFileSync(
        editor,
        `#!/bin/sh\ncp "$1" "${dir}/seen.yaml"\nprintf %s "$1" > "${dir}/seen.path"\nsed -i 's/description: old/description: new/' "$1"\n`,
      );
      chmodSync(editor, 0o755);
      const r = await plugin(["edit", n], { kubeconfig: alice, env: { EDITOR: editor } });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, `ownedaccesskey.management.loft.sh/${n} edited\n`);
      assert.equal((await spec(n))["description"], "new");
      assert.equal((await spec(n))["key"], key);
      assert.ok(!readFileSync(join(dir, "seen.yaml"), "utf8").includes(String(key)));
      const edited = readFileSync(join(dir, "seen.path"), "utf8");
      assert.ok(!existsSync(dirname(edited)), `${dirname(edited)} is left behind after the edit`);
    });

    it("edit on a conflict says so, saves nothing and keeps the edited file", async () => {
      const n = name("conflict");
      assert.equal((await asAlice(["create", n, "--description", "old"])).code, 0);
      // The editor changes the object on the server (a concurrent writer) while the user edits.
      const editor = join(dir, "racing-editor.sh");
      writeFileSync(
        editor,
        `#!/bin/sh\nsed -i 's/description: old/description: mine/' "$1"\nKUBECONFIG="${alice}" "${PLUGIN}" annotate ${n} raced=yes >/dev/null\n`,
      );
      chmodSync(editor, 0o755);
      const r = await plugin(["edit", n], { kubeconfig: alice, env: { EDITOR: editor } });
      assert.equal(r.code, 1);
      const m = /A copy of your changes has been stored to "([^"]+)"/.exec(r.stderr);
      assert.ok(m, r.stderr);
      assert.match(
        r.stderr,
        /^error: ownedaccesskeys\.management\.loft\.sh ".*" was changed on the server after you opened it \(Conflict\)/,
      );
      assert.ok(existsSync(m[1]!));
      assert.match(readFileSync(m[1]!, "utf8"), /description: mine/);
      rmSync(dirname(m[1]!), { recursive: true });
      assert.equal((await spec(n))["description"], "old");
    });

    it("edit that saves no YAML object: nothing is sent, the file is kept", async () => {
      const n = name("badedit");
      assert.equal((await asAlice(["create", n, "--description", "old"])).code, 0);
      const editor = join(dir, "bad-editor.sh");
      writeFileSync(editor, `#!/bin/sh\nprintf 'spec: [unclosed\\n' > "$1"\n`);
      chmodSync(editor, 0o755);
      const r = await plugin(["edit", n], { kubeconfig: alice, env: { EDITOR: editor } });
      assert.equal(r.code, 1);
      assert.match(r.stderr, /^error: the edited file is not a YAML object: /);
      const kept = /A copy of your changes has been stored to "([^"]+)"\n$/.exec(r.stderr);
      assert.ok(kept && existsSync(kept[1]!), r.stderr);
      rmSync(dirname(kept[1]!), { recursive: true });
      assert.equal((await spec(n))["description"], "old");
    });

    it("edit with a deprecated field: vgate's warning is printed as Warning: …", async () => {
      const n = name("warn");
      assert.equal((await asAlice(["create", n])).code, 0);
      const editor = join(dir, "deprecated-editor.sh");
      writeFileSync(editor, `#!/bin/sh\nsed -i 's/^spec:$/spec:\\n  allowLoftCli: true/' "$1"\n`);
      chmodSync(editor, 0o755);
      const r = await plugin(["edit", n], { kubeconfig: alice, env: { EDITOR: editor } });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /^Warning: .*allowLoftCli/m);
    });

    it("kubeconfig NAME --key-file -: a kubeconfig that logs in with the key", async () => {
      const n = name("ci-kc");
      const created = await asAlice(["create", n]);
      const r = await asAlice(["kubeconfig", n, "--key-file", "-"], created.stdout);
      assert.equal(r.code, 0, r.stderr);
      assert.ok(r.stdout.includes(`token: "${created.stdout.trim()}"`));
      assert.ok(r.stdout.includes(`current-context: "${n}"`));
      const file = join(dir, "key.txt");
      writeFileSync(file, created.stdout);
      const fromFile = await asAlice(["kubeconfig", n, "--key-file", file]);
      assert.equal(fromFile.stdout, r.stdout);
      const missing = await asAlice(["kubeconfig", n, "--key-file", join(dir, "nope")]);
      assert.equal(
        missing.stderr,
        `error: cannot read --key-file "${join(dir, "nope")}": no such file or directory; give the file that holds the key, or - to read it from standard input\n`,
      );
    });

    it("whoami: the SelfSubjectReview's user and groups", async () => {
      const r = await asAlice(["whoami"]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(
        r.stdout,
        new RegExp(
          `^ATTRIBUTE +VALUE\\nUsername +${aliceName}\\nGroups +\\[accesskey-plugin-users system:authenticated\\]\\n`,
        ),
      );
      const json = await asAlice(["whoami", "-o", "json"]);
      assert.equal(
        (JSON.parse(json.stdout) as { status: { userInfo: { username: string } } }).status.userInfo
          .username,
        aliceName,
      );
    });

    it("delete removes keys; --wait returns once a finalizer is gone; missing names are NotFound", async () => {
      const n = name("del");
      assert.equal((await asAlice(["create", n])).code, 0);
      const r = await asAlice(["delete", n]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, `ownedaccesskey.management.loft.sh "${n}" deleted\n`);
      const gone = await asAlice(["get", n]);
      assert.equal(gone.code, 1);
      const missing = await asAlice(["delete", n]);
      assert.equal(missing.code, 1);
      assert.match(missing.stderr, /^Error from server \(NotFound\): /);
      const held = name("held");
      assert.equal((await asAdmin(["create", held])).code, 0);
      await env.cluster.admin.request(
        "PATCH",
        `/apis/${env.cluster.group}/v1/ownedaccesskeys/${held}`,
        { metadata: { finalizers: ["example.com/hold"] } },
        { "Content-Type": "application/merge-patch+json" },
      );
      const waiting = plugin(["delete", held, "--wait", "--timeout", "30s"], {
        kubeconfig: env.admin,
      });
      await new Promise((r) => setTimeout(r, 1000));
      await env.cluster.admin.request(
        "PATCH",
        `/apis/${env.cluster.group}/v1/ownedaccesskeys/${held}`,
        { metadata: { finalizers: null } },
        { "Content-Type": "application/merge-patch+json" },
      );
      const done = await waiting;
      assert.equal(done.code, 0, done.stderr);
    });

    it("a key held by a finalizer after delete is Terminating in list, get and describe", async () => {
      const n = name("terminating");
      assert.equal((await asAlice(["create", n])).code, 0);
      const path = `/apis/${env.cluster.group}/v1/ownedaccesskeys/${n}`;
      const merge = { "Content-Type": "application/merge-patch+json" };
      await env.cluster.admin.request(
        "PATCH",
        path,
        { metadata: { finalizers: ["example.com/hold"] } },
        merge,
      );
      try {
        const before = await asAlice(["get", n, "--no-headers"]);
        assert.match(before.stdout, /\sActive\s/);
        assert.equal((await asAlice(["delete", n])).code, 0);
        const statusCell = (table: string) => {
          const lines = table.split("\n");
          const at = lines[0]!.indexOf("STATUS");
          const row = lines.find((l) => l.startsWith(`${n} `));
          assert.ok(row, table);
          return row.slice(at).split(/\s{3,}/)[0];
        };
        assert.equal(statusCell((await asAlice(["get", n])).stdout), "Terminating");
        assert.equal(statusCell((await asAlice(["list"])).stdout), "Terminating");
        assert.equal(statusCell((await asAlice(["list", "-o", "wide"])).stdout), "Terminating");
        assert.match((await asAlice(["describe", n])).stdout, /^Status: +Terminating$/m);
      } finally {
        await env.cluster.admin.request("PATCH", path, { metadata: { finalizers: null } }, merge);
      }
    });

    it("an invalid or expired token: You must be logged in to the server (Unauthorized)", async () => {
      const bad = await env.cluster.plane.tokenKubeconfig(
        "invalid-or-expired-token-1234567890",
        "bad",
      );
      const r = await plugin(["list", "--all"], { kubeconfig: bad });
      assert.equal(r.code, 1);
      assert.equal(r.stderr, "error: You must be logged in to the server (Unauthorized)\n");
      assert.ok(!r.stderr.includes("invalid-or-expired-token"));
    });

    it("a token that stopped being valid (its service account deleted): Unauthorized, exit 1", async () => {
      const sa = `gone-${RUN_ID}`;
      const token = await env.cluster.plane.serviceAccountToken("default", sa);
      const kubeconfig = await env.cluster.plane.tokenKubeconfig(token, sa);
      const before = await plugin(["whoami"], { kubeconfig });
      assert.equal(before.code, 0, before.stderr);
      await env.cluster.admin.delete({
        apiVersion: "v1",
        kind: "ServiceAccount",
        metadata: { name: sa, namespace: "default" },
      });
      let r = await plugin(["whoami"], { kubeconfig });
      // kube-apiserver caches a successful token authentication for a few seconds.
      for (let i = 0; r.code === 0 && i < 40; i++) {
        await new Promise((done) => setTimeout(done, 250));
        r = await plugin(["whoami"], { kubeconfig });
      }
      assert.equal(r.code, 1);
      assert.equal(r.stderr, "error: You must be logged in to the server (Unauthorized)\n");
      assert.ok(!r.stderr.includes(token));
    });

    it("KUBECONFIG with several files and an exec credential plugin", async () => {
      const token = await env.cluster.plane.serviceAccountToken("default", `plugin-${RUN_ID}`);
      const clusterFile = join(dir, "cluster.kubeconfig");
      const userFile = join(dir, "user.kubeconfig");
      writeFileSync(
        clusterFile,
        [
          "apiVersion: v1",
          "kind: Config",
          "clusters:",
          "- name: rig",
          "  cluster:",
          `    server: ${env.cluster.url}`,
          `    certificate-authority-data: ${Buffer.from(env.cluster.caPem).toString("base64")}`,
          "contexts:",
          "- name: rig",
          "  context: {cluster: rig, user: exec-user}",
          "current-context: rig",
          "",
        ].join("\n"),
      );
      const cred = JSON.stringify({
        apiVersion: "client.authentication.k8s.io/v1",
        kind: "ExecCredential",
        status: { token },
      });
      writeFileSync(
        userFile,
        [
          "apiVersion: v1",
          "kind: Config",
          "users:",
          "- name: exec-user",
          "  user:",
          "    exec:",
          "      apiVersion: client.authentication.k8s.io/v1",
          "      command: sh",
          `      args: ['-c', ${JSON.stringify(`echo '${cred}'`)}]`,
          "      interactiveMode: Never",
          "",
        ].join("\n"),
      );
      // A file of the list that does not exist is skipped, as kubectl skips it.
      const r = await plugin(["whoami"], {
        kubeconfig: `${join(dir, "absent.kubeconfig")}:${clusterFile}:${userFile}`,
      });
      assert.equal(r.code, 0, r.stderr);
      assert.match(
        r.stdout,
        new RegExp(`Username +system:serviceaccount:default:plugin-${RUN_ID}\\n`),
      );
    });

    it("--as impersonates (as the admin)", async () => {
      const r = await asAdmin(["whoami", "--as", "carol", "--as-group", "g1"]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /Username +carol\nGroups +\[g1 system:authenticated\]\n/);
    });
  },
);

(HAVE_KUBE ? describe : describe.skip)(
  `kubectl accesskey behind a fault proxy${KUBE_SKIP_REASON}`,
  function () {
    this.timeout(90_000);
    let env: PluginCluster;
    let proxy: FaultProxy;
    let kubeconfig: string;
    const n = `retry-${RUN_ID}`;

    before(async function () {
      this.timeout(120_000);
      env = await pluginCluster();
      proxy = await env.cluster.plane.faultProxy({ client: env.cluster.plane.adminCert });
      kubeconfig = await env.cluster.plane.clientCertKubeconfig(
        "admin",
        ["system:masters"],
        proxy.url,
      );
      const r = await plugin(["create", n], { kubeconfig: env.admin });
      assert.equal(r.code, 0, r.stderr);
    });
    after(async () => {
      await proxy?.close();
      if (env) await env.cleanup([n]);
    });
    afterEach(() => {
      proxy.setDown(false);
      proxy.setDelay(0);
    });

    it("a read-modify-write command starts over on 409 Conflict", async () => {
      const before = proxy.requests.length;
      const put = (r: RecordedRequest) =>
        r.method === "PUT" && r.path.endsWith(`/ownedaccesskeys/${n}`);
      proxy.inject(
        put,
        {
          status: 409,
          body: kubeStatus(
            409,
            "Conflict",
            `Operation cannot be fulfilled on ownedaccesskeys.management.loft.sh "${n}": the object has been modified; please apply your changes to the latest version and try again`,
          ),
        },
        1,
      );
      const r = await plugin(["disable", n], { kubeconfig });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, `ownedaccesskey.management.loft.sh/${n} disabled\n`);
      const sent = proxy.requests.slice(before).map((q) => q.method);
      assert.deepEqual(sent, ["GET", "PUT", "GET", "PUT"]);
    });

    it("gives up after 5 conflicts with the server's message", async () => {
      const put = (r: RecordedRequest) =>
        r.method === "PUT" && r.path.endsWith(`/ownedaccesskeys/${n}`);
      proxy.inject(
        put,
        { status: 409, body: kubeStatus(409, "Conflict", "the object has been modified") },
        5,
      );
      const r = await plugin(["enable", n], { kubeconfig });
      assert.equal(r.code, 1);
      assert.equal(r.stderr, "Error from server (Conflict): the object has been modified\n");
    });

    it("--request-timeout ends a request the server does not answer", async () => {
      proxy.setDelay(5000);
      const started = Date.now();
      const r = await plugin(["get", n, "--request-timeout", "500ms"], { kubeconfig });
      assert.equal(r.code, 1);
      assert.match(
        r.stderr,
        /^Unable to connect to the server: API server did not answer within 500 ms \(--request-timeout\)\n$/,
      );
      assert.ok(Date.now() - started < 4000);
    });

    it("a server answering 503: Error from server (ServiceUnavailable)", async () => {
      proxy.setDown("503");
      const r = await plugin(["list", "--all"], { kubeconfig });
      assert.equal(r.code, 1);
      assert.match(r.stderr, /^Error from server \(ServiceUnavailable\): /);
    });
  },
);

(HAVE_KUBE ? describe : describe.skip)(
  `kubectl accesskey --group-domain${KUBE_SKIP_REASON}`,
  function () {
    this.timeout(90_000);
    const domain = `plugin-${RUN_ID}.example.com`;
    let env: PluginCluster;

    before(async function () {
      this.timeout(120_000);
      env = await pluginCluster();
      await installAccessKeyCrd(env.cluster.admin, domain);
    });

    it("works on management.<group-domain>/v1", async () => {
      const created = await plugin(["create", "k", "--user", "someone", "--group-domain", domain], {
        kubeconfig: env.admin,
      });
      assert.equal(created.code, 0, created.stderr);
      assert.equal(created.stderr, `ownedaccesskey.management.${domain}/k created\n`);
      const got = await plugin(["get", "k", "-o", "name", "--group-domain", domain], {
        kubeconfig: env.admin,
      });
      assert.equal(got.stdout, `ownedaccesskey.management.${domain}/k\n`);
      const elsewhere = await plugin(["get", "k", "--group-domain", `other-${domain}`], {
        kubeconfig: env.admin,
      });
      assert.equal(elsewhere.code, 1);
      // The group itself is not served: kubectl's sentence and the domains that are
      // (resource-type.test.ts has the whole text).
      assert.match(
        elsewhere.stderr,
        new RegExp(
          `^error: the server doesn't have a resource type "ownedaccesskeys" in group "management\\.other-${domain.replace(/\./g, "\\.")}"\n.*--group-domain ${domain.replace(/\./g, "\\.")}`,
        ),
      );
    });
  },
);
