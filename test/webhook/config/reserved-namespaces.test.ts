// Reserved namespaces are never targets (docs/decisions.md EPS-20): a sync.toHost.namespaces
// mapping whose host side is kube-system, kube-public, kube-node-lease, default or vgate's own
// namespace, or a pattern that can produce one, is refused when the config is loaded, by
// `vgate check-config`, `vgate sync` and `vgate serve --config` alike (run here as subprocesses),
// with a message that names the mapping. The legitimate mapping next to it still loads.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import {
  reservedMappingProblem,
  reservedNamespaces,
} from "../../../webhook/src/config/reserved-namespaces.js";
import { validateVClusterConfig } from "../../../webhook/src/config/validate-config.js";
import { repoRoot } from "../../support/fixtures.js";
import { docBlock } from "../../support/readme-blocks.js";

const bin = resolve(repoRoot, "webhook/bin/vgate");
const WHERE = 'sync.toHost.namespaces.mappings.byName["team-*"]';

const configWith = (byName: Record<string, string>, enabled = true) => ({
  sync: { toHost: { namespaces: { enabled, mappings: { byName } } } },
});

const yaml = (byName: Record<string, string>) =>
  `sync:\n  toHost:\n    namespaces:\n      enabled: true\n      mappings:\n        byName:\n${Object.entries(
    byName,
  )
    .map(([k, v]) => `          ${JSON.stringify(k)}: ${JSON.stringify(v)}\n`)
    .join("")}`;

