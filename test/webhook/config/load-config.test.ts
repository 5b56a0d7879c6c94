import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "mocha";
import {
  loadVClusterConfig,
  readVClusterConfig,
  VClusterConfigError,
} from "../../../webhook/src/config/load-config.js";

function problemsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof VClusterConfigError);
    return err.problems;
  }
  assert.fail("expected a VClusterConfigError");
}

describe("config/load-config", () => {
  it("an empty file is a problem, not a config without patches", () => {
    for (const text of ["", "\n# only a comment\n", "---\n", "null\n", "~"]) {
      assert.deepEqual(
        problemsOf(() => loadVClusterConfig(text, "vcluster.yaml")),
        [
          'vcluster.yaml is empty: a vCluster config is a YAML map such as "sync: {toHost: {endpoints: {patches: [...]}}}"',
        ],
      );
    }
  });

  it("merges defaults into an empty map", () => {
    const config = loadVClusterConfig("{}", "vcluster.yaml");
    assert.deepEqual(config, {
      raw: {
        sync: {
          toHost: {
            endpoints: { enabled: true, patches: [] },
            namespaces: { enabled: false, mappings: { byName: {} } },
          },
        },
      },
      endpoints: { enabled: true, patches: [] },
      namespaces: { enabled: false, mappings: {} },
      patchSets: [],
    });
  });

  it("keeps explicit values and other sections, and types the patches", () => {
    const config = loadVClusterConfig(
      `
controlPlane: {distro: {k8s: {enabled: true}}}
sync:
  toHost:
    pods: {enabled: true}
    endpoints:
      enabled: false
      patches:
        - path: metadata.annotations["a"]
          expression: 'value + "x"'
          reverseExpression: ""
        - path: spec.ref
          reference: {apiVersion: v1, kind: Secret, namePath: name, kindPath: ""}
        - path: spec.selector
          labels: {}
    namespaces:
      enabled: true
      mappings: {byName: {"dev-*": "h-dev-*"}}
`,
      "vcluster.yaml",
    );
    assert.deepEqual(config.endpoints, {
      enabled: false,
      patches: [
        { path: 'metadata.annotations["a"]', expression: 'value + "x"' },
        { path: "spec.ref", reference: { apiVersion: "v1", kind: "Secret", namePath: "name" } },
        { path: "spec.selector", labels: {} },
      ],
    });
    assert.deepEqual(config.namespaces, { enabled: true, mappings: { "dev-*": "h-dev-*" } });
    const raw = config.raw as { controlPlane: unknown; sync: { toHost: { pods: unknown } } };
    assert.deepEqual(raw.controlPlane, { distro: { k8s: { enabled: true } } });
    assert.deepEqual(raw.sync.toHost.pods, { enabled: true });
  });

  it("reads JSON too", () => {
    const config = loadVClusterConfig(
      '{"sync": {"toHost": {"endpoints": {"patches": [{"path": "a", "expression": "value"}]}}}}',
      "vcluster.json",
    );
    assert.deepEqual(config.endpoints, {
      enabled: true,
      patches: [{ path: "a", expression: "value" }],
    });
  });

  it("a null section loses its defaults, as helm coalesces values (EPS-34)", () => {
    // Helm removes a key set to null together with the chart's default, so Go reads false.
    const config = loadVClusterConfig(
      "sync:\n  toHost:\n    endpoints:\n    namespaces:\n",
      "v.yaml",
    );
    assert.deepEqual(config.endpoints, { enabled: false, patches: [] });
    assert.deepEqual(config.namespaces, { enabled: false, mappings: {} });
    assert.deepEqual(config.raw, { sync: { toHost: {} } });
    for (const text of [
      "sync:",
      "sync: {toHost: null}",
      "sync: {toHost: {endpoints: {enabled: ~}}}",
    ]) {
      assert.equal(loadVClusterConfig(text, "v.yaml").endpoints.enabled, false, text);
    }
    assert.equal(loadVClusterConfig("sync: {toHost: {}}", "v.yaml").endpoints.enabled, true);
  });

  it("reads YAML 1.1 scalars as vCluster's go-yaml v2 does (EPS-34)", () => {
    const config = loadVClusterConfig(
      "sync:\n  toHost:\n    endpoints:\n      enabled: off\n      patches:\n        - {path: 'yes', expression: value}\n",
      "v.yaml",
    );
    assert.deepEqual(config.endpoints, {
      enabled: false,
      patches: [{ path: "yes", expression: "value" }],
    });
    assert.equal(
      loadVClusterConfig("sync: {toHost: {endpoints: {enabled: on}}}", "v").endpoints.enabled,
      true,
    );
    assert.deepEqual(
      problemsOf(() =>
        loadVClusterConfig(
          "sync: {toHost: {endpoints: {patches: [{path: yes, expression: value}]}}}",
          "v",
        ),
      ),
      ["sync.toHost.endpoints.patches[0].path: must be a string, got boolean"],
    );
    const merged = loadVClusterConfig(
      "sync:\n  fromHost: {nodes: &e {enabled: no}}\n  toHost: {endpoints: {<<: *e, patches: []}}\n",
      "v.yaml",
    );
    assert.equal(merged.endpoints.enabled, false);
  });

  it("YAML errors carry file, line and column", () => {
    assert.deepEqual(
      problemsOf(() => loadVClusterConfig("a: 1\nb: 2\na: 3\n", "vc.yaml")),
      ["vc.yaml:3:1: Map keys must be unique"],
    );
    assert.deepEqual(
      problemsOf(() => loadVClusterConfig('{"a": [1, 2}', "vc.json")),
      [
        "vc.json:1:12: Flow sequence in block collection must be sufficiently indented and end with a ]",
        "vc.json:1:12: Flow map must end with a }",
      ],
    );
    assert.deepEqual(
      problemsOf(() => loadVClusterConfig("a: 1\n---\nb: 2\n", "vc.yaml")),
      ["vc.yaml:2:1: more than one YAML document; give one"],
    );
  });

  it("rejects alias bombs", () => {
    const bomb = ["a: &a [x, x, x, x, x, x, x, x, x, x]"];
    for (let i = 1; i < 8; i++)
      bomb.push(
        `${"b".repeat(i)}: &${"b".repeat(i)} [${Array(10)
          .fill(i === 1 ? "*a" : `*${"b".repeat(i - 1)}`)
          .join(", ")}]`,
      );
    const problems = problemsOf(() => loadVClusterConfig(bomb.join("\n"), "bomb.yaml"));
    assert.equal(problems.length, 1);
    assert.equal(problems[0], "bomb.yaml: expands more than 100 aliases");
  });

  it("validation problems are thrown all at once", () => {
    const problems = problemsOf(() =>
      loadVClusterConfig(
        "sync: {toHost: {endpoints: {enabled: 1, patches: [{path: a}]}}}",
        "v.yaml",
      ),
    );
    assert.deepEqual(problems, [
      "sync.toHost.endpoints.enabled: must be a boolean, got number",
      "sync.toHost.endpoints.patches[0] need to use one of: expression, labels or reference",
    ]);
    assert.throws(
      () => loadVClusterConfig("sync: {toHost: {endpoints: {enabled: 1}}}", "v.yaml"),
      /^VClusterConfigError: invalid vCluster config v\.yaml:\n {2}sync\.toHost\.endpoints\.enabled/,
    );
  });

  it("a __proto__ key is data, not a prototype", () => {
    const config = loadVClusterConfig(
      "controlPlane: {__proto__: {polluted: true}}\nsync: {}\n",
      "v.yaml",
    );
    const raw = config.raw as { controlPlane: Record<string, unknown> };
    assert.ok(Object.hasOwn(raw.controlPlane, "__proto__"));
    assert.equal(({} as Record<string, unknown>)["polluted"], undefined);
    // At the top it is an unknown key like any other.
    assert.deepEqual(
      problemsOf(() => loadVClusterConfig("__proto__: {polluted: true}\n", "v.yaml")),
      ["at '': additional properties '__proto__' not allowed"],
    );
  });

  describe("readVClusterConfig", () => {
    let dir = "";
    before(async () => {
      dir = await mkdtemp(join(tmpdir(), "vgate-config-"));
    });
    after(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    it("reads a file", async () => {
      const file = join(dir, "ok.yaml");
      await writeFile(file, "sync: {toHost: {endpoints: {enabled: false}}}\n");
      assert.equal((await readVClusterConfig(file)).endpoints.enabled, false);
    });

    it("a missing file is a VClusterConfigError", async () => {
      const file = join(dir, "missing.yaml");
      await assert.rejects(readVClusterConfig(file), (err: unknown) => {
        assert.ok(err instanceof VClusterConfigError);
        assert.equal(err.problems[0], `cannot read ${file}: no such file; check the path`);
        return true;
      });
    });
  });
});
