// keepDropped (docs/decisions.md KND-40): the fields a patch dropped for want of a
// reverseExpression get their incoming value back, at the canonical paths `--explain` reports.

import assert from "node:assert/strict";
import type { ExplainEntry, JsonObject } from "../../../webhook/src/patches/types.js";
import { keepDropped } from "../../../webhook/src/sync/carried-fields.js";

const drop = (...matched: string[]): ExplainEntry => ({
  patchIndex: 0,
  path: matched[0] ?? "",
  matched,
  action: "drop",
});

describe("keepDropped", () => {
  const incoming: JsonObject = {
    metadata: { annotations: { "example.com/lb-pool": "green", team: "a" } },
    data: { registry: "ghcr.io/team" },
    status: { conditions: [{ type: "Ready", message: "up" }] },
  };

  it("puts back a dropped key, quoted or plain, and leaves the patched ones", () => {
    const patched: JsonObject = { metadata: { annotations: { team: "b" } }, data: {} };
    const out = keepDropped(incoming, patched, [
      drop('metadata.annotations["example.com/lb-pool"]'),
      drop("data.registry"),
    ]);
    assert.deepEqual(out, {
      metadata: { annotations: { team: "b", "example.com/lb-pool": "green" } },
      data: { registry: "ghcr.io/team" },
    });
    assert.deepEqual(patched, { metadata: { annotations: { team: "b" } }, data: {} });
  });

  it("goes into array elements by index, and gives the whole change set back for the root", () => {
    const patched: JsonObject = { status: { conditions: [{ type: "Ready" }] } };
    assert.deepEqual(keepDropped(incoming, patched, [drop("status.conditions.0.message")]), {
      status: { conditions: [{ type: "Ready", message: "up" }] },
    });
    assert.deepEqual(keepDropped(incoming, {}, [drop("")]), incoming);
  });

  it("ignores every other action, and paths the incoming change set does not have", () => {
    const patched: JsonObject = { data: { registry: "x" } };
    const expr: ExplainEntry = { ...drop("data.registry"), action: "reverseExpression" };
    assert.deepEqual(keepDropped(incoming, patched, [expr, drop("data.missing")]), patched);
  });
});
