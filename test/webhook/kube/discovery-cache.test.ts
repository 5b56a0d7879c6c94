import assert from "node:assert/strict";
import { DiscoveryCache, type KindTable } from "../../../webhook/src/kube/discovery-cache.js";
import type { GroupVersion } from "../../../webhook/src/kube/discovery.js";

const GV = { group: "apps", version: "v1" };
const mapping = (resource: string) => ({
  group: "apps",
  version: "v1",
  resource,
  namespaced: true,
});

function setup(
  tables: KindTable[],
  opts: { ttlMs?: number; missRefreshMs?: number; maxEntries?: number } = {},
) {
  let now = 0;
  const calls: string[] = [];
  const cache = new DiscoveryCache(
    (gv: GroupVersion) => {
      calls.push(`${gv.group}/${gv.version}`);
      const next = tables.length > 1 ? tables.shift()! : tables[0]!;
      return Promise.resolve(next);
    },
    {
      ttlMs: opts.ttlMs ?? 60_000,
      missRefreshMs: opts.missRefreshMs ?? 1_000,
      maxEntries: opts.maxEntries ?? 10,
      now: () => now,
    },
  );
  return { cache, calls, advance: (ms: number) => (now += ms) };
}

describe("DiscoveryCache", () => {
  it("answers from the cache while fresh and asks again after the TTL", async () => {
    const { cache, calls, advance } = setup([new Map([["Deployment", mapping("deployments")]])]);
    assert.equal((await cache.lookup(GV, "Deployment"))?.resource, "deployments");
    advance(59_999);
    await cache.lookup(GV, "Deployment");
    assert.equal(calls.length, 1);
    advance(1);
    await cache.lookup(GV, "Deployment");
    assert.equal(calls.length, 2);
  });

  it("refreshes once on a miss when the answer is old enough, finding a new kind", async () => {
    const before = new Map([["Deployment", mapping("deployments")]]);
    const after = new Map([...before, ["Widget", mapping("widgets")]]);
    const { cache, calls, advance } = setup([before, after]);
    await cache.lookup(GV, "Deployment");
    assert.equal(await cache.lookup(GV, "Widget"), null, "a fresh answer is not re-asked");
    assert.equal(calls.length, 1);
    advance(1_000);
    assert.equal((await cache.lookup(GV, "Widget"))?.resource, "widgets");
    assert.equal(calls.length, 2);
  });

  it("caches a group/version that is not served, and finds it once it is", async () => {
    const { cache, calls, advance } = setup([
      null,
      new Map([["Deployment", mapping("deployments")]]),
    ]);
    assert.equal(await cache.lookup(GV, "Deployment"), null);
    assert.equal(await cache.lookup(GV, "Deployment"), null);
    assert.equal(calls.length, 1);
    advance(1_000);
    assert.equal((await cache.lookup(GV, "Deployment"))?.resource, "deployments");
  });

  it("shares one request between concurrent lookups", async () => {
    const { cache, calls } = setup([new Map([["Deployment", mapping("deployments")]])]);
    await Promise.all([
      cache.lookup(GV, "Deployment"),
      cache.lookup(GV, "Deployment"),
      cache.lookup(GV, "X"),
    ]);
    assert.equal(calls.length, 1);
  });

  it("does not cache a failure", async () => {
    let fail = true;
    const cache = new DiscoveryCache(
      () =>
        fail ? Promise.reject(new Error("down")) : Promise.resolve(new Map([["D", mapping("ds")]])),
      { ttlMs: 60_000, missRefreshMs: 1_000, maxEntries: 10 },
    );
    await assert.rejects(cache.lookup(GV, "D"), /down/);
    fail = false;
    assert.equal((await cache.lookup(GV, "D"))?.resource, "ds");
  });

  it("keeps at most maxEntries group/versions", async () => {
    const { cache, calls } = setup([null], { maxEntries: 2 });
    for (const group of ["a", "b", "c"]) await cache.lookup({ group, version: "v1" }, "K");
    await cache.lookup({ group: "c", version: "v1" }, "K");
    assert.equal(calls.length, 3);
    await cache.lookup({ group: "a", version: "v1" }, "K");
    assert.equal(calls.length, 4, "the oldest entry was evicted");
  });
});
