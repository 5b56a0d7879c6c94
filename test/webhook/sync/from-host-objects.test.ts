// Which virtual objects vCluster's fromHost syncers write (docs/decisions.md KND-51), read from
// the config's mappings as vCluster v0.34 reads them (pkg/syncer/translator/from_config_translator.go).

import assert from "node:assert/strict";
import { loadVClusterConfig } from "../../../webhook/src/config/load-config.js";
import { mappedFromHost } from "../../../webhook/src/sync/from-host-objects.js";

describe("sync/from-host-objects: mappedFromHost", () => {
  const mappings = {
    "shared/*": "team-a/*",
    "infra/settings": "team-b/app-settings",
    "infra/keep-name": "team-b/*",
    "/own": "team-c/renamed",
    "": "team-d",
    "infra/kube-root-ca.crt": "team-e/ca",
  };
  const cases: [string, string, boolean][] = [
    ["team-a", "anything", true],
    ["team-a", "kube-root-ca.crt", false],
    ["team-b", "app-settings", true],
    ["team-b", "keep-name", true],
    ["team-b", "settings", false],
    ["team-c", "renamed", true],
    ["team-c", "own", false],
    ["team-d", "whatever", true],
    ["team-e", "ca", false],
    ["default", "anything", false],
  ];
  for (const [ns, name, expected] of cases) {
    it(`configMaps ${ns}/${name}: ${expected ? "synced" : "not synced"} from the host`, () => {
      assert.equal(mappedFromHost("configMaps", mappings, ns, name), expected);
    });
  }

  it("a host kube-root-ca.crt is skipped for ConfigMaps only", () => {
    assert.equal(mappedFromHost("secrets", mappings, "team-a", "kube-root-ca.crt"), true);
    assert.equal(mappedFromHost("secrets", mappings, "team-e", "ca"), true);
  });

  it("the config's fromHost configMaps and secrets sets carry their mappings", () => {
    const config = loadVClusterConfig(
      [
        "sync:",
        "  fromHost:",
        "    configMaps:",
        "      enabled: true",
        '      mappings: {byName: {"shared/*": "team-a/*"}}',
        "      patches: [{path: data.a, reverseExpression: value}]",
        "    nodes: {enabled: true, patches: [{path: a, expression: value}]}",
        "",
      ].join("\n"),
      "vcluster.yaml",
    );
    const cms = config.patchSets.find((s) => s.kind.key === "configMaps");
    assert.deepEqual(cms?.mappings, { "shared/*": "team-a/*" });
    const nodes = config.patchSets.find((s) => s.kind.key === "nodes");
    assert.equal(nodes?.mappings, undefined);
  });
});
