import assert from "node:assert/strict";
import { describe, it } from "mocha";
import { parse } from "yaml";
import { validateVClusterConfig } from "../../../webhook/src/config/validate-config.js";

const P = "sync.toHost.endpoints.patches";

/** Validates `patches` given as YAML list items under sync.toHost.endpoints.patches. */
function patches(yamlItems: string): string[] {
  const indented = yamlItems
    .trim()
    .split("\n")
    .map((l) => `        ${l}`)
    .join("\n");
  return validateVClusterConfig(
    parse(`sync:\n  toHost:\n    endpoints:\n      patches:\n${indented}\n`),
  );
}

describe("config/validate-config", () => {
  it("accepts a full valid config and leaves other sections alone (a kind's own keys are checked: KND-3)", () => {
    const config = parse(`
controlPlane: {distro: {k8s: {enabled: true}}}
sync:
  fromHost: {nodes: {enabled: true}}
  toHost:
    pods: {enabled: true, translateImage: {a: b}}
    services: {anything: [1]}
    endpoints:
      enabled: true
      patches:
        - path: metadata.annotations["example.com/owner"]
          expression: 'value.toUpperCase()'
          reverseExpression: 'value.toLowerCase();'
        - path: metadata.annotations['example.com/secret-name']
          reference: {apiVersion: v1, kind: Secret}
        - path: spec.secretRef
          reference: {apiVersion: v1, kind: Secret, namePath: name, namespacePath: namespace}
        - path: spec.selector.matchLabels
          labels: {}
        - path: ""
          reverseExpression: '(() => { value.x ??= 1; return value })()'
    namespaces:
      enabled: true
      mappingsOnly: true
      mappings: {byName: {"team-a": "host-a", "dev-*": "h-dev-*"}}
`);
    assert.deepEqual(validateVClusterConfig(config), [
      "at '/sync/toHost/services': additional properties 'anything' not allowed",
    ]);
  });

  it("accepts empty and null sections", () => {
    assert.deepEqual(validateVClusterConfig(null), []);
    assert.deepEqual(validateVClusterConfig({}), []);
    assert.deepEqual(
      validateVClusterConfig(parse("sync:\n  toHost:\n    endpoints:\n      enabled:\n")),
      [],
    );
    for (const text of ["sync:", "sync: {toHost: ~}", "sync: {toHost: {endpoints: null}}"]) {
      assert.deepEqual(validateVClusterConfig(parse(text)), [], text);
    }
  });

  it("refuses null where the chart has no default (the schema's type) (EPS-34)", () => {
    assert.deepEqual(
      validateVClusterConfig(parse("sync:\n  toHost:\n    endpoints:\n      patches:\n")),
      ["sync.toHost.endpoints.patches: must be an array, got null"],
    );
    assert.deepEqual(patches(`- {path: a, expression: null, reverseExpression: value}`), [
      `${P}[0].expression: must be a string, got null`,
    ]);
    assert.deepEqual(
      patches(`- {path: ~, reference: {apiVersion: v1, kind: Secret, namePath: null}}`),
      [
        `${P}[0].path: must be a string, got null`,
        `${P}[0].reference.namePath: must be a string, got null`,
      ],
    );
  });

  describe("vCluster's exact messages (docs/reference.md#patch-config-validation)", () => {
    it("can only use one of", () => {
      assert.deepEqual(patches(`- {path: a, expression: value, labels: {}}`), [
        `${P}[0] can only use one of: expression, labels or reference`,
      ]);
      assert.deepEqual(
        patches(`- {path: a, reverseExpression: value, reference: {apiVersion: v1, kind: Secret}}`),
        [`${P}[0] can only use one of: expression, labels or reference`],
      );
    });

    it("expression and reverseExpression together count as one mode", () => {
      assert.deepEqual(patches(`- {path: a, expression: value, reverseExpression: value}`), []);
    });

    it("need to use one of (an empty expression is no expression)", () => {
      assert.deepEqual(patches(`- {path: a}`), [
        `${P}[0] need to use one of: expression, labels or reference`,
      ]);
      assert.deepEqual(patches(`- {path: a, expression: "", reverseExpression: ""}`), [
        `${P}[0] need to use one of: expression, labels or reference`,
      ]);
      // Go would read a null labels as unset, but the chart's schema refuses it first.
      assert.deepEqual(patches(`- {path: a, expression: "", labels: null}`), [
        `${P}[0].labels: must be an object, got null`,
        `${P}[0] need to use one of: expression, labels or reference`,
      ]);
    });

    it("same path, also after normalisation", () => {
      assert.deepEqual(
        patches(`- {path: a.b, expression: value}\n- {path: a.b, expression: value}`),
        [`${P}[0] and ${P}[1] have the same path "a.b"`],
      );
      assert.deepEqual(
        patches(
          `- {path: 'a["b"]', expression: value}\n- {path: c, expression: value}\n- {path: a.b, expression: value}`,
        ),
        [`${P}[0] and ${P}[2] have the same path "a.b"`],
      );
      assert.deepEqual(
        patches(`- {path: a.b, expression: value}\n- {path: a.c, expression: value}`),
        [],
      );
    });
  });

  describe("documented rules and vgate's own checks (docs/decisions.md EPS-9)", () => {
    it("path grammar errors", () => {
      const problems = patches(
        `- {path: "a[", expression: value}\n- {path: "a[]", expression: value}\n- {path: "a[-1]", expression: value}\n- {path: "a[[0]]", expression: value}\n- {path: 'a."b', expression: value}`,
      );
      assert.equal(problems.length, 5);
      assert.match(
        problems[0]!,
        /^sync\.toHost\.endpoints\.patches\[0\]\.path: invalid path "a\[": /,
      );
      assert.match(
        problems[1]!,
        /^sync\.toHost\.endpoints\.patches\[1\]\.path: invalid path "a\[\]": /,
      );
      assert.match(
        problems[2]!,
        /^sync\.toHost\.endpoints\.patches\[2\]\.path: invalid path "a\[-1\]": /,
      );
      assert.match(problems[3]!, /^sync\.toHost\.endpoints\.patches\[3\]\.path: invalid path /);
      assert.match(problems[4]!, /^sync\.toHost\.endpoints\.patches\[4\]\.path: invalid path /);
    });

    it("expression syntax errors, compiled but never run", () => {
      assert.deepEqual(patches(`- {path: a, expression: "value +"}`), [
        `${P}[0].expression: Unexpected end of input`,
      ]);
      assert.deepEqual(patches(`- {path: a, reverseExpression: "return value"}`), [
        `${P}[0].reverseExpression: Illegal return statement`,
      ]);
      // Running this would throw; compiling it does not.
      assert.deepEqual(
        patches(`- {path: a, expression: "(() => { throw new Error('ran') })()"}`),
        [],
      );
    });

    it("expressions are strict mode, as in SES, and cannot import", () => {
      assert.deepEqual(patches(`- {path: a, expression: "010"}`), [
        `${P}[0].expression: Octal literals are not allowed in strict mode.`,
      ]);
      assert.deepEqual(patches(`- {path: a, expression: 'import("fs")'}`), [
        `${P}[0].expression: possible import expression rejected; expressions cannot import`,
      ]);
      assert.deepEqual(patches(`- {path: a, expression: 'value --> 1'}`), [
        `${P}[0].expression: "<!--" and "-->" are rejected by the sandbox`,
      ]);
    });

    it("metadata.name and metadata.namespace are not valid patch paths", () => {
      assert.deepEqual(
        patches(
          `- {path: metadata.name, expression: value}\n- {path: 'metadata["namespace"]', expression: value}`,
        ),
        [
          `${P}[0].path: "metadata.name" is not a valid patch path: metadata.name and metadata.namespace are never in an update change set`,
          `${P}[1].path: "metadata[\\"namespace\\"]" is not a valid patch path: metadata.name and metadata.namespace are never in an update change set`,
        ],
      );
      assert.deepEqual(patches(`- {path: metadata.labels.name, expression: value}`), []);
    });

    it("reference: required, non-empty apiVersion and kind", () => {
      assert.deepEqual(patches(`- {path: a, reference: {apiVersion: "", kind: " "}}`), [
        `${P}[0].reference.apiVersion must not be empty`,
        `${P}[0].reference.kind must not be empty`,
      ]);
      assert.deepEqual(patches(`- {path: a, reference: {}}`), [
        `${P}[0].reference.apiVersion is required`,
        `${P}[0].reference.kind is required`,
      ]);
    });

    it("reference: namePath is required with namespacePath, kindPath or apiVersionPath", () => {
      assert.deepEqual(
        patches(
          `- {path: a, reference: {apiVersion: v1, kind: Secret, kindPath: k, apiVersionPath: v}}`,
        ),
        [`${P}[0].reference.namePath is required when apiVersionPath, kindPath is set`],
      );
      assert.deepEqual(
        patches(
          `- {path: a, reference: {apiVersion: v1, kind: Secret, namePath: n, namespacePath: ns}}`,
        ),
        [],
      );
    });

    it("reference: sub-paths are parsed", () => {
      const problems = patches(
        `- {path: a, reference: {apiVersion: v1, kind: Secret, namePath: "n[", namespacePath: "[]"}}`,
      );
      assert.equal(problems.length, 2);
      assert.match(
        problems[0]!,
        /^sync\.toHost\.endpoints\.patches\[0\]\.reference\.namePath: invalid path "n\["/,
      );
      assert.match(
        problems[1]!,
        /^sync\.toHost\.endpoints\.patches\[0\]\.reference\.namespacePath: invalid path "\[\]"/,
      );
    });

    it("labels must be {}", () => {
      assert.deepEqual(patches(`- {path: a, labels: {x: 1}}`), [
        `at '/sync/toHost/endpoints/patches/0/labels': additional properties 'x' not allowed`,
      ]);
      assert.deepEqual(patches(`- {path: a, labels: true}`), [
        `${P}[0].labels: must be an object, got boolean`,
      ]);
    });

    it("unknown keys at every level, as vCluster's schema reports them (additionalProperties: false)", () => {
      const problems = validateVClusterConfig(
        parse(`
sync:
  toHost:
    endpoints:
      enable: true
      patches:
        - path: a
          expresion: value
          expression: value
        - path: b
          reference: {apiVersion: v1, kind: Secret, name: x}
`),
      );
      assert.deepEqual(problems, [
        `at '/sync/toHost/endpoints': additional properties 'enable' not allowed`,
        `at '/sync/toHost/endpoints/patches/0': additional properties 'expresion' not allowed`,
        `at '/sync/toHost/endpoints/patches/1/reference': additional properties 'name' not allowed`,
      ]);
    });

    it("wrong types", () => {
      const problems = validateVClusterConfig(
        parse(`
sync:
  toHost:
    endpoints:
      enabled: "true"
      patches: {path: a}
`),
      );
      assert.deepEqual(problems, [
        "sync.toHost.endpoints.enabled: must be a boolean, got string",
        "sync.toHost.endpoints.patches: must be an array, got object",
      ]);
      assert.deepEqual(patches(`- 5\n- {path: 1, expression: 2}\n- {expression: value}`), [
        `${P}[0]: must be an object, got number`,
        `${P}[1].path: must be a string, got number`,
        `${P}[1].expression: must be a string, got number`,
        `${P}[2].path is required`,
      ]);
      assert.deepEqual(validateVClusterConfig([1]), ["at '': got array, want object"]);
      assert.deepEqual(validateVClusterConfig("text"), ["at '': got string, want object"]);
      assert.deepEqual(validateVClusterConfig({ sync: "x" }), [
        "sync: must be an object, got string",
      ]);
      assert.deepEqual(validateVClusterConfig({ sync: { toHost: [] } }), [
        "sync.toHost: must be an object, got array",
      ]);
      assert.deepEqual(validateVClusterConfig({ sync: { toHost: { endpoints: 1 } } }), [
        "sync.toHost.endpoints: must be an object, got number",
      ]);
    });

    it("namespace mappings", () => {
      const problems = validateVClusterConfig(
        parse(`
sync:
  toHost:
    namespaces:
      enabled: 1
      mappings:
        byName: {"a-*": "b", "c-*-*": "d-*-*", "e": 3, "ok-*": "h-*"}
`),
      );
      assert.deepEqual(problems, [
        "sync.toHost.namespaces.enabled: must be a boolean, got number",
        'sync.toHost.namespaces.mappings.byName["a-*"]: "*" must be used on both sides of a mapping or on neither',
        'sync.toHost.namespaces.mappings.byName["c-*-*"]: a mapping may use at most one "*" on each side',
        'sync.toHost.namespaces.mappings.byName["e"]: must be a string, got number',
      ]);
      assert.deepEqual(
        validateVClusterConfig({ sync: { toHost: { namespaces: { mappings: { byName: [] } } } } }),
        ["sync.toHost.namespaces.mappings.byName: must be an object, got array"],
      );
    });
  });

  it("a config with 5 problems lists all 5", () => {
    const problems = validateVClusterConfig(
      parse(`
sync:
  toHost:
    endpoints:
      enabled: maybe
      patches:
        - path: "a["
          expression: value
        - path: b
        - path: c
          expression: "value +"
        - path: c
          reference: {apiVersion: v1, kind: Secret}
`),
    );
    assert.deepEqual(problems, [
      "sync.toHost.endpoints.enabled: must be a boolean, got string",
      `${P}[0].path: invalid path "a[": unclosed bracket at position 1`,
      `${P}[1] need to use one of: expression, labels or reference`,
      `${P}[2].expression: Unexpected end of input`,
      `${P}[2] and ${P}[3] have the same path "c"`,
    ]);
  });

  it("never throws on hostile input", () => {
    const hostile = JSON.parse(
      '{"sync":{"toHost":{"endpoints":{"__proto__":{"enabled":1},"patches":[{"path":"a","__proto__":{"labels":{}},"expression":"value"}]}}}}',
    ) as unknown;
    assert.deepEqual(validateVClusterConfig(hostile), [
      "at '/sync/toHost/endpoints': additional properties '__proto__' not allowed",
      "at '/sync/toHost/endpoints/patches/0': additional properties '__proto__' not allowed",
    ]);
  });

  describe("unknown keys on the way to sync.toHost.endpoints (chart/values.schema.json)", () => {
    it("a misspelt key on the path is reported, not silently read as 'no patches'", () => {
      const typo =
        "sync:\n  tohost:\n    endpoints:\n      patches: [{path: a, expression: value}]\n";
      assert.deepEqual(validateVClusterConfig(parse(typo)), [
        "at '/sync': additional properties 'tohost' not allowed",
      ]);
      assert.deepEqual(validateVClusterConfig(parse("Sync: {toHost: {endpoints: {}}}")), [
        "at '': additional properties 'Sync' not allowed",
      ]);
      assert.deepEqual(validateVClusterConfig(parse("sync: {toHost: {endpoint: {}}}")), [
        "at '/sync/toHost': additional properties 'endpoint' not allowed",
      ]);
    });

    it("a file that is not a vCluster config lists its keys in one message, in file order", () => {
      const deployment = parse(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec: {replicas: 1}\n",
      );
      assert.deepEqual(validateVClusterConfig(deployment), [
        "at '': additional properties 'apiVersion', 'kind', 'metadata', 'spec' not allowed",
      ]);
    });

    it("every level is reported, root first", () => {
      const config = parse(`
contolPlane: {}
sync:
  toHots: {}
  toHost:
    pod: {}
    endpoints: {enabled: true, patchs: []}
`);
      assert.deepEqual(validateVClusterConfig(config), [
        "at '': additional properties 'contolPlane' not allowed",
        "at '/sync': additional properties 'toHots' not allowed",
        "at '/sync/toHost': additional properties 'pod' not allowed",
        "at '/sync/toHost/endpoints': additional properties 'patchs' not allowed",
      ]);
    });

    it("accepts every key some vCluster release from v0.20 on accepts on the path", () => {
      const config = parse(`
controlPlane: {}
deletion: {}
deploy: {}
experimental: {}
exportKubeConfig: {}
external: {}
global: {}
integrations: {}
logging: {}
networking: {}
platform: {}
plugin: {}
plugins: {}
policies: {}
privateNodes: {}
pro: true
rbac: {}
serviceCIDR: ""
sleep: {}
sleepMode: {}
snapshots: {}
telemetry: {}
sync:
  fromHost: {}
  toHost:
    configMaps: {}
    customResources: {}
    endpointSlices: {}
    gatewayApi: {}
    ingresses: {}
    networkPolicies: {}
    persistentVolumeClaims: {}
    persistentVolumes: {}
    podDisruptionBudgets: {}
    pods: {}
    priorityClasses: {}
    resourceClaimTemplates: {}
    resourceClaims: {}
    secrets: {}
    serviceAccounts: {}
    services: {}
    storageClasses: {}
    volumeSnapshotContents: {}
    volumeSnapshots: {}
    namespaces: {}
    endpoints: {}
`);
      assert.deepEqual(validateVClusterConfig(config), []);
    });

    it("quotes keys as the schema validator does, escapes pointers, and cuts huge keys", () => {
      const odd = { "it's": 1, 'say "hi"': 2, "tab\there": 3, "a/b~c": { x: 1 } };
      assert.deepEqual(validateVClusterConfig(odd), [
        `at '': additional properties 'it\\'s', 'say "hi"', 'tab\\there', 'a/b~c' not allowed`,
      ]);
      const long = "k".repeat(10_000);
      const [problem] = validateVClusterConfig({ sync: { [long]: 1 } });
      assert.equal(problem, `at '/sync': additional properties '${"k".repeat(64)}...' not allowed`);
    });
  });
});
