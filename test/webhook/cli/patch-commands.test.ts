// `vgate check-config`, `vgate patch`, `vgate translate` and `vgate bench` as subprocesses, with
// the example files the README shows.

import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { repoRoot } from "../../support/fixtures.js";
import { suiteTempDir } from "../../support/temp-dir.js";

const bin = resolve(repoRoot, "webhook/bin/vgate");
const example = (f: string) => resolve(repoRoot, "webhook/examples", f);
const vc = ["--vcluster-name", "my-vcluster", "--vcluster-namespace", "vcluster-my-vcluster"];
const run = (args: string[], input?: string) =>
  spawnSync(bin, args, { encoding: "utf8", input, timeout: 30_000 });

type Json = Record<string, unknown>;

describe("vgate check-config / patch / translate / bench", function () {
  this.timeout(60_000);
  const dir = suiteTempDir("vgate-cli-");

  it("check-config prints OK for a valid file, then each kind's patches (KND-6)", () => {
    const r = run(["check-config", example("vcluster.yaml")]);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(
      r.stdout,
      "OK\nsync.toHost.endpoints.patches: 3 patches (expression virtual → host, reverseExpression host → virtual)\n",
    );
  });

  it("check-config lists every problem on standard error with vCluster's messages and exits 1", () => {
    const r = run(["check-config", example("vcluster-invalid.yaml")]);
    assert.equal(r.status, 1);
    assert.equal(r.stdout, "");
    // The README's block, line for line.
    assert.deepEqual(r.stderr.trim().split("\n"), [
      'sync.toHost.endpoints.patches[0].path: invalid path "metadata.annotations[\\"unclosed": unclosed quote at position 21',
      "sync.toHost.endpoints.patches[1].expression: Unexpected end of input",
      'sync.toHost.endpoints.patches[1] and sync.toHost.endpoints.patches[2] have the same path "subsets[*].addresses[*].ip"',
      "sync.toHost.endpoints.patches[3] need to use one of: expression, labels or reference",
      "at '/sync/toHost/endpoints/patches/4': additional properties 'expresion' not allowed",
      "sync.toHost.endpoints.patches[4].reference.apiVersion must not be empty",
    ]);
  });

  it("check-config is not OK for an empty file, a non-vCluster file or a misspelt key", () => {
    const cases: [string, string, string][] = [
      ["empty.yaml", "", "is empty: a vCluster config is a YAML map"],
      [
        "deployment.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nspec: {}\n",
        "at '': additional properties 'apiVersion', 'kind', 'spec' not allowed",
      ],
      [
        "typo.yaml",
        "sync:\n  tohost:\n    endpoints:\n      patches: [{path: a, expression: value}]\n",
        "at '/sync': additional properties 'tohost' not allowed",
      ],
    ];
    for (const [name, text, message] of cases) {
      const file = join(dir, name);
      writeFileSync(file, text);
      const r = run(["check-config", file]);
      assert.equal(r.status, 1, name);
      assert.equal(r.stdout, "", name);
      assert.ok(r.stderr.includes(message), `${name}: ${r.stderr}`);
    }
  });

  it("check-config and patch name the position of a YAML error, never its text", () => {
    const secret = "ghp_0123456789abcdefSECRET";
    const file = join(dir, "leaky.yaml");
    writeFileSync(file, `sync: {}\ntoken: "${secret}\\x"\n`);
    const check = run(["check-config", file]);
    assert.equal(check.status, 1);
    assert.equal(check.stderr, `${file}:2:35: invalid escape sequence in a double-quoted string\n`);
    const patch = run(
      ["patch", "--config", example("vcluster.yaml"), "--direction", "toHost", ...vc, "-"],
      `metadata:\n  annotations: {token: "${secret}\\x"}\n`,
    );
    assert.equal(patch.status, 1);
    assert.equal(
      patch.stderr,
      "error: standard input is neither JSON nor YAML:\n  standard input:2:51: invalid escape sequence in a double-quoted string\n",
    );
  });

  it("patch refuses input nested deeper than 100 levels, JSON or YAML", () => {
    for (const [open, close] of [
      ["[", "]"],
      ['{"a":', "}"],
    ] as const) {
      const text = `{"spec": ${open.repeat(200)}1${close.repeat(200)}}`;
      const r = run(
        ["patch", "--config", example("vcluster.yaml"), "--direction", "toHost", ...vc, "-"],
        text,
      );
      assert.equal(r.status, 1);
      assert.equal(r.stderr, "error: standard input: nested deeper than 100 levels\n");
    }
  });

  it("patch reads vcluster.yaml once: a pipe (--config <(...)) works", async () => {
    // A FIFO can be read once; a second read would wait for a writer forever.
    const fifo = join(dir, "config.fifo");
    const made = spawnSync("mkfifo", [fifo]);
    assert.equal(made.status, 0, String(made.stderr));
    const child = spawn(
      bin,
      ["patch", "--config", fifo, "--direction", "toHost", ...vc, example("endpoints.yaml")],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += String(c)));
    child.stderr.on("data", (c: Buffer) => (stderr += String(c)));
    const exited = new Promise<number | null>((res) => child.once("exit", res));
    await writeFile(fifo, readFileSync(example("vcluster.yaml")));
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    try {
      assert.equal(await exited, 0, stderr);
    } finally {
      clearTimeout(timer);
    }
    const meta = (JSON.parse(stdout) as { metadata: { annotations: Record<string, string> } })
      .metadata;
    assert.equal(meta.annotations.owner, "tenant-team-a");
  });

  it("check-config reports a missing file and usage errors", () => {
    const missing = run(["check-config", join(dir, "nope.yaml")]);
    assert.equal(missing.status, 1);
    assert.match(missing.stdout + missing.stderr, /nope\.yaml/);
    assert.equal(run(["check-config"]).status, 2);
  });

  it("patch applies expressions toHost and prints JSON; --explain says what matched", () => {
    const r = run([
      "patch",
      "--config",
      example("vcluster.yaml"),
      "--direction",
      "toHost",
      ...vc,
      "--explain",
      example("endpoints.yaml"),
    ]);
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout) as Json;
    const meta = out.metadata as { annotations: Record<string, string> };
    assert.equal(meta.annotations.owner, "tenant-team-a");
    const subsets = out.subsets as { addresses: { hostname: string }[] }[];
    assert.equal(subsets[0]!.addresses[0]!.hostname, "db-0-my-vcluster");
    assert.match(
      r.stderr,
      /patches\[0\] "metadata\.annotations\[\\"owner\\"\]" \(expression\): matched metadata\.annotations\.owner/,
    );
    assert.match(r.stderr, /patches\[1\] .* matched subsets\.0\.addresses\.0\.hostname/);
  });

  it("patch toVirtual runs reverseExpression and drops fields without one", () => {
    const host = {
      metadata: { annotations: { owner: "tenant-team-a" } },
      subsets: [{ addresses: [{ hostname: "db-0-my-vcluster" }] }],
    };
    const r = run(
      [
        "patch",
        "--config",
        example("vcluster.yaml"),
        "--direction",
        "toVirtual",
        "--change-set",
        ...vc,
        "-",
      ],
      JSON.stringify(host),
    );
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout) as Json;
    assert.deepEqual((out.metadata as Json).annotations, { owner: "team-a" });
    // patches[1] has no reverseExpression: the field is dropped from the change set
    // (docs/decisions.md EPS-6).
    assert.deepEqual(out.subsets, [{ addresses: [{}] }]);
  });

  it("patch --objects resolves references host → virtual through bookkeeping annotations", () => {
    const host = {
      metadata: {
        namespace: "vcluster-my-vcluster",
        annotations: { "example.com/tls-secret": "v2uk23j1cw6bl7" },
      },
    };
    const objects = join(dir, "objects.yaml");
    writeFileSync(
      objects,
      [
        "- apiVersion: v1",
        "  kind: Secret",
        "  metadata:",
        "    name: v2uk23j1cw6bl7",
        "    namespace: vcluster-my-vcluster",
        "    annotations:",
        "      vcluster.loft.sh/object-name: db-tls",
        "      vcluster.loft.sh/object-namespace: default",
      ].join("\n"),
    );
    const hostFile = join(dir, "host.json");
    writeFileSync(hostFile, JSON.stringify(host));
    const args = [
      "patch",
      "--config",
      example("vcluster.yaml"),
      "--direction",
      "toVirtual",
      ...vc,
      "--host-object",
      hostFile,
    ];
    const r = run([...args, "--objects", objects, hostFile]);
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { metadata: { annotations: Record<string, string> } };
    assert.equal(out.metadata.annotations["example.com/tls-secret"], "db-tls");
    // Without the objects the host name cannot be mapped back: unchanged, with a warning.
    const unknown = run([...args, hostFile]);
    assert.equal(unknown.status, 0, unknown.stderr);
    assert.equal(
      (JSON.parse(unknown.stdout) as typeof out).metadata.annotations["example.com/tls-secret"],
      "v2uk23j1cw6bl7",
    );
    assert.match(unknown.stderr, /^Warning: /m);
  });

  it("patch reports an expression error with the patch index and path, exit 1", () => {
    const cfg = join(dir, "throws.yaml");
    writeFileSync(
      cfg,
      "sync:\n  toHost:\n    endpoints:\n      patches:\n        - path: metadata.name2\n          expression: 'value.nope.deeper'\n",
    );
    const r = run(
      ["patch", "--config", cfg, "--direction", "toHost", ...vc, "-"],
      JSON.stringify({ metadata: { name2: "x" } }),
    );
    assert.equal(r.status, 1);
    assert.match(r.stderr, /^error: .*patches\[0\]/);
    assert.match(r.stderr, /metadata\.name2/);
  });

  it("patch stops a runaway expression at the deadline", () => {
    const cfg = join(dir, "loop.yaml");
    writeFileSync(
      cfg,
      "sync:\n  toHost:\n    endpoints:\n      patches:\n        - path: a\n          expression: 'while (true) {}'\n",
    );
    const started = Date.now();
    const r = run(
      ["patch", "--config", cfg, "--direction", "toHost", "--timeout", "200ms", ...vc, "-"],
      '{"a":1}',
    );
    assert.equal(r.status, 1);
    assert.match(r.stderr, /patches\[0\]/);
    assert.ok(Date.now() - started < 15_000);
  });

  it("patch refuses an invalid config with every problem listed", () => {
    const r = run([
      "patch",
      "--config",
      example("vcluster-invalid.yaml"),
      "--direction",
      "toHost",
      ...vc,
      example("endpoints.yaml"),
    ]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /^error: invalid config/);
    assert.match(r.stderr, /need to use one of/);
  });

  it("patch needs its flags", () => {
    const r = run([
      "patch",
      "--config",
      example("vcluster.yaml"),
      ...vc,
      example("endpoints.yaml"),
    ]);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /--direction/);
    assert.equal(run(["patch", "--help"]).status, 0);
  });

  it("translate prints the host Endpoints vCluster would create, patched", () => {
    const r = run([
      "translate",
      "--config",
      example("vcluster.yaml"),
      ...vc,
      example("endpoints.yaml"),
    ]);
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout) as Json;
    const meta = out.metadata as {
      name: string;
      namespace: string;
      annotations: Record<string, string>;
      labels: Record<string, string>;
    };
    assert.equal(meta.name, "db-x-default-x-my-vcluster");
    assert.equal(meta.namespace, "vcluster-my-vcluster");
    assert.equal(meta.annotations["vcluster.loft.sh/object-name"], "db");
    assert.equal(meta.annotations["vcluster.loft.sh/object-namespace"], "default");
    assert.equal(meta.annotations["vcluster.loft.sh/object-kind"], "/v1, Kind=Endpoints");
    assert.equal(meta.labels["vcluster.loft.sh/managed-by"], "my-vcluster");
    assert.equal(meta.annotations.owner, "tenant-team-a");
    // The reference patch: single-namespace short name (docs/decisions.md EPS-1).
    assert.match(meta.annotations["example.com/tls-secret"]!, /^v[0-9a-z]{13}$/);
    const address = (out.subsets as { addresses: Json[] }[])[0]!.addresses[0] as {
      targetRef: Json;
    };
    assert.equal(address.targetRef.name, "db-0-x-default-x-my-vcluster");
    assert.equal(address.targetRef.namespace, "vcluster-my-vcluster");
  });

  it("translate names the vCluster's Service as owner with --vcluster-service-uid, as vCluster does", () => {
    const uid = "80b1eb85-6bb8-46d6-bd20-efe54741c2be";
    const args = ["translate", "--config", example("vcluster.yaml"), ...vc];
    const r = run([...args, "--vcluster-service-uid", uid, example("endpoints.yaml")]);
    assert.equal(r.status, 0, r.stderr);
    const meta = (JSON.parse(r.stdout) as Json).metadata as Json;
    assert.deepEqual(meta.ownerReferences, [
      { apiVersion: "v1", kind: "Service", name: "my-vcluster", uid, controller: false },
    ]);
    const without = run([...args, example("endpoints.yaml")]);
    assert.equal(
      ((JSON.parse(without.stdout) as Json).metadata as Json).ownerReferences,
      undefined,
    );
  });

  it("translate refuses an object vCluster's syncer leaves to another controller", () => {
    const r = run(
      ["translate", "--config", example("vcluster.yaml"), ...vc, "-"],
      JSON.stringify({
        apiVersion: "v1",
        kind: "Endpoints",
        metadata: {
          name: "db",
          namespace: "default",
          labels: { "vcluster.loft.sh/controlled-by": "someone" },
        },
      }),
    );
    assert.equal(r.status, 1);
    assert.equal(r.stdout, "");
    assert.match(
      r.stderr,
      /creates no host object for this Endpoints: it is labelled vcluster.loft.sh\/controlled-by=someone/,
    );
  });

  it("translate refuses a kind the config has no patches for, naming those it has (KND-4)", () => {
    const r = run(
      ["translate", "--config", example("vcluster.yaml"), ...vc, "-"],
      '{"apiVersion":"v1","kind":"Service"}',
    );
    assert.equal(r.status, 1);
    assert.equal(
      r.stderr,
      "error: the config has no patches for Service in v1; it has patches for: Endpoints (sync.toHost.endpoints.patches)\n",
    );
  });

  it("bench prints one JSON line per scenario in the goja harness's format", () => {
    const corpus = join(dir, "corpus.json");
    writeFileSync(
      corpus,
      JSON.stringify({
        vcluster: { name: "vc", namespace: "vc-ns" },
        scenarios: [
          {
            name: "tiny",
            object: { metadata: { annotations: { a: "1" } } },
            patches: [{ path: "metadata.annotations[*]", expression: '"x" + value' }],
          },
        ],
      }),
    );
    for (const engine of ["sandbox", "unsandboxed"]) {
      const r = run([
        "bench",
        "--corpus",
        corpus,
        "--seconds",
        "0.3",
        "--engine",
        engine,
        "--workers",
        "1",
      ]);
      assert.equal(r.status, 0, r.stderr);
      const line = JSON.parse(r.stdout.trim()) as Json;
      assert.deepEqual(Object.keys(line), [
        "engine",
        "scenario",
        "objects",
        "ns_per_object",
        "objects_per_second",
      ]);
      assert.equal(line.scenario, "tiny");
      assert.ok((line.objects as number) > 0);
    }
  });
});
