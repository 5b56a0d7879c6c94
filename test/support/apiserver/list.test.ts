// list on the emulator: label and field selectors (and their 400s), limit/continue paging over a
// consistent snapshot with remainingItemCount, 410 Expired for a continue token older than the
// history, and watches filtered by the same selectors.

import assert from "node:assert/strict";
import { startApiServer, type TestApiServer } from "./index.js";
import { call, meta } from "./test-client.js";
import { openWatch, until, type Stream } from "./watch-client.js";

const CMS = "/api/v1/namespaces/default/configmaps";

const names = (body: Record<string, unknown>): string[] =>
  (body["items"] as { metadata: { name: string } }[]).map((i) => i.metadata.name);

describe("test apiserver list", () => {
  let server: TestApiServer;
  const streams: Stream[] = [];
  beforeEach(async () => {
    server = await startApiServer({ watchHistory: 6 });
    const objects: [string, Record<string, string>][] = [
      ["a", { env: "prod", tier: "web" }],
      ["b", { env: "dev", tier: "web" }],
      ["c", { env: "prod" }],
      ["d", {}],
    ];
    for (const [name, labels] of objects) {
      server.put({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name, namespace: "default", labels },
      });
    }
    server.put({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "a", namespace: "other" },
    });
  });
  afterEach(async () => {
    for (const s of streams.splice(0)) s.close();
    await server.close();
  });

  const list = (query: string) => call(server, "GET", `${CMS}?${query}`);

  it("filters by label selectors: =, ==, !=, in, notin, exists and !key", async () => {
    const cases: [string, string[]][] = [
      ["env=prod", ["a", "c"]],
      ["env==prod,tier=web", ["a"]],
      ["env!=prod", ["b", "d"]],
      ["env in (dev, prod)", ["a", "b", "c"]],
      ["env notin (prod)", ["b", "d"]],
      ["tier", ["a", "b"]],
      ["!tier", ["c", "d"]],
    ];
    for (const [selector, want] of cases) {
      const res = await list(`labelSelector=${encodeURIComponent(selector)}`);
      assert.equal(res.status, 200, selector);
      assert.deepEqual(names(res.body), want, selector);
    }
  });

  it("answers 400 with the parser's text for a malformed label selector", async () => {
    const res = await list(`labelSelector=${encodeURIComponent("env in prod")}`);
    assert.equal(res.status, 400);
    assert.equal(res.body["reason"], "BadRequest");
    assert.equal(res.body["message"], "unable to parse requirement: found 'prod' expected: '('");
    const bad = await list(`labelSelector=${encodeURIComponent("env=prod,")}`);
    assert.equal(bad.body["message"], "found '', expected: identifier after ','");
  });

  it("filters by metadata.name and metadata.namespace field selectors, and refuses others", async () => {
    assert.deepEqual(names((await list("fieldSelector=metadata.name%3Db")).body), ["b"]);
    assert.deepEqual(names((await list("fieldSelector=metadata.name!%3Db")).body), ["a", "c", "d"]);
    const all = await call(
      server,
      "GET",
      "/api/v1/configmaps?fieldSelector=metadata.namespace%3Dother",
    );
    assert.deepEqual(names(all.body), ["a"]);
    const res = await list("fieldSelector=spec.x%3Dy");
    assert.equal(res.status, 400);
    assert.equal(
      res.body["message"],
      '"spec.x" is not a known field selector: only "metadata.name", "metadata.namespace"',
    );
  });

  it("pages with limit and continue over one snapshot, counting what remains", async () => {
    const first = await list("limit=3");
    assert.deepEqual(names(first.body), ["a", "b", "c"]);
    assert.equal(meta(first)["remainingItemCount"], 1);
    const token = String(meta(first)["continue"]);
    assert.match(token, /^[A-Za-z0-9_-]+$/);
    // A change after the first page does not show in the next one: it reads the same revision.
    server.put({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "e", namespace: "default" },
    });
    const second = await list(`limit=3&continue=${token}`);
    assert.deepEqual(names(second.body), ["d"]);
    assert.equal(meta(second)["continue"], undefined);
    assert.equal(meta(second)["resourceVersion"], meta(first)["resourceVersion"]);
    const filtered = await list("limit=1&labelSelector=env%3Dprod");
    assert.deepEqual(names(filtered.body), ["a"]);
    assert.equal(meta(filtered)["remainingItemCount"], undefined, "not counted with selectors");
  });

  it("answers 410 Expired with a fresh token once the continue revision left the history", async () => {
    const first = await list("limit=2");
    for (let i = 0; i < 8; i++) {
      server.put({
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: `s${i}`, namespace: "default" },
      });
    }
    const res = await list(`limit=2&continue=${String(meta(first)["continue"])}`);
    assert.equal(res.status, 410);
    assert.equal(res.body["reason"], "Expired");
    assert.match(
      String(res.body["message"]),
      /^The provided continue parameter is too old to display a consistent list result\./,
    );
    const fresh = String(meta(res)["continue"]);
    const rest = await list(`continue=${fresh}`);
    assert.equal(rest.status, 200);
    assert.deepEqual(names(rest.body), ["c", "d"]);
  });

  it("answers 400 for a continue token it cannot decode", async () => {
    const res = await list("continue=not-a-token");
    assert.equal(res.status, 400);
    assert.match(String(res.body["message"]), /^continue key is not valid/);
  });

  it("filters watches by selectors: objects moving out are DELETED, moving in ADDED", async () => {
    const s = await openWatch(server, `${CMS}?watch=true&labelSelector=env%3Dprod`);
    streams.push(s);
    await until(() => s.events.length === 2);
    assert.deepEqual(
      s.events.map((e) => [e.type, e.object.metadata?.name]),
      [
        ["ADDED", "a"],
        ["ADDED", "c"],
      ],
    );
    server.put({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "a", namespace: "default", labels: { env: "dev" } },
    });
    server.put({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "d", namespace: "default", labels: { env: "prod" } },
    });
    server.put({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "b", namespace: "default", labels: { x: "y" } },
    });
    await until(() => s.events.length === 4);
    await new Promise((r) => setTimeout(r, 30));
    assert.deepEqual(
      s.events.slice(2).map((e) => [e.type, e.object.metadata?.name]),
      [
        ["DELETED", "a"],
        ["ADDED", "d"],
      ],
    );
  });
});
