// `vgate sync --alongside-vcluster` (docs/decisions.md EPS-25, EPS-26): the shared vcluster.yaml
// must turn vCluster's Endpoints and EndpointSlice sync off, explicitly (both default to true in
// vCluster's chart); anything else is one problem per switch, naming it.

import assert from "node:assert/strict";
import fc from "fast-check";
import type { Json } from "../../../webhook/src/patches/types.js";
import { alongsideVClusterProblems } from "../../../webhook/src/sync/alongside-vcluster.js";

const ENDPOINTS = "sync.toHost.endpoints.enabled";
const SLICES = "sync.toHost.endpointSlices.enabled";

const config = (endpoints: Json | undefined, slices: Json | undefined): Json => ({
  sync: {
    toHost: {
      endpoints: {
        ...(endpoints === undefined ? {} : { enabled: endpoints }),
        patches: [{ path: "subsets[*].addresses[*].ip", expression: "value" }],
      },
      ...(slices === undefined ? {} : { endpointSlices: { enabled: slices } }),
      services: { enabled: true },
    },
  },
});

const named = (problems: string[]) => problems.map((p) => p.split(" ")[0]);

describe("vgate sync --alongside-vcluster: the shared config", () => {
  it("accepts a config that turns both of vCluster's switches off", () => {
    assert.deepEqual(alongsideVClusterProblems(config(false, false)), []);
  });

  it("refuses each switch left on or unset, saying what vCluster would do", () => {
    const problems = alongsideVClusterProblems(config(true, undefined));
    assert.deepEqual(named(problems), [ENDPOINTS, SLICES]);
    assert.match(
      problems[0]!,
      /must be false with --alongside-vcluster \(vCluster's default is true\)/,
    );
    assert.match(problems[0]!, /would write the same host Endpoints as vgate sync/);
    assert.match(problems[1]!, /mirroring controller .* in a loop/);
    assert.deepEqual(named(alongsideVClusterProblems(config(false, true))), [SLICES]);
    assert.deepEqual(named(alongsideVClusterProblems(config(undefined, false))), [ENDPOINTS]);
  });

  it("refuses a config without the sections, or with sections that are not maps", () => {
    for (const c of [null, {}, { sync: null }, { sync: { toHost: [] } }, "sync"] as Json[]) {
      assert.deepEqual(named(alongsideVClusterProblems(c)), [ENDPOINTS, SLICES], JSON.stringify(c));
    }
  });

  it("only the boolean false turns a switch off (property)", () => {
    const value = fc.oneof(
      fc.constant(undefined),
      fc.boolean(),
      fc.constantFrom("false", "no", 0, null),
      fc.jsonValue() as fc.Arbitrary<Json>,
    );
    fc.assert(
      fc.property(value, value, (endpoints, slices) => {
        const expected = [
          ...(endpoints === false ? [] : [ENDPOINTS]),
          ...(slices === false ? [] : [SLICES]),
        ];
        assert.deepEqual(named(alongsideVClusterProblems(config(endpoints, slices))), expected);
      }),
    );
  });
});
