// The validation and loading of patches on every kind (docs/decisions.md KND-3): vCluster's rules
// and messages on each kind of PATCH_KINDS and on custom resource entries of both sides, the keys
// of each kind's section, and the keyword that never runs for a kind refused at load.

import assert from "node:assert/strict";
import { describe, it } from "mocha";
import { loadVClusterConfig } from "../../../webhook/src/config/load-config.js";
import { PATCH_KINDS, type PatchKind } from "../../../webhook/src/config/patch-kinds.js";
import { validateVClusterConfig } from "../../../webhook/src/config/validate-config.js";

type Obj = Record<string, unknown>;

function withSection(kind: PatchKind, section: Obj): Obj {
  // A key such as gatewayApi.httpRoutes is a path of objects.
  const nested = kind.key.split(".").reduceRight<Obj>((inner, key) => ({ [key]: inner }), section);
  return { sync: { [kind.section]: nested } };
}

/** A patch every kind runs: the keyword of the direction the kind syncs toward the virtual side. */
function runningPatch(kind: PatchKind, path = "metadata.labels.a"): Obj {
  return { path, [kind.toVirtual!]: "value" };
}

describe("config: patches on every kind (KND-3)", () => {
  for (const kind of PATCH_KINDS) {
    const base = `sync.${kind.section}.${kind.key}`;
    const at = `/sync/${kind.section}/${kind.key.replaceAll(".", "/")}`;
    it(`${base}: vCluster's rules and messages, the section's keys and the keyword rule`, () => {
      const ok = withSection(kind, { enabled: true, patches: [runningPatch(kind)] });
      assert.deepEqual(validateVClusterConfig(ok), []);
      const bad = withSection(kind, {
        enabeld: true,
        patches: [
          { path: "a" },
          { path: "a", labels: {}, reference: { apiVersion: "v1", kind: "Secret" } },
          { path: "metadata.name", [kind.toVirtual!]: "value" },
          { path: "b[", [kind.toVirtual!]: "value(" },
          { path: "c", [kind.toVirtual!]: "value", extra: 1 },
        ],
      });
      assert.deepEqual(validateVClusterConfig(bad), [
        `at '${at}': additional properties 'enabeld' not allowed`,
        `${base}.patches[0] need to use one of: expression, labels or reference`,
        `${base}.patches[1] can only use one of: expression, labels or reference`,
        `${base}.patches[0] and ${base}.patches[1] have the same path "a"`,
        `${base}.patches[2].path: "metadata.name" is not a valid patch path: metadata.name and metadata.namespace are never in an update change set`,
        `${base}.patches[3].path: invalid path "b[": unclosed bracket at position 1`,
        `${base}.patches[3].${kind.toVirtual!}: Unexpected end of input`,
        `at '${at}/patches/4': additional properties 'extra' not allowed`,
      ]);
      const never = (["expression", "reverseExpression"] as const).filter(
        (k) => k !== kind.toHost && k !== kind.toVirtual,
      );
      for (const keyword of never) {
        const wrong = withSection(kind, { patches: [{ path: "a", [keyword]: "value" }] });
        assert.deepEqual(validateVClusterConfig(wrong), [
          `${base}.patches[0].${keyword}: never runs for ${base}, which syncs host → virtual with ${kind.toVirtual!} only`,
        ]);
      }
      assert.equal(never.length, kind.section === "toHost" ? 0 : 1);
    });
  }

  it("the messages name the path error as the path grammar does", () => {
    // The expected text above for "b[" comes from the grammar; pin it here once.
    const problems = validateVClusterConfig({
      sync: { toHost: { pods: { patches: [{ path: "b[", expression: "value" }] } } },
    });
    assert.equal(problems.length, 1);
    assert.match(problems[0]!, /^sync\.toHost\.pods\.patches\[0\]\.path: invalid path "b\["/);
  });

  it("each kind's own keys pass, and only its own (union over vCluster's releases)", () => {
    const config = {
      sync: {
        toHost: {
          pods: { translateImage: {}, enforceTolerations: [], hybridScheduling: {} },
          secrets: { all: true },
          namespaces: { extraLabels: {}, mappingsOnly: true },
          services: { all: true },
        },
        fromHost: {
          nodes: { selector: { all: true }, syncBackChanges: true, clearImageStatus: true },
          configMaps: { mappings: { byName: {} }, selector: {} },
          csiDrivers: { enabled: "auto" },
          events: { enabled: "auto", selector: {} },
          gateways: { allowedRoutes: {}, sanitize: {}, mappings: {}, status: {}, anything: 1 },
          gatewayClasses: { selector: {} },
        },
      },
    };
    assert.deepEqual(validateVClusterConfig(config), [
      "at '/sync/toHost/services': additional properties 'all' not allowed",
      "at '/sync/fromHost/events': additional properties 'selector' not allowed",
      "sync.fromHost.events.enabled: must be a boolean, got string",
      "at '/sync/fromHost/gateways': additional properties 'anything' not allowed",
    ]);
  });

  it("custom resources on both sides: entry keys, scope, rules and the keyword rule", () => {
    const to = "sync.toHost.customResources.certificates.cert-manager.io";
    const from = "sync.fromHost.customResources.issuers.cert-manager.io";
    const config = {
      sync: {
        toHost: {
          customResources: {
            "certificates.cert-manager.io": {
              enabled: true,
              scope: "Namespaced",
              patches: [
                { path: "spec.a", expression: "value", reverseExpression: "value" },
                { path: "spec.a", labels: {} },
              ],
            },
            "empty.example.com": null,
          },
        },
        fromHost: {
          customResources: {
            "issuers.cert-manager.io": {
              enabled: true,
              scope: 7,
              selector: {},
              mappings: {},
              patches: [{ path: "spec.a", expression: "value" }],
            },
            "ok.example.com": {
              enabled: true,
              scope: "Cluster",
              patches: [{ path: "spec.a", reverseExpression: "value" }],
            },
          },
        },
      },
    };
    assert.deepEqual(validateVClusterConfig(config), [
      `${to}.patches[0] and ${to}.patches[1] have the same path "spec.a"`,
      "sync.toHost.customResources.empty.example.com: must be an object, got null",
      `${from}.scope: must be a string, got number`,
      `${from}.patches[0].expression: never runs for sync.fromHost.customResources.issuers.cert-manager.io, which syncs host → virtual with reverseExpression only`,
    ]);
    const toHostWithFromHostKeys = {
      sync: { toHost: { customResources: { "a.b": { enabled: true, selector: {} } } } },
    };
    assert.deepEqual(validateVClusterConfig(toHostWithFromHostKeys), [
      "at '/sync/toHost/customResources/a.b': additional properties 'selector' not allowed",
    ]);
  });

  it("custom resources: vCluster's scope rules, and mappings for a namespaced one from the host", () => {
    const entry = (side: string, name: string, value: Obj): Obj => ({
      sync: { [side]: { customResources: { [name]: { enabled: true, ...value } } } },
    });
    const byName = { byName: { "certs/*": "certs/*" } };
    const cases: [Obj, string[]][] = [
      [entry("fromHost", "w.example.com", { scope: "Namespaced", mappings: byName }), []],
      [entry("fromHost", "w.example.com", { scope: "Cluster" }), []],
      [entry("fromHost", "w.example.com", {}), []],
      [entry("toHost", "w.example.com", { scope: "Namespaced" }), []],
      [
        entry("fromHost", "w.example.com", { scope: "Namespaced", mappings: { byName: {} } }),
        [
          ".selector.mappings is required for Namespaced scope sync.fromHost.customResources['w.example.com']",
        ],
      ],
      [
        entry("fromHost", "w.example.com", { scope: "Cluster", mappings: byName }),
        [
          ".selector.mappings are only supported for sync.fromHost.customResources['w.example.com'] with scope 'Namespaced'",
        ],
      ],
      [
        entry("fromHost", "w.example.com", { scope: "cluster" }),
        [
          "unsupported scope cluster for sync.fromHost.customResources['w.example.com'].scope. Only 'Cluster' and 'Namespaced' are allowed",
        ],
      ],
      [
        entry("toHost", "w.example.com", { scope: "Cluster" }),
        [
          "unsupported scope Cluster for sync.toHost.customResources['w.example.com'].scope. Only 'Namespaced' is allowed",
        ],
      ],
    ];
    for (const [config, problems] of cases) {
      assert.deepEqual(validateVClusterConfig(config), problems, JSON.stringify(config));
    }
  });

  it("sync.toHost.gatewayApi: its keys, and its own patches refused: no syncer applies them", () => {
    const config = {
      sync: {
        toHost: {
          gatewayApi: {
            enabled: "yes",
            grpcRoutes: {},
            patches: [{ path: "metadata.labels.a", expression: "value" }],
            httpRoutes: { enabled: true },
          },
        },
      },
    };
    const base = "sync.toHost.gatewayApi";
    assert.deepEqual(validateVClusterConfig(config), [
      "at '/sync/toHost/gatewayApi': additional properties 'grpcRoutes' not allowed",
      `${base}.enabled: must be a boolean, got string`,
      `${base}.patches: vCluster applies these to no kind; put each under the kind it patches: ${base}.httpRoutes.patches, ${base}.gateways.patches, ${base}.tlsRoutes.patches, ${base}.backendTLSPolicies.patches, ${base}.referenceGrants.patches`,
    ]);
    assert.deepEqual(
      validateVClusterConfig({ sync: { toHost: { gatewayApi: { patches: [] } } } }),
      [],
    );
    assert.deepEqual(validateVClusterConfig({ sync: { toHost: { gatewayApi: 3 } } }), [
      `${base}: must be an object, got number`,
    ]);
    // ReferenceGrants' enabled is vCluster's StrBool ("auto", the chart's default).
    const grants = { sync: { toHost: { gatewayApi: { referenceGrants: { enabled: "auto" } } } } };
    assert.deepEqual(validateVClusterConfig(grants), []);
  });

  it("the Gateway API kinds are enabled as vCluster v0.36 reads it", () => {
    const patch = "{patches: [{path: a, expression: value, reverseExpression: value}]}";
    const from = "{patches: [{path: a, expression: value}]}";
    const enabled = (yaml: string) => {
      const config = loadVClusterConfig(
        `sync:\n  toHost:\n    gatewayApi:\n${yaml}      httpRoutes: ${patch}\n      gateways: ${patch}\n      tlsRoutes: ${patch}\n      referenceGrants: ${patch}\n  fromHost:\n    gatewayClasses: ${from}\n`,
        "vcluster.yaml",
      );
      return Object.fromEntries(config.patchSets.map((s) => [s.kind.key, s.enabled]));
    };
    const none = {
      "gatewayApi.httpRoutes": false,
      "gatewayApi.gateways": false,
      "gatewayApi.tlsRoutes": false,
      "gatewayApi.referenceGrants": false,
      gatewayClasses: false,
    };
    assert.deepEqual(enabled(""), none);
    // The umbrella: Gateways, HTTPRoutes and the GatewayClass import; not TLSRoutes; grants stay
    // `auto`, off without namespace sync.
    assert.deepEqual(enabled("      enabled: true\n"), {
      ...none,
      "gatewayApi.httpRoutes": true,
      "gatewayApi.gateways": true,
      gatewayClasses: true,
    });
    const withNamespaces = loadVClusterConfig(
      `sync:\n  toHost:\n    namespaces: {enabled: true}\n    gatewayApi:\n      tlsRoutes: {enabled: true}\n      referenceGrants: ${patch}\n`,
      "vcluster.yaml",
    );
    assert.deepEqual(
      withNamespaces.patchSets.map((s) => [s.kind.key, s.enabled]),
      [["gatewayApi.referenceGrants", true]],
    );
    const off = loadVClusterConfig(
      `sync:\n  toHost:\n    namespaces: {enabled: true}\n    gatewayApi:\n      enabled: true\n      referenceGrants: {enabled: "false", patches: [{path: a, labels: {}}]}\n`,
      "vcluster.yaml",
    );
    assert.deepEqual(
      off.patchSets.map((s) => [s.kind.key, s.enabled]),
      [["gatewayApi.referenceGrants", false]],
    );
  });

  it("a misspelt key under sync.fromHost is a problem, as under sync.toHost", () => {
    assert.deepEqual(validateVClusterConfig({ sync: { fromHost: { node: {} } } }), [
      "at '/sync/fromHost': additional properties 'node' not allowed",
    ]);
  });

  it("loads every kind with patches into patchSets, enabled as written or the chart's default", () => {
    const config = loadVClusterConfig(
      [
        "sync:",
        "  toHost:",
        "    pods: {patches: [{path: a, expression: value}]}",
        "    ingresses: {patches: [{path: a, expression: value}]}",
        "    endpoints: {enabled: null, patches: [{path: a, expression: value}]}",
        "    services: {enabled: false}",
        "    customResources:",
        "      certificates.cert-manager.io: {enabled: true, patches: [{path: a, labels: {}}]}",
        "  fromHost:",
        "    nodes: {enabled: true, patches: [{path: a, expression: value}]}",
        "    csiNodes: {patches: [{path: a, expression: value}]}",
        "    secrets: {enabled: false, patches: [{path: a, reverseExpression: value}]}",
        "    customResources:",
        "      issuers.cert-manager.io:",
        "        {enabled: true, scope: Cluster, patches: [{path: a, reverseExpression: value}]}",
        "      widgets.example.com:",
        "        enabled: true",
        "        scope: Namespaced",
        "        mappings: {byName: {'shared/*': 'team-a/*'}}",
        "        patches: [{path: a, reverseExpression: value}]",
        "",
      ].join("\n"),
      "vcluster.yaml",
    );
    const sets = config.patchSets.map((s) => ({
      at: `${s.kind.section}.${s.kind.key}`,
      enabled: s.enabled,
      count: s.patches.length,
      namespaced: s.kind.namespaced,
      keywords: [s.kind.toHost, s.kind.toVirtual],
    }));
    const both = ["expression", "reverseExpression"];
    assert.deepEqual(sets, [
      { at: "toHost.pods", enabled: true, count: 1, namespaced: true, keywords: both },
      { at: "toHost.ingresses", enabled: false, count: 1, namespaced: true, keywords: both },
      // null removes the chart's default: Go reads false (EPS-34).
      { at: "toHost.endpoints", enabled: false, count: 1, namespaced: true, keywords: both },
      {
        at: "toHost.customResources.certificates.cert-manager.io",
        enabled: true,
        count: 1,
        namespaced: true,
        keywords: both,
      },
      {
        at: "fromHost.nodes",
        enabled: true,
        count: 1,
        namespaced: false,
        keywords: [null, "expression"],
      },
      // The chart's "auto".
      {
        at: "fromHost.csiNodes",
        enabled: true,
        count: 1,
        namespaced: false,
        keywords: [null, "expression"],
      },
      {
        at: "fromHost.secrets",
        enabled: false,
        count: 1,
        namespaced: true,
        keywords: [null, "reverseExpression"],
      },
      {
        at: "fromHost.customResources.issuers.cert-manager.io",
        enabled: true,
        count: 1,
        namespaced: false,
        keywords: [null, "reverseExpression"],
      },
      {
        at: "fromHost.customResources.widgets.example.com",
        enabled: true,
        count: 1,
        namespaced: true,
        keywords: [null, "reverseExpression"],
      },
    ]);
    // What vCluster syncs from the host: a namespaced custom resource's mappings (KND-90); a
    // cluster-scoped one has none, every object is synced.
    const mappings = config.patchSets.map((s) => s.mappings);
    assert.deepEqual(mappings.slice(-2), [undefined, { "shared/*": "team-a/*" }]);
    // Endpoints keep their own fields, unchanged.
    assert.deepEqual(config.endpoints, {
      enabled: false,
      patches: [{ path: "a", expression: "value" }],
    });
  });
});
