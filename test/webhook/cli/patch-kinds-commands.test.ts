// `vgate patch`, `vgate translate` and `vgate check-config` on every kind, as subprocesses: each
// row of docs/patches.md's table of kinds is run as written, in every direction its kind syncs
// (docs/decisions.md KND-2 to KND-6).

import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { PATCH_KINDS, type PatchKind } from "../../../webhook/src/config/patch-kinds.js";
import { parsePath } from "../../../webhook/src/patches/path.js";
import { repoRoot } from "../../support/fixtures.js";
import { boundedRunner, type RunResult } from "../../support/run-bounded.js";
import { tableRows, type Row } from "../../support/patch-kinds-table.js";

const bin = resolve(repoRoot, "webhook/bin/vgate");
const vc = ["--vcluster-name", "my-vc", "--vcluster-namespace", "vcluster-my-vc"];
const run = boundedRunner(bin);

type Obj = Record<string, unknown>;

const CERTIFICATE = { group: "cert-manager.io", kind: "Certificate" };

function kindOf(row: Row): PatchKind | { group: string; kind: string; custom: true } {
  if (row.key.startsWith("customResources.")) return { ...CERTIFICATE, custom: true };
  const kind = PATCH_KINDS.find((k) => k.section === row.side && k.key === row.key);
  assert.ok(kind, `sync.${row.side}.${row.key} is not in PATCH_KINDS`);
  return kind;
}

/** The config with the row's example as the only patch. */
function configOf(row: Row): Obj {
  if (row.key.startsWith("customResources.")) {
    const name = row.key.slice("customResources.".length);
    const entry: Obj = { enabled: true, patches: [row.example] };
    if (row.side === "fromHost") {
      entry["scope"] = "Namespaced";
      entry["mappings"] = { byName: { "certs/*": "a/*" } };
    }
    return { sync: { [row.side]: { customResources: { [name]: entry } } } };
  }
  // A key such as gatewayApi.httpRoutes is a path of objects.
  const section = row.key
    .split(".")
    .reduceRight<Obj>((inner, key) => ({ [key]: inner }), { patches: [row.example] });
  return { sync: { [row.side]: section } };
}

function keysOf(path: string): string[] {
  return parsePath(path).map((s) => {
    assert.ok(s.kind !== "wildcard", `the table's paths name one value: ${path}`);
    return s.kind === "key" ? s.key : String(s.index);
  });
}

function setAt(obj: Obj, path: string, value: string): void {
  const keys = keysOf(path);
  let at = obj;
  for (const key of keys.slice(0, -1)) at = (at[key] ??= {}) as Obj;
  at[keys.at(-1)!] = value;
}

function getAt(obj: Obj, path: string): unknown {
  return keysOf(path).reduce<unknown>((at, key) => (at as Obj | undefined)?.[key], obj);
}

/** What the expression gives on `value`, run as plain JavaScript: the sandbox must agree. */
function plain(source: string, value: string): unknown {
  return (new Function("value", `return (${source});`) as (v: string) => unknown)(value);
}

