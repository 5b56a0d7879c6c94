// kubectl accesskey create with -o and --dry-run, as a subprocess against the real kube-apiserver of
// the test rig (wired to a real `vgate serve`) and through kubectl's plugin discovery: what is
// printed, that the key is never lost (nor printed where it is masked), and that a dry run stores
// nothing, the server one after vgate's webhooks had their say.

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../support/kube/binaries.js";
import { HAVE_KUBECTL } from "../support/kubectl.js";
import type { KubeObject } from "../support/kube/kube-client.js";
import { suiteTempDir } from "../support/temp-dir.js";
import { pluginCluster, RUN_ID, type PluginCluster } from "./plugin-cluster.js";
import { kubectl, plugin, type Run } from "./plugin-run.js";

const KIND = "ownedaccesskey.management.loft.sh";
const dir = suiteTempDir("accesskey-create-output-");

(HAVE_KUBE ? describe : describe.skip)(
  `kubectl accesskey create -o and --dry-run on a real cluster${KUBE_SKIP_REASON}`,
  function () {
    this.timeout(90_000);
    let env: PluginCluster;
    let erin: string;
    const erinName = `erin-${RUN_ID}`;
    const made: string[] = [];
    const name = (base: string) => {
      const n = `${base}-${erinName}`;
      made.push(n);
      return n;
    };
    const asErin = (args: string[]): Promise<Run> => plugin(args, { kubeconfig: erin });
    const stored = (n: string): Promise<KubeObject | null> =>
      env.cluster.admin.get({
        apiVersion: `${env.cluster.group}/v1`,
        kind: "OwnedAccessKey",
        metadata: { name: n },
      });
    const storedKey = async (n: string): Promise<string> => {
      const obj = await stored(n);
      assert.ok(obj, `${n} exists`);
      return (obj["spec"] as { key: string }).key;
    };

    before(async function () {
      this.timeout(120_000);
      env = await pluginCluster();
      erin = await env.userKubeconfig(erinName);
    });
    after(async () => env && (await env.cleanup(made)));

    it("-o json --show-key: the created object, spec.key the key that was stored", async () => {
      const n = name("json");
      const r = await asErin(["create", n, "-o", "json", "--show-key", "--ttl", "1h"]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stderr, "");
      const obj = JSON.parse(r.stdout) as KubeObject & { spec: Record<string, unknown> };
      assert.equal(obj.metadata?.name, n);
      assert.ok(obj.metadata?.["uid"], "the object as the server returned it");
      assert.equal(obj.spec["user"], erinName);
      assert.equal(obj.spec["ttl"], 3600);
      assert.match(obj.spec["key"] as string, /^[A-Za-z0-9_-]{43}$/);
      assert.equal(obj.spec["key"], await storedKey(n));
      // kubectl's JSONPrinter: 4 spaces.
      assert.ok(r.stdout.startsWith('{\n    "apiVersion": '), r.stdout);
    });

    it("a hash sent (storage unknown): --show-key prints the key, else neither key nor hash", async () => {
      // No vgate-info in that namespace: the plugin sends only sha256:<hex> of the key (OAK-24).
      const elsewhere = ["--vgate-namespace", `none-${RUN_ID}`];
      const n = name("hashed");
      const r = await asErin(["create", n, "-o", "json", "--show-key", ...elsewhere]);
      assert.equal(r.code, 0, r.stderr);
      const key = (JSON.parse(r.stdout) as { spec: { key: string } }).spec.key;
      assert.match(key, /^[A-Za-z0-9_-]{43}$/);
      const hex = createHash("sha256").update(key).digest("hex");
      assert.equal(await storedKey(n), `sha256:${hex}`);
      const m = name("hashed-masked");
      const out = join(dir, "hashed.kubeconfig");
      const masked = await asErin([
        "create",
        m,
        "-o",
        "yaml",
        "--kubeconfig-out",
        out,
        ...elsewhere,
      ]);
      assert.equal(masked.code, 0, masked.stderr);
      const stored = (await storedKey(m)).slice("sha256:".length);
      assert.ok(masked.stdout.includes("  key: REDACTED\n"), masked.stdout);
      assert.ok(!masked.stdout.includes(stored), "the hash is masked too");
      const token = /token: "([^"]+)"/.exec(readFileSync(out, "utf8"))?.[1] ?? "";
      assert.equal(createHash("sha256").update(token).digest("hex"), stored);
      assert.ok(!masked.stdout.includes(token));
    });

    it("-o yaml|json without --show-key or --kubeconfig-out: refused before a key is made", async () => {
      for (const o of ["yaml", "json", "name"]) {
        const n = name(`lost-${o}`);
        const r = await asErin(["create", n, "-o", o]);
        assert.equal(r.code, 1, r.stdout);
        assert.equal(r.stdout, "");
        assert.match(r.stderr, /^error: -o \w+ prints .*shown only once.*--kubeconfig-out FILE/);
        assert.equal(await stored(n), null, `${n} was not created`);
      }
    });

    it("-o yaml --kubeconfig-out: the object masked, the key in the kubeconfig only", async () => {
      const n = name("yaml");
      const out = join(dir, "yaml.kubeconfig");
      const r = await asErin(["create", n, "-o", "yaml", "--kubeconfig-out", out]);
      assert.equal(r.code, 0, r.stderr);
      const key = await storedKey(n);
      assert.ok(readFileSync(out, "utf8").includes(`token: "${key}"`));
      assert.ok(r.stdout.includes(`  key: REDACTED\n`), r.stdout);
      assert.ok(r.stdout.includes(`  name: ${n}\n`), r.stdout);
      assert.ok(!r.stdout.includes(key) && !r.stderr.includes(key), "the key is masked");
    });

    it("-o name --kubeconfig-out: kind/name only, as kubectl create -o name", async () => {
      const n = name("name");
      const out = join(dir, "name.kubeconfig");
      const r = await asErin(["create", n, "-o", "name", "--kubeconfig-out", out]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, `${KIND}/${n}\n`);
      assert.equal(r.stderr, "");
      assert.ok(readFileSync(out, "utf8").includes(`token: "${await storedKey(n)}"`));
    });

    it("-o wide, custom-columns: kubectl create's printer error, nothing made", async () => {
      const n = name("wide");
      for (const o of ["wide", "custom-columns=N:.metadata.name"]) {
        const r = await asErin(["create", n, "-o", o]);
        assert.equal(r.code, 1);
        assert.equal(
          r.stderr,
          `error: unable to match a printer suitable for the output format "${o}", allowed formats are: json,jsonpath,jsonpath-as-json,name,yaml\n`,
        );
      }
      assert.equal(await stored(n), null);
    });

    it("--dry-run=client sends nothing: kubectl's line, -o name, -o yaml with the key masked", async () => {
      // A server that does not answer: a client dry run never asks it.
      const nowhere = join(dir, "nowhere.kubeconfig");
      writeFileSync(
        nowhere,
        [
          "apiVersion: v1",
          "kind: Config",
          "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]",
          "users: [{name: u, user: {token: not-a-key}}]",
          "contexts: [{name: c, context: {cluster: c, user: u}}]",
          "current-context: c",
        ].join("\n"),
      );
      const run = (args: string[]) => plugin(args, { kubeconfig: nowhere });
      const n = name("client");
      const line = await run(["create", n, "--dry-run=client"]);
      assert.equal(line.code, 0, line.stderr);
      assert.equal(line.stdout, `${KIND}/${n} created (dry run)\n`);
      assert.equal(line.stderr, "");
      const short = await run(["create", n, "--dry-run=client", "-o", "name"]);
      assert.equal(short.stdout, `${KIND}/${n}\n`);
      const yaml = await run(["create", n, "--dry-run=client", "-o", "yaml", "--project", "web"]);
      assert.equal(yaml.code, 0, yaml.stderr);
      assert.equal(
        yaml.stdout,
        `apiVersion: management.loft.sh/v1\nkind: OwnedAccessKey\nmetadata:\n  name: ${n}\n` +
          `spec:\n  key: REDACTED\n  scope:\n    projects:\n    - project: web\n`,
      );
      // pflag's NoOptDefVal: a bare --dry-run is client, with kubectl's deprecation warning.
      const bare = await run(["create", n, "--dry-run"]);
      assert.equal(bare.stdout, `${KIND}/${n} created (dry run)\n`);
      assert.equal(
        bare.stderr,
        "Warning: --dry-run is deprecated and can be replaced with --dry-run=client.\n",
      );
      const file = await run(["create", n, "--dry-run=client", "--kubeconfig-out", join(dir, "x")]);
      assert.equal(file.code, 1);
      assert.equal(
        file.stderr,
        "error: --kubeconfig-out cannot be used with --dry-run: a dry run makes no key\n",
      );
      const bad = await run(["create", n, "--dry-run=maybe"]);
      assert.equal(bad.code, 1);
      assert.equal(
        bad.stderr,
        `error: Invalid dry-run value (maybe). Must be "none", "server", or "client".\n`,
      );
      assert.equal(await stored(n), null);
    });

    it("--dry-run=server: vgate's webhooks run (owner set, denials come back), nothing is stored", async () => {
      const n = name("server");
      const line = await asErin(["create", n, "--dry-run=server"]);
      assert.equal(line.code, 0, line.stderr);
      assert.equal(line.stdout, `${KIND}/${n} created (server dry run)\n`);
      const yaml = await asErin(["create", n, "--dry-run=server", "-o", "yaml"]);
      assert.equal(yaml.code, 0, yaml.stderr);
      // vgate's mutating webhook made erin the owner; the key stays masked.
      assert.ok(yaml.stdout.includes(`  user: ${erinName}\n`), yaml.stdout);
      assert.ok(yaml.stdout.includes(`  key: REDACTED\n`), yaml.stdout);
      assert.ok(yaml.stdout.includes(`  creationTimestamp: `), yaml.stdout);
      assert.equal(await stored(n), null, "a server dry run stores nothing");
      // Another user's key as a non-admin: vgate's admission denial, as for a real create.
      const denied = await asErin(["create", n, "--dry-run=server", "--user", "bob"]);
      assert.equal(denied.code, 1);
      assert.match(denied.stderr, /^Error from server \((Forbidden|Invalid)\): admission webhook /);
      assert.equal(await stored(n), null);
      const exists = await asErin(["create", n]);
      assert.equal(exists.code, 0, exists.stderr);
      const again = await asErin(["create", n, "--dry-run=server"]);
      assert.match(again.stderr, /^Error from server \(AlreadyExists\): /);
    });

    (HAVE_KUBECTL ? it : it.skip)(
      "through kubectl's plugin discovery: kubectl accesskey create --dry-run=server -o name",
      async () => {
        const n = name("kubectl");
        const r = await kubectl(["accesskey", "create", n, "--dry-run=server", "-o", "name"], {
          kubeconfig: erin,
        });
        assert.equal(r.code, 0, r.stderr);
        assert.equal(r.stdout, `${KIND}/${n}\n`);
        assert.equal(await stored(n), null);
      },
    );
  },
);
