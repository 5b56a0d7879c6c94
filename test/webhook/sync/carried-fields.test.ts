// keepDropped (docs/decisions.md KND-40): the fields a patch dropped for want of a
// reverseExpression get their incoming value back, at the canonical paths `--explain` reports.
// The echo rules (KND-14, EPS-29, KND-61): vgate's own patch coming back is undone, a key a map
// patch added included.

import assert from "node:assert/strict";
import type { ExplainEntry, JsonObject } from "../../../webhook/src/patches/types.js";
import { cancelLeafEchoes, keepDropped } from "../../../webhook/src/sync/carried-fields.js";
import { cancelEchoes } from "../../../webhook/src/sync/virtual-echo.js";

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

// What a map patch such as `({...value, "example.com/synced-by": "vgate"})` does to the annotations:
// the virtual object's own, and what the forward patches make of them.
const own = { team: "a" };
const forward = { team: "a", "example.com/synced-by": "vgate" };

describe("cancelLeafEchoes", () => {
  const run = (sent: Record<string, string>) =>
    cancelLeafEchoes(
      { metadata: { annotations: sent } },
      { metadata: { annotations: sent } },
      { metadata: { annotations: forward } },
      { metadata: { annotations: own } },
    );

  it("leaves out a key the virtual object lacks whose value the forward patches add", () => {
    assert.deepEqual(run({ "example.com/synced-by": "vgate" }), { metadata: { annotations: {} } });
  });

  it("keeps a new key of another value, and a tenant's change of an existing one", () => {
    assert.deepEqual(run({ "example.com/synced-by": "me", team: "b" }), {
      metadata: { annotations: { "example.com/synced-by": "me", team: "b" } },
    });
  });
});

describe("cancelEchoes (Endpoints)", () => {
  it("leaves out an added key that is the forward patches', keeps the rest", () => {
    const sent = { "example.com/synced-by": "vgate", owner: "b" };
    assert.deepEqual(
      cancelEchoes(
        { annotations: sent },
        { annotations: sent },
        { annotations: forward },
        {
          annotations: own,
        },
      ),
      { annotations: { owner: "b" } },
    );
  });

  it("sets an echoed existing key back to the virtual value", () => {
    const sent = { team: "tenant-a" };
    assert.deepEqual(
      cancelEchoes(
        { annotations: sent },
        { annotations: sent },
        { annotations: { team: "tenant-a" } },
        { annotations: own },
      ),
      { annotations: { team: "a" } },
    );
  });
});
