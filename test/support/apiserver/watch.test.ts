// Watch on the test API server: kube's event stream semantics, or caches tested against it lie.

import assert from "node:assert/strict";
import { startApiServer, type TestApiServer } from "./index.js";
import { call } from "./test-client.js";
import { openWatch as watch, until, type Stream } from "./watch-client.js";

const API = "management.loft.sh/v1";
const KEYS = "/apis/management.loft.sh/v1/ownedaccesskeys";

const key = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: API,
  kind: "OwnedAccessKey",
  metadata: { name },
  spec: { user: "alice", ...extra },
});

async function listRv(server: TestApiServer): Promise<string> {
  const list = await call(server, "GET", KEYS);
  return (list.body["metadata"] as { resourceVersion: string }).resourceVersion;
}

describe("test apiserver watch", () => {
  let server: TestApiServer;
  const open: Stream[] = [];
  const track = (s: Stream) => (open.push(s), s);

  beforeEach(async () => {
    server = await startApiServer({ watchHistory: 5, bookmarkIntervalMs: 50 });
  });
  afterEach(async () => {
    for (const s of open.splice(0)) s.close();
    await server.close();
  });

  it("starts with synthetic ADDED events for current objects from resourceVersion 0 or none", async () => {
    server.put(key("a"));
    server.put(key("b"));
    server.put({ apiVersion: API, kind: "User", metadata: { name: "not-a-key" } });
    for (const rv of ["", "&resourceVersion=0", "&resourceVersion="]) {
      const s = track(await watch(server, `${KEYS}?watch=true${rv}`));
      assert.equal(s.status, 200);
      await until(() => s.events.length === 2);
      assert.deepEqual(
        s.events.map((e) => [e.type, e.object.metadata?.name]),
        [
          ["ADDED", "a"],
          ["ADDED", "b"],
        ],
      );
    }
  });

  it("streams ADDED, MODIFIED and DELETED for later changes, in order, only of its resource", async () => {
    const s = track(await watch(server, `${KEYS}?watch=1&resourceVersion=${await listRv(server)}`));
    server.put(key("k1"));
    server.put({ apiVersion: API, kind: "Team", metadata: { name: "t" } });
    server.put(key("k1", { displayName: "changed" }));
    assert.equal(server.remove(API, "OwnedAccessKey", "k1"), true);
    await until(() => s.events.length === 3);
    assert.deepEqual(
      s.events.map((e) => e.type),
      ["ADDED", "MODIFIED", "DELETED"],
    );
    const rvs = s.events.map((e) => Number(e.object.metadata?.resourceVersion));
    assert.deepEqual(rvs, [1, 3, 4], "each event carries its own revision (the Team got 2)");
    assert.equal((s.events[1]!.object["spec"] as { displayName: string }).displayName, "changed");
  });

  it("replays the changes after the given resourceVersion, not those before it", async () => {
    server.put(key("old"));
    const rv = await listRv(server);
    server.put(key("new1"));
    server.remove(API, "OwnedAccessKey", "old");
    const s = track(await watch(server, `${KEYS}?watch=true&resourceVersion=${rv}`));
    await until(() => s.events.length === 2);
    assert.deepEqual(
      s.events.map((e) => [e.type, e.object.metadata?.name]),
      [
        ["ADDED", "new1"],
        ["DELETED", "old"],
      ],
    );
  });

  it("answers a resourceVersion older than the history with one ERROR 410 Expired event", async () => {
    for (let i = 0; i < 8; i++) server.put(key(`k${i}`));
    const s = track(await watch(server, `${KEYS}?watch=true&resourceVersion=1`));
    assert.equal(s.status, 200);
    await until(() => s.ended);
    assert.equal(s.events.length, 1);
    assert.equal(s.events[0]!.type, "ERROR");
    assert.equal(s.events[0]!.object["code"], 410);
    assert.equal(s.events[0]!.object["reason"], "Expired");
    assert.match(String(s.events[0]!.object["message"]), /^too old resource version: 1 \(3\)$/);
    // The newest kept window still works.
    const ok = track(await watch(server, `${KEYS}?watch=true&resourceVersion=3`));
    await until(() => ok.events.length === 5);
    assert.ok(ok.events.every((e) => e.type === "ADDED"));
  });

  it("sends BOOKMARK events with the current resourceVersion only when allowed", async () => {
    server.put(key("x"));
    const rv = await listRv(server);
    const with_ = track(
      await watch(server, `${KEYS}?watch=true&allowWatchBookmarks=true&resourceVersion=${rv}`),
    );
    const without = track(await watch(server, `${KEYS}?watch=true&resourceVersion=${rv}`));
    await until(() => with_.events.length >= 2);
    assert.equal(with_.events[0]!.type, "BOOKMARK");
    assert.equal(with_.events[0]!.object.metadata?.resourceVersion, rv);
    assert.equal(with_.events[0]!.object["kind"], "OwnedAccessKey");
    assert.equal(without.events.length, 0);
  });

  it("ends the stream after timeoutSeconds, on endWatches(), on setDown(true) and on close()", async () => {
    const timed = track(await watch(server, `${KEYS}?watch=true&timeoutSeconds=1`));
    const a = track(await watch(server, `${KEYS}?watch=true`));
    assert.deepEqual(
      server.openWatches().map((r) => [r.path, r.query, r.status]),
      [
        [KEYS, "?watch=true&timeoutSeconds=1", 200],
        [KEYS, "?watch=true", 200],
      ],
    );
    assert.equal(server.endWatches(), 2);
    assert.deepEqual(server.openWatches(), []);
    await until(() => a.ended);
    const b = track(await watch(server, `${KEYS}?watch=true`));
    server.setDown(true);
    await until(() => b.ended);
    const refused = await watch(server, `${KEYS}?watch=true`);
    assert.equal(refused.status, 503);
    server.setDown(false);
    const c = track(await watch(server, `${KEYS}?watch=true`));
    const d = track(await watch(server, `${KEYS}?watch=true&timeoutSeconds=1`));
    const started = Date.now();
    await until(() => d.ended, 3000);
    assert.ok(Date.now() - started >= 900, "timeoutSeconds ends the watch after about 1 s");
    assert.equal(c.ended, false);
    await server.close();
    await until(() => c.ended);
    assert.ok(timed.ended);
    server = await startApiServer();
  });

  it("records the watch as the watch verb: denied users get 403, bad resourceVersion 400", async () => {
    server.addToken("bob-token", { user: "bob", groups: ["system:authenticated"] });
    const seen: string[] = [];
    server.authorize = (a) => (seen.push(a.verb), false);
    const denied = await call(server, "GET", `${KEYS}?watch=true`, { token: "bob-token" });
    assert.equal(denied.status, 403);
    assert.deepEqual(seen, ["watch"]);
    const bad = await watch(server, `${KEYS}?watch=true&resourceVersion=abc`);
    assert.equal(bad.status, 400);
  });

  it("watches a single object by name", async () => {
    const s = track(await watch(server, `${KEYS}/one?watch=true`));
    server.put(key("other"));
    server.put(key("one"));
    await until(() => s.events.length === 1);
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(
      s.events.map((e) => e.object.metadata?.name),
      ["one"],
    );
  });

  it("lists with the store's current resourceVersion", async () => {
    assert.equal(await listRv(server), "0");
    server.put(key("a"));
    server.put(key("b"));
    server.remove(API, "OwnedAccessKey", "a");
    assert.equal(await listRv(server), "3");
  });
});
