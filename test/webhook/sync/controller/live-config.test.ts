// The config swap on reload (live-config.ts): a reconcile keeps the sandbox it started with, the old
// sandbox closes only when the last reconcile using it is done, and close() closes every one; and
// which host Endpoints the informer watches (informers.ts, docs/decisions.md EPS-13).

import assert from "node:assert/strict";
import type { StartedPatchRunner } from "../../../../webhook/src/sync/patch-runner.js";
import type { LoadedVCluster } from "../../../../webhook/src/config/loaded-vcluster.js";
import { hostEndpointsPath } from "../../../../webhook/src/sync/controller/informers.js";
import { LiveConfig } from "../../../../webhook/src/sync/controller/live-config.js";

/** A runner that only records whether it was closed (no sandbox is needed to test the swap). */
function runner(): StartedPatchRunner & { closed: number } {
  const r = {
    closed: 0,
    run: () => Promise.reject(new Error("not used")),
    runFor: () => undefined,
    close: async () => {
      r.closed += 1;
    },
  };
  return r;
}

const loaded = (patches: number): LoadedVCluster => ({
  vcluster: { name: "vc", namespace: "ns", config: {} },
  enabled: true,
  patches: Array.from({ length: patches }, (_, i) => ({ path: `a${i}`, expression: "value" })),
  patchSets: [],
});

const tick = () => new Promise((r) => setImmediate(r));

describe("vgate sync: the live config", () => {
  it("keeps the old sandbox open until the reconciles that took it are done", async () => {
    const first = runner();
    const live = new LiveConfig(loaded(1), first);
    const a = live.acquire();
    const b = live.acquire();
    const second = runner();
    live.swap(loaded(2), second);
    assert.equal(live.loaded.patches.length, 2);
    assert.equal(live.acquire().run, second.run);
    assert.equal(a.loaded.patches.length, 1, "a reconcile keeps the config it started with");
    a.release();
    a.release();
    await tick();
    assert.equal(first.closed, 0, "b still uses it");
    b.release();
    await tick();
    assert.equal(first.closed, 1);
    assert.equal(second.closed, 0);
  });

  it("an unused old sandbox closes at the swap; close() closes the current one and any still held", async () => {
    const first = runner();
    const live = new LiveConfig(loaded(1), first);
    const second = runner();
    live.swap(loaded(1), second);
    await tick();
    assert.equal(first.closed, 1);
    const held = live.acquire();
    const third = runner();
    live.swap(loaded(1), third);
    await live.close();
    assert.deepEqual([first.closed, second.closed, third.closed], [1, 1, 1]);
    held.release();
    await tick();
    assert.equal(second.closed, 1, "closed once");
  });
});

describe("vgate sync: which host Endpoints are watched", () => {
  it("the target namespace in single-namespace mode, every namespace when namespaces are mapped", () => {
    const vc = { name: "vc", namespace: "vcluster-vc", config: {} };
    assert.equal(hostEndpointsPath(vc), "/api/v1/namespaces/vcluster-vc/endpoints");
    assert.equal(
      hostEndpointsPath({ ...vc, targetNamespace: "other" }),
      "/api/v1/namespaces/other/endpoints",
    );
    assert.equal(hostEndpointsPath({ ...vc, namespaceMappings: { a: "b" } }), "/api/v1/endpoints");
  });
});