describe("config: reserved namespaces", () => {
  it("refuses an exact mapping onto each reserved namespace, naming the mapping", () => {
    for (const ns of ["kube-system", "kube-public", "kube-node-lease", "default"]) {
      assert.deepEqual(validateVClusterConfig(configWith({ team: ns })), [
        `sync.toHost.namespaces.mappings.byName["team"]: host namespace "${ns}", a reserved namespace: vgate never writes to kube-system, kube-public, kube-node-lease, default and the namespace vgate runs in`,
      ]);
    }
  });

  it("refuses vgate's own namespace when it is known, and only then", () => {
    const config = configWith({ "team-a": "vgate-system" });
    assert.deepEqual(validateVClusterConfig(config), []);
    assert.deepEqual(validateVClusterConfig(config, { selfNamespace: "vgate-system" }), [
      `sync.toHost.namespaces.mappings.byName["team-a"]: host namespace "vgate-system", a reserved namespace: vgate never writes to kube-system, kube-public, kube-node-lease, default and "vgate-system" (the namespace vgate runs in)`,
    ]);
  });

  it("refuses a pattern that can produce a reserved namespace: its * matches one or more characters", () => {
    const cases: [string, string][] = [
      ["*", "kube-system"],
      ["kube-*", "kube-system"],
      ["*-system", "kube-system"],
      ["k*e", "kube-node-lease"],
      ["d*", "default"],
      ["*t", "default"],
      ["vgate-*", "vgate-system"],
    ];
    for (const [pattern, hit] of cases) {
      assert.equal(
        reservedMappingProblem(WHERE, pattern, "vgate-system"),
        `${WHERE}: host namespace pattern "${pattern}" can produce "${hit}", a reserved namespace: vgate never writes to kube-system, kube-public, kube-node-lease, default and "vgate-system" (the namespace vgate runs in)`,
      );
    }
  });

  it("accepts what cannot produce one: the legitimate mappings next to them", () => {
    for (const pattern of [
      "team-*",
      "tenant-*-prod",
      "kube-system-*",
      "*-kube-system",
      "defaults",
      "kube",
    ]) {
      assert.equal(reservedMappingProblem(WHERE, pattern, "vgate-system"), null, pattern);
    }
    // "*" must match at least one character: "kube-system*" cannot be "kube-system".
    assert.equal(reservedMappingProblem(WHERE, "kube-system*", undefined), null);
    assert.deepEqual(validateVClusterConfig(configWith({ "team-*": "host-team-*", a: "b" })), []);
  });

  it("refuses the mapping even while namespaces.enabled is false", () => {
    assert.equal(validateVClusterConfig(configWith({ team: "default" }, false)).length, 1);
  });

  it("the reserved list: the fixed four, and vgate's own namespace once", () => {
    assert.deepEqual(reservedNamespaces(), [
      "kube-system",
      "kube-public",
      "kube-node-lease",
      "default",
    ]);
    assert.deepEqual(reservedNamespaces("default"), reservedNamespaces());
    assert.deepEqual(reservedNamespaces("vgate")[4], "vgate");
  });

  describe("refused by every command that loads a config (subprocesses)", function () {
    this.timeout(60_000);
    let dir = "";
    let bad = "";
    let good = "";
    const env = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => {
      const e: NodeJS.ProcessEnv = { ...process.env, ...extra };
      delete e.KUBECONFIG;
      if (!("POD_NAMESPACE" in extra)) delete e.POD_NAMESPACE;
      return e;
    };
    const vgate = (args: string[], extra?: Record<string, string>) =>
      spawnSync(bin, args, { encoding: "utf8", env: env(extra), timeout: 30_000 });
    const PROBLEM =
      /sync\.toHost\.namespaces\.mappings\.byName\["team-\*"\]: host namespace pattern "kube-\*" can produce "kube-system", a reserved namespace/;

    before(() => {
      dir = mkdtempSync(join(tmpdir(), "vgate-reserved-"));
      bad = join(dir, "bad.yaml");
      good = join(dir, "good.yaml");
      writeFileSync(bad, yaml({ "team-*": "kube-*", own: "vgate-system" }));
      writeFileSync(good, yaml({ "team-*": "host-team-*", own: "vgate-system" }));
    });
    after(() => rmSync(dir, { recursive: true, force: true }));

    it("vgate check-config: exit 1 with the mapping named; --namespace and $POD_NAMESPACE reserve vgate's own", () => {
      const r = vgate(["check-config", bad]);
      assert.equal(r.status, 1, r.stderr);
      assert.match(r.stderr, PROBLEM);
      assert.doesNotMatch(r.stderr, /byName\["own"\]/, "vgate's namespace is unknown here");
      const ok = vgate(["check-config", good]);
      assert.equal(ok.status, 0, ok.stderr);
      assert.equal(ok.stdout, "OK\n");
      for (const run of [
        vgate(["check-config", "--namespace=vgate-system", good]),
        vgate(["check-config", good], { POD_NAMESPACE: "vgate-system" }),
      ]) {
        assert.equal(run.status, 1, run.stderr);
        assert.match(
          run.stderr,
          /^sync\.toHost\.namespaces\.mappings\.byName\["own"\]: host namespace "vgate-system", a reserved namespace/,
        );
      }
      const usage = vgate(["check-config", "--namespace=Not_A_Namespace", good]);
      assert.equal(usage.status, 2);
      assert.match(usage.stderr, /invalid --namespace "Not_A_Namespace"/);
    });

    it("the README's example prints what it shows", () => {
      const lines = docBlock("$ cat vcluster.yaml");
      const command = lines.findIndex((l) => l.startsWith("$ vgate check-config"));
      const example = join(dir, "example");
      mkdirSync(example);
      writeFileSync(join(example, "vcluster.yaml"), `${lines.slice(1, command).join("\n")}\n`);
      const args = lines[command]!.slice("$ vgate ".length).split(" ");
      const r = spawnSync(bin, args, {
        cwd: example,
        encoding: "utf8",
        env: env(),
        timeout: 30_000,
      });
      assert.equal(r.status, 1);
      assert.deepEqual(r.stderr.trimEnd().split("\n"), lines.slice(command + 1));
    });

    it("vgate sync: exit 1 before connecting anywhere, naming the mapping", () => {
      const r = vgate([
        "sync",
        `--config=${bad}`,
        "--virtual-kubeconfig=/nonexistent/v",
        "--host-kubeconfig=/nonexistent/h",
        "--vcluster-name=vc",
        "--vcluster-namespace=vcluster-vc",
      ]);
      assert.equal(r.status, 1, r.stderr);
      assert.match(r.stderr, PROBLEM);
      assert.doesNotMatch(r.stderr, /nonexistent/, "refused before reading a kubeconfig");
      const own = vgate(
        [
          "sync",
          `--config=${good}`,
          "--virtual-kubeconfig=/nonexistent/v",
          "--host-kubeconfig=/nonexistent/h",
          "--vcluster-name=vc",
          "--vcluster-namespace=vcluster-vc",
        ],
        { POD_NAMESPACE: "vgate-system" },
      );
      assert.equal(own.status, 1, own.stderr);
      assert.match(
        own.stderr,
        /byName\["own"\]: host namespace "vgate-system", a reserved namespace/,
      );
    });

    it("vgate serve --config: exit 1 before serving, naming the mapping", () => {
      const r = vgate([
        "serve",
        "--dev",
        "--port=0",
        "--bind-address=127.0.0.1",
        `--config=${bad}`,
        "--vcluster-name=vc",
        "--vcluster-namespace=vcluster-vc",
        "--namespace=vgate-system",
      ]);
      assert.equal(r.status, 1, r.stderr);
      assert.match(r.stderr, PROBLEM);
      assert.match(
        r.stderr,
        /byName\["own"\]: host namespace "vgate-system", a reserved namespace/,
      );
    });
  });
});
