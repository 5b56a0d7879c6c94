// PATCH_KINDS against vCluster itself (docs/decisions.md KND-1, KND-3): every place vCluster's chart
// schema (chart/values.schema.json of the module test/kube/vcluster pins) accepts `patches` is a
// kind of PATCH_KINDS or one of the two customResources maps, and the other way round; each
// section's keys in that schema are keys vgate allows; and a config with a patch on every kind is
// accepted by vCluster (schema and Go rules, vcluster-oracle.ts) and by vgate alike. Skips, saying
// why, when Go or the module is not there.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "mocha";
import { PATCH_KINDS } from "../../../webhook/src/config/patch-kinds.js";
import { kindKeys } from "../../../webhook/src/config/schema-keys.js";
import { validateVClusterConfig } from "../../../webhook/src/config/validate-config.js";
import { findVClusterModule } from "../../support/vcluster/vcluster-module.js";
import { VClusterOracle } from "./vcluster-oracle.js";

const lookup = findVClusterModule();
const SKIP = "missing" in lookup ? ` (skipped: ${lookup.missing})` : "";
const moduleDir = "found" in lookup ? lookup.found.dir : "";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** Every schema location (dotted, `*` for a map's entries) whose object has a `patches` property. */
function patchPlaces(schema: Obj): Map<string, string[]> {
  const defs = (schema["$defs"] ?? {}) as Record<string, Obj>;
  const places = new Map<string, string[]>();
  const walk = (node: Obj, path: string[], seen: ReadonlySet<string>): void => {
    const ref = node["$ref"];
    if (typeof ref === "string") {
      const name = ref.split("/").at(-1)!;
      if (seen.has(name)) return;
      walk(defs[name]!, path, new Set([...seen, name]));
      return;
    }
    const props = isObj(node["properties"]) ? node["properties"] : {};
    if ("patches" in props) places.set(path.join("."), Object.keys(props).sort());
    for (const [key, value] of Object.entries(props))
      if (isObj(value)) walk(value, [...path, key], seen);
    if (isObj(node["additionalProperties"]))
      walk(node["additionalProperties"], [...path, "*"], seen);
    if (isObj(node["items"])) walk(node["items"], [...path, "[]"], seen);
    for (const key of ["oneOf", "anyOf", "allOf"]) {
      const list = node[key];
      if (Array.isArray(list)) for (const item of list) if (isObj(item)) walk(item, path, seen);
    }
  };
  walk(schema, [], new Set());
  return places;
}

describe(`config: PATCH_KINDS against vCluster's chart schema${SKIP}`, () => {
  const run = SKIP === "" ? it : it.skip;
  const schema = (): Obj =>
    JSON.parse(readFileSync(join(moduleDir, "chart/values.schema.json"), "utf8")) as Obj;

  run("the schema accepts patches exactly on PATCH_KINDS and the two customResources maps", () => {
    const places = patchPlaces(schema());
    const ours = [
      ...PATCH_KINDS.map((k) => `sync.${k.section}.${k.key}`),
      "sync.toHost.customResources.*",
      "sync.fromHost.customResources.*",
    ];
    assert.deepEqual([...places.keys()].sort(), ours.sort());
  });

  run("each section's keys in the schema are keys vgate allows there", () => {
    for (const [place, keys] of patchPlaces(schema())) {
      const [, section, key] = place.split(".");
      const allowed = kindKeys(section!, key!);
      const missing = keys.filter((k) => !allowed.includes(k));
      assert.deepEqual(missing, [], `${place}: ${keys.join(", ")}`);
    }
  });

  run("a patch on every kind: vCluster and vgate both accept it", () => {
    const oracle = new VClusterOracle(moduleDir);
    const sync: Record<string, Obj> = { toHost: {}, fromHost: {} };
    for (const kind of PATCH_KINDS) {
      sync[kind.section]![kind.key] = {
        patches: [{ path: "metadata.labels.a", [kind.toVirtual!]: "value" }],
      };
    }
    for (const side of ["toHost", "fromHost"]) {
      sync[side]!["customResources"] = {
        "certificates.cert-manager.io": {
          enabled: true,
          scope: "Namespaced",
          patches: [{ path: "spec.a", reverseExpression: "value" }],
          // vCluster requires them for a namespaced custom resource from the host.
          ...(side === "fromHost" ? { mappings: { byName: { "certs/*": "certs/*" } } } : {}),
        },
      };
    }
    const config = { sync };
    const verdict = oracle.judge(config);
    assert.deepEqual([verdict.accepted, verdict.schemaErrors, verdict.goError], [true, [], null]);
    assert.deepEqual(validateVClusterConfig(config), []);
    // And the Go rule's message is the same on a kind other than Endpoints.
    const twice = {
      sync: {
        fromHost: {
          nodes: {
            patches: [
              { path: "a", labels: {} },
              { path: "a", labels: {} },
            ],
          },
        },
      },
    };
    const goError = oracle.judge(twice).goError;
    assert.equal(
      goError,
      'sync.fromHost.nodes.patches[0] and sync.fromHost.nodes.patches[1] have the same path "a"',
    );
    assert.deepEqual(validateVClusterConfig(twice), [goError]);
  });

  run("custom resources' scope and mappings: vCluster and vgate give the same verdict", () => {
    const oracle = new VClusterOracle(moduleDir);
    const byName = { byName: { "certs/*": "certs/*" } };
    const entries: [string, Obj][] = [
      ["fromHost", { scope: "Namespaced", mappings: byName }],
      ["fromHost", { scope: "Namespaced" }],
      ["fromHost", { scope: "Cluster" }],
      ["fromHost", { scope: "Cluster", mappings: byName }],
      ["toHost", { scope: "Namespaced" }],
      ["toHost", { scope: "Cluster" }],
    ];
    for (const [side, entry] of entries) {
      const config = {
        sync: { [side]: { customResources: { "w.example.com": { enabled: true, ...entry } } } },
      };
      const verdict = oracle.judge(config);
      assert.deepEqual(verdict.schemaErrors, [], JSON.stringify(config));
      const vgate = validateVClusterConfig(config);
      assert.deepEqual(
        vgate,
        verdict.goError === null ? [] : [verdict.goError],
        JSON.stringify(config),
      );
    }
  });
});