describe("vgate patch / translate / check-config on every kind (docs/patches.md's table)", function () {
  this.timeout(300_000);
  const dir = mkdtempSync(join(tmpdir(), "vgate-kinds-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const rows = tableRows();

  it("the table has a row for every kind of PATCH_KINDS and a custom resource on each side", () => {
    const keys = rows.map((r) => `${r.side}.${r.key}`);
    for (const kind of PATCH_KINDS)
      assert.ok(keys.includes(`${kind.section}.${kind.key}`), kind.key);
    assert.equal(keys.filter((k) => k.includes(".customResources.")).length, 2);
    assert.equal(new Set(keys).size, keys.length);
  });

  /** The row's runs: toHost then back for a kind synced to the host, both directions otherwise. */
  async function runRow(row: Row): Promise<{ path: string; first: RunResult; second: RunResult }> {
    const kind = kindOf(row);
    const config = join(dir, `${row.side}-${row.key}.json`);
    writeFileSync(config, JSON.stringify(configOf(row)));
    const apiVersion = kind.group === "" ? "v1" : `${kind.group}/v1`;
    const object: Obj = { apiVersion, kind: kind.kind, metadata: { name: "x", namespace: "a" } };
    const path = row.example["path"] as string;
    setAt(object, path, "team-a");
    const patch = (direction: string, input: Obj | string) =>
      run(
        ["patch", "--config", config, "--direction", direction, ...vc, "--explain", "-"],
        typeof input === "string" ? input : JSON.stringify(input),
      );
    if (row.side === "toHost") {
      const first = await patch("toHost", object);
      // What the first run printed goes back as it is; the test asserts it parses.
      return { path, first, second: await patch("toVirtual", first.stdout) };
    }
    const [first, second] = await Promise.all([
      patch("toVirtual", object),
      patch("toHost", object),
    ]);
    return { path, first, second };
  }

  // Every row's runs start together (a few processes at a time); each test awaits its own.
  const runs = new Map<Row, Promise<Awaited<ReturnType<typeof runRow>>>>();
  before(() => {
    for (const row of rows) {
      const p = runRow(row);
      p.catch(() => undefined); // rejected: its test fails on it
      runs.set(row, p);
    }
  });

  for (const row of rows) {
    it(`sync.${row.side}.${row.key}: ${row.exampleText}`, async () => {
      const { path, first, second } = await runs.get(row)!;
      if (row.side === "toHost") {
        const there = first;
        assert.equal(there.status, 0, there.stderr);
        const host = JSON.parse(there.stdout) as Obj;
        assert.equal(getAt(host, path), plain(row.example["expression"] as string, "team-a"));
        assert.match(there.stderr, /^patches\[0\] .* \(expression\): matched /);
        const back = second;
        assert.equal(back.status, 0, back.stderr);
        assert.equal(getAt(JSON.parse(back.stdout) as Obj, path), "team-a");
        assert.match(back.stderr, /\(reverseExpression\): matched /);
        return;
      }
      const keyword = "expression" in row.example ? "expression" : "reverseExpression";
      const down = first;
      assert.equal(down.status, 0, down.stderr);
      assert.equal(
        getAt(JSON.parse(down.stdout) as Obj, path),
        plain(row.example[keyword] as string, "team-a"),
      );
      assert.match(down.stderr, new RegExp(`^patches\\[0\\] .* \\(${keyword}\\): matched `));
      const up = second;
      assert.equal(up.status, 1);
      assert.match(up.stderr, /run host → virtual only .*: use --direction toVirtual\n$/);
    });
  }

  it("a kind without patches is an error naming the kinds that have some", async () => {
    const config = join(dir, "two.yaml");
    writeFileSync(
      config,
      "sync:\n  toHost:\n    pods: {patches: [{path: a, expression: value}]}\n  fromHost:\n    nodes: {patches: [{path: a, expression: value}]}\n",
    );
    const r = await run(
      ["patch", "--config", config, "--direction", "toHost", ...vc, "-"],
      '{"apiVersion":"apps/v1","kind":"Deployment"}',
    );
    assert.equal(r.status, 1);
    assert.equal(
      r.stderr,
      "error: the config has no patches for Deployment in apps/v1; it has patches for: Pod (sync.toHost.pods.patches), Node (sync.fromHost.nodes.patches)\n",
    );
  });

  it("custom resources: the group's only entry, else --resource says which", async () => {
    const config = join(dir, "crs.yaml");
    const entry = (p: string) =>
      `{enabled: true, patches: [{path: spec.a, expression: '"${p}" + value'}]}`;
    writeFileSync(
      config,
      `sync:\n  toHost:\n    customResources:\n      certificates.cert-manager.io: ${entry("c-")}\n      issuers.cert-manager.io: ${entry("i-")}\n      widgets.example.com: ${entry("w-")}\n`,
    );
    const patch = (object: Obj, ...flags: string[]) =>
      run(
        ["patch", "--config", config, "--direction", "toHost", ...vc, ...flags, "-"],
        JSON.stringify(object),
      );
    const issuer = { apiVersion: "cert-manager.io/v1", kind: "Issuer", spec: { a: "x" } };
    const [widget, ambiguous, chosen, wrong] = await Promise.all([
      patch({ apiVersion: "example.com/v1", kind: "Widget", spec: { a: "x" } }),
      patch(issuer),
      patch(issuer, "--resource", "issuers"),
      patch(issuer, "--resource", "nope"),
    ]);
    assert.equal(widget.status, 0, widget.stderr);
    assert.deepEqual((JSON.parse(widget.stdout) as Obj)["spec"], { a: "w-x" });
    assert.equal(ambiguous.status, 1);
    assert.equal(
      ambiguous.stderr,
      "error: the config has patches for several custom resources of group cert-manager.io (certificates, issuers), and the plural of Issuer cannot be known from the object: pass --resource with one of them\n",
    );
    assert.equal(chosen.status, 0, chosen.stderr);
    assert.deepEqual((JSON.parse(chosen.stdout) as Obj)["spec"], { a: "i-x" });
    assert.equal(wrong.status, 1);
    assert.match(
      wrong.stderr,
      /^error: the config has no patches for Issuer in cert-manager\.io\/v1 \(--resource nope\); it has patches for: certificates\.cert-manager\.io/,
    );
  });

  it("a kind both sides patch asks for --section going host → virtual", async () => {
    const config = join(dir, "both.yaml");
    writeFileSync(
      config,
      "sync:\n  toHost:\n    storageClasses: {patches: [{path: a, expression: '\"t-\" + value', reverseExpression: 'value.slice(2)'}]}\n  fromHost:\n    storageClasses: {patches: [{path: a, expression: '\"f-\" + value'}]}\n",
    );
    const object = JSON.stringify({
      apiVersion: "storage.k8s.io/v1",
      kind: "StorageClass",
      a: "t-x",
    });
    const patch = (...flags: string[]) =>
      run(["patch", "--config", config, ...vc, ...flags, "-"], object);
    const [there, both, toHost, fromHost] = await Promise.all([
      patch("--direction", "toHost"),
      patch("--direction", "toVirtual"),
      patch("--direction", "toVirtual", "--section", "toHost"),
      patch("--direction", "toVirtual", "--section", "fromHost"),
    ]);
    assert.equal(JSON.parse(there.stdout).a, "t-t-x");
    assert.equal(both.status, 1);
    assert.match(both.stderr, /pass --section toHost or --section fromHost\n$/);
    assert.equal(JSON.parse(toHost.stdout).a, "x");
    assert.equal(JSON.parse(fromHost.stdout).a, "f-t-x");
  });

  it("translate names a Pod as vCluster does and applies the Pod patches", async () => {
    const config = join(dir, "pods.yaml");
    writeFileSync(
      config,
      "sync:\n  toHost:\n    pods:\n      patches:\n        - {path: 'metadata.labels[\"team\"]', expression: '\"tenant-\" + value'}\n",
    );
    const pod = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "web", namespace: "shop", uid: "u-1", labels: { team: "a" } },
      spec: { containers: [{ name: "c", image: "nginx" }] },
    };
    const [r, node] = await Promise.all([
      run(["translate", "--config", config, ...vc, "-"], JSON.stringify(pod)),
      // A cluster-scoped or fromHost kind has no such naming: vgate patch is the dry run for it.
      run(
        ["translate", "--config", config, ...vc, "-"],
        JSON.stringify({ apiVersion: "v1", kind: "Node", metadata: { name: "n" } }),
      ),
    ]);
    assert.equal(r.status, 0, r.stderr);
    const host = JSON.parse(r.stdout) as { metadata: Obj };
    assert.equal(host.metadata["name"], "web-x-shop-x-my-vc");
    assert.equal(host.metadata["namespace"], "vcluster-my-vc");
    const annotations = host.metadata["annotations"] as Record<string, string>;
    assert.equal(annotations["vcluster.loft.sh/object-kind"], "/v1, Kind=Pod");
    assert.equal(annotations["vcluster.loft.sh/object-name"], "web");
    assert.equal((host.metadata["labels"] as Record<string, string>)["team"], "tenant-a");
    assert.equal(node.status, 1);
    assert.match(node.stderr, /no patches for Node in v1; it has patches for: Pod/);
  });

  it("check-config prints a line per kind with patches, in the table's order", async () => {
    const config = join(dir, "summary.yaml");
    writeFileSync(
      config,
      [
        "sync:",
        "  toHost:",
        "    services: {patches: [{path: a, expression: value}, {path: b, labels: {}}]}",
        "    customResources:",
        "      certificates.cert-manager.io: {enabled: true, patches: [{path: a, reverseExpression: value}]}",
        "  fromHost:",
        "    nodes: {enabled: true, patches: [{path: a, expression: value}]}",
        "    configMaps: {patches: [{path: a, reverseExpression: value}]}",
        "",
      ].join("\n"),
    );
    const r = await run(["check-config", config]);
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(r.stdout.trimEnd().split("\n"), [
      "OK",
      "sync.toHost.services.patches: 2 patches (expression virtual → host, reverseExpression host → virtual)",
      "sync.toHost.customResources.certificates.cert-manager.io.patches: 1 patch (expression virtual → host, reverseExpression host → virtual)",
      "sync.fromHost.nodes.patches: 1 patch (expression host → virtual)",
      "sync.fromHost.configMaps.patches: 1 patch (reverseExpression host → virtual), not enabled",
    ]);
  });
});
