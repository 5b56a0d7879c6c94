// PATCH_KINDS against vCluster itself (docs/decisions.md KND-1, KND-3, KND-92), in two releases:
// the module test/kube/vcluster pins (v0.34, the syncer the cluster tier runs) and the newer one
// test/kube/versions.env names VCLUSTER_SCHEMA_VERSION (v0.36.1, with the Gateway API kinds; make
// kube downloads it). Every place a release's chart schema (chart/values.schema.json) accepts
// `patches` is a kind of PATCH_KINDS, one of the two customResources maps or a section of
// PATCHES_OF_NO_KIND, and the other way round (the Gateway API kinds only from v0.36); each
// section's keys in that schema are keys vgate allows; and a config with a patch on every kind the
// release has is accepted by vCluster (schema and Go rules, vcluster-oracle.ts) and by vgate alike.
// Each release skips, saying why, when Go or its module is not there.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "mocha";
import {
  PATCH_KINDS,
  PATCHES_OF_NO_KIND,
  type PatchKind,
} from "../../../webhook/src/config/patch-kinds.js";
import { kindKeys } from "../../../webhook/src/config/schema-keys.js";
import { validateVClusterConfig } from "../../../webhook/src/config/validate-config.js";
import {
  findVClusterModule,
  findVClusterSchemaModule,
  type ModuleLookup,
} from "../../support/vcluster/vcluster-module.js";
import { VClusterOracle } from "./vcluster-oracle.js";

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

/** The Gateway API kinds came with sync.toHost.gatewayApi in v0.35 (KND-92). */
const GATEWAY_API = "gateway.networking.k8s.io";
const since035 = (place: string) =>
  place === "toHost.gatewayApi" ||
  PATCH_KINDS.some((k) => k.group === GATEWAY_API && `${k.section}.${k.key}` === place);

function oracleTests(release: string, lookup: ModuleLookup, gatewayApi: boolean) {
  const SKIP = "missing" in lookup ? ` (skipped: ${lookup.missing})` : "";
  const moduleDir = "found" in lookup ? lookup.found.dir : "";
  const version = "found" in lookup ? ` ${lookup.found.version}` : "";
  describe(`${release}${version}${SKIP}`, () =>
    oracleCases(moduleDir, SKIP === "" ? it : it.skip, gatewayApi));
}

function oracleCases(moduleDir: string, run: typeof it | typeof it.skip, gatewayApi: boolean) {
  /** The release's kinds: PATCH_KINDS less the Gateway API ones before v0.35. */
  const kinds: PatchKind[] = PATCH_KINDS.filter(
    (k) => gatewayApi || !since035(`${k.section}.${k.key}`),
  );
  const schema = (): Obj =>
    JSON.parse(readFileSync(join(moduleDir, "chart/values.schema.json"), "utf8")) as Obj;

  run("the schema accepts patches exactly on PATCH_KINDS and the two customResources maps", () => {
    const places = patchPlaces(schema());
    const ours = [
      ...kinds.map((k) => `sync.${k.section}.${k.key}`),
      ...PATCHES_OF_NO_KIND.filter((p) => gatewayApi || !since035(p)).map((p) => `sync.${p}`),
      "sync.toHost.customResources.*",
      "sync.fromHost.customResources.*",
    ];
    assert.deepEqual([...places.keys()].sort(), ours.sort());
  });

  run("each section's keys in the schema are keys vgate allows there", () => {
    for (const [place, keys] of patchPlaces(schema())) {
      const [, section, ...rest] = place.split(".");
      // A customResources entry's keys are the map's, whatever its name.
      const key = rest[0] === "customResources" ? "customResources" : rest.join(".");
      const allowed = kindKeys(section!, key);
      const missing = keys.filter((k) => !allowed.includes(k));
      assert.deepEqual(missing, [], `${place}: ${keys.join(", ")}`);
    }
  });

  run("a patch on every kind: vCluster and vgate both accept it", () => {
    const oracle = new VClusterOracle(moduleDir);
    const sync: Record<string, Obj> = { toHost: {}, fromHost: {} };
    for (const kind of kinds) {
      const keys = kind.key.split(".");
      let parent = sync[kind.section]!;
      for (const key of keys.slice(0, -1)) parent = (parent[key] ??= {}) as Obj;
      parent[keys.at(-1)!] = {
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
}

describe("config: PATCH_KINDS against vCluster's chart schema", () => {
  oracleTests(
    "the release the syncer is built from (test/kube/vcluster)",
    findVClusterModule(),
    false,
  );
  oracleTests(
    "a release with the Gateway API kinds (VCLUSTER_SCHEMA_VERSION)",
    findVClusterSchemaModule(),
    true,
  );
});
