import assert from "node:assert/strict";
import { describe, it } from "mocha";
import type { OwnedAccessKey } from "../../../webhook/src/shared/ownedaccesskey.js";
import {
  ActivityRecorder,
  flushIntervalFor,
  rfc3339Seconds,
  type ActivityOptions,
  type ActivityOutcome,
  type ActivityStatus,
  type ActivityWriter,
} from "../../../webhook/src/auth/activity.js";
import { parseServeArgs } from "../../../webhook/src/cli/serve-options.js";
import { previousKeyLastActivity } from "../../../webhook/src/shared/previous-key.js";
import { serveCommand } from "../../../webhook/src/cli/serve.js";

const T0 = Date.parse("2026-03-10T00:00:00Z");
const MIN = 60_000;

type Answer = (name: string) => Promise<"written" | "gone">;

/**
 * An API server's store of keys, with resourceVersions, and a writer that patches it as
 * kube-apiserver does: a write whose resourceVersion is not the stored one is a conflict, and
 * every write or other change makes a new one. `keys` is the watch cache, showing the store as
 * it is (or, after `freeze()`, as it was). Answers can be scripted per call.
 */
function fakeApi() {
  const objects = new Map<string, OwnedAccessKey>();
  let version = 0;
  let frozen: Map<string, OwnedAccessKey> | undefined;
  const writes: ({ name: string } & ActivityStatus)[] = [];
  let calls = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  let answer: Answer = async () => "written";
  const put = (k: OwnedAccessKey): OwnedAccessKey => {
    const stored = { ...k, metadata: { ...k.metadata, resourceVersion: String(++version) } };
    objects.set(k.metadata!.name!, stored);
    return stored;
  };
  const writer: ActivityWriter = async (name, status, resourceVersion) => {
    calls++;
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    try {
      await new Promise((resolve) => setImmediate(resolve));
      if ((await answer(name)) === "gone") return "gone";
      const current = objects.get(name);
      if (!current) return "gone";
      if (resourceVersion !== current.metadata?.resourceVersion) return "conflict";
      writes.push({ name, ...status });
      put({ ...current, status: { ...current.status, ...status } });
      return "written";
    } finally {
      inFlight--;
    }
  };
  return {
    writer,
    writes,
    keys: { get: (name: string) => (frozen ?? objects).get(name) },
    /** The key as stored, made (with `status`) when it is not there yet; a login finds this. */
    key(name: string, status: OwnedAccessKey["status"] = {}): OwnedAccessKey {
      return objects.get(name) ?? put({ metadata: { name }, spec: { user: "u" }, status });
    },
    /** Stores `k` as another writer would (a new resourceVersion). */
    put,
    remove: (name: string) => objects.delete(name),
    /** The cache stops showing changes (its watch lags), until thaw(). */
    freeze: () => (frozen = new Map(objects)),
    thaw: () => (frozen = undefined),
    maxInFlight: () => maxInFlight,
    calls: () => calls,
    answerWith: (f: Answer) => (answer = f),
  };
}

function recorder(api: ReturnType<typeof fakeApi>, options: ActivityOptions = {}) {
  return new ActivityRecorder(api.writer, api.keys, options);
}

describe("ActivityRecorder", () => {
  it("writes at most maxWritesPerFlush keys per flush, oldest first, and loses none", async () => {
    const api = fakeApi();
    const rec = recorder(api, { now: () => T0, maxWritesPerFlush: 200 });
    for (let i = 0; i < 500; i++) rec.record(api.key(`k${i}`), T0 + i);
    await rec.flush();
    assert.equal(api.writes.length, 200);
    assert.deepEqual(
      api.writes.map((x) => x.name).sort(),
      Array.from({ length: 200 }, (_, i) => `k${i}`).sort(),
      "the oldest uses go first",
    );
    assert.equal(rec.pending, 300);
    await rec.flush();
    await rec.flush();
    assert.equal(api.writes.length, 500);
    assert.equal(new Set(api.writes.map((x) => x.name)).size, 500, "each key once");
    assert.equal(rec.pending, 0);
  });

  it("formats lastActivity as metav1.Time does (UTC, whole seconds)", () => {
    assert.equal(rfc3339Seconds(Date.parse("2026-03-10T01:02:03.999Z")), "2026-03-10T01:02:03Z");
    assert.equal(rfc3339Seconds(0), "1970-01-01T00:00:00Z");
  });

  it("writes at most once a minute per key under 10,000 records, values a minute apart", async () => {
    let now = T0;
    const api = fakeApi();
    const rec = recorder(api, { now: () => now });
    const names = ["a", "b", "c"];
    // 10,000 logins over 5 minutes, flushing every 10 seconds.
    for (let i = 0; i < 10_000; i++) {
      now = T0 + Math.floor((i * 5 * MIN) / 10_000);
      rec.record(api.key(names[i % 3]!), now);
      if (i % 333 === 0) await rec.flush();
    }
    await rec.flush();
    for (const name of names) {
      const times = api.writes
        .filter((x) => x.name === name)
        .map((x) => Date.parse(x.lastActivity!));
      // Once at the start, then once after each full minute: 0, 1, 2, 3 and 4 minutes.
      assert.equal(times.length, 5, `${name}: ${times.length} writes`);
      for (let i = 1; i < times.length; i++) {
        assert.ok(times[i]! - times[i - 1]! >= MIN, `${name}: writes ${i - 1} and ${i} too close`);
      }
    }
  });

  it("skips a record when the stored status.lastActivity is under a minute old", async () => {
    const api = fakeApi();
    const rec = recorder(api);
    api.key("k", { lastActivity: rfc3339Seconds(T0) });
    rec.record(api.key("k"), T0 + MIN - 1);
    assert.equal(rec.pending, 0);
    rec.record(api.key("k"), T0 + MIN);
    assert.equal(rec.pending, 1);
    await rec.flush();
    assert.deepEqual(api.writes, [{ name: "k", lastActivity: rfc3339Seconds(T0 + MIN) }]);
  });

  it("writes the newest login of the queued key", async () => {
    const api = fakeApi();
    const rec = recorder(api);
    rec.record(api.key("k"), T0);
    rec.record(api.key("k"), T0 + 5000);
    rec.record(api.key("k"), T0 + 2000); // late: not newer
    await rec.flush();
    assert.deepEqual(api.writes, [{ name: "k", lastActivity: rfc3339Seconds(T0 + 5000) }]);
  });

  it("record() writes nothing by itself; flush() batches with bounded concurrency", async () => {
    const api = fakeApi();
    const rec = recorder(api, { concurrency: 3 });
    for (let i = 0; i < 20; i++) rec.record(api.key(`k${i}`), T0);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(api.writes.length, 0);
    assert.equal(rec.latest("k7"), T0);
    await rec.flush();
    assert.equal(api.writes.length, 20);
    assert.equal(api.maxInFlight(), 3);
    assert.equal(rec.pending, 0);
    await rec.flush();
    assert.equal(api.writes.length, 20);
  });

  it("a failed write stays queued and is retried, behind the others, with the newest login", async () => {
    const errors: string[] = [];
    const api = fakeApi();
    const rec = recorder(api, { onError: (name) => errors.push(name), maxWritesPerFlush: 2 });
    api.answerWith(async () => {
      throw new Error("down");
    });
    rec.record(api.key("k"), T0);
    await rec.flush();
    assert.deepEqual(errors, ["k"]);
    assert.equal(rec.pending, 1);
    rec.record(api.key("k"), T0 + 30_000);
    rec.record(api.key("other1"), T0 + 30_000);
    rec.record(api.key("other2"), T0 + 30_000);
    // k failed again: other1 and other2, queued after it, go first next time.
    await rec.flush();
    assert.deepEqual(errors, ["k", "k", "other1"]);
    api.answerWith(async () => "written");
    await rec.flush();
    await rec.flush();
    assert.deepEqual(
      api.writes.map((x) => [x.name, x.lastActivity]),
      [
        ["other2", rfc3339Seconds(T0 + 30_000)],
        ["k", rfc3339Seconds(T0 + 30_000)],
        ["other1", rfc3339Seconds(T0 + 30_000)],
      ],
    );
    assert.equal(rec.pending, 0);
  });

  it("an onError or onOutcome that throws does not break later flushes", async () => {
    const api = fakeApi();
    const rec = recorder(api, {
      onError: () => {
        throw new Error("logger broke");
      },
      onOutcome: () => {
        throw new Error("metrics broke");
      },
    });
    api.answerWith(async () => {
      throw new Error("down");
    });
    rec.record(api.key("k"), T0);
    await rec.flush();
    api.answerWith(async () => "written");
    await rec.flush();
    assert.deepEqual(api.writes, [{ name: "k", lastActivity: rfc3339Seconds(T0) }]);
  });

  it("timer ticks do not pile up flushes while a write hangs", async () => {
    const api = fakeApi();
    let flushesDone = 0; // each flush reads the clock once, to prune
    const rec = recorder(api, {
      flushIntervalMs: 2,
      now: () => (flushesDone++, T0),
    });
    let release = () => {};
    api.answerWith(() => new Promise((resolve) => (release = () => resolve("written"))));
    rec.record(api.key("k"), T0);
    rec.start();
    await new Promise((resolve) => setTimeout(resolve, 40));
    assert.equal(api.calls(), 1);
    api.answerWith(async () => "written");
    release();
    await rec.stop();
    assert.equal(api.calls(), 1);
    // The hung flush, and the one stop() makes; not one per tick.
    assert.equal(flushesDone, 2);
  });

  it("a writer that throws synchronously is a failed write, not a crash", async () => {
    const errors: unknown[] = [];
    const api = fakeApi();
    const rec = new ActivityRecorder(
      () => {
        throw new Error("boom");
      },
      api.keys,
      { onError: (_n, err) => errors.push(err) },
    );
    rec.record(api.key("k"), T0);
    await rec.flush();
    assert.equal(errors.length, 1);
    assert.equal(rec.pending, 1);
  });

  it("a record during an in-flight write is written by the next flush, never overwritten by the older value", async () => {
    const api = fakeApi();
    const rec = recorder(api);
    let release = () => {};
    api.answerWith(() => new Promise((resolve) => (release = () => resolve("written"))));
    rec.record(api.key("k"), T0);
    const first = rec.flush();
    while (api.calls() === 0) await new Promise((resolve) => setImmediate(resolve));
    rec.record(api.key("k"), T0 + MIN); // while the first write is in flight
    api.answerWith(async () => "written");
    release();
    const second = rec.flush();
    await Promise.all([first, second]);
    assert.deepEqual(
      api.writes.map((x) => x.lastActivity),
      [rfc3339Seconds(T0), rfc3339Seconds(T0 + MIN)],
    );
    assert.equal(rec.pending, 0);
  });

  it('"gone", a key the cache no longer has, and forget() drop the key', async () => {
    const api = fakeApi();
    const rec = recorder(api);
    api.answerWith(async (name) => (name === "deleted" ? "gone" : "written"));
    rec.record(api.key("deleted"), T0);
    rec.record(api.key("forgotten"), T0);
    rec.record(api.key("uncached"), T0);
    rec.forget("forgotten");
    api.remove("uncached");
    await rec.flush();
    assert.deepEqual(api.writes, []);
    assert.equal(rec.pending, 0);
    for (const name of ["deleted", "forgotten", "uncached"]) {
      assert.equal(rec.latest(name), undefined, name);
    }
    await rec.flush();
    assert.equal(api.calls(), 1, "only the one the API server said was gone was tried");
  });

  it("stop() flushes once, and nothing is written after it", async () => {
    const api = fakeApi();
    const rec = recorder(api, { flushIntervalMs: 5 });
    rec.start();
    rec.record(api.key("k"), T0);
    await rec.stop();
    assert.equal(api.writes.length, 1);
    rec.record(api.key("later"), T0 + 10 * MIN);
    await new Promise((resolve) => setTimeout(resolve, 30));
    await rec.flush();
    assert.equal(api.writes.length, 1);
  });

  it("start() flushes periodically", async () => {
    const api = fakeApi();
    const rec = recorder(api, { flushIntervalMs: 5 });
    rec.start();
    rec.record(api.key("k"), T0);
    for (let i = 0; i < 100 && api.writes.length === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await rec.stop();
    assert.equal(api.writes.length, 1);
  });

  it("ignores keys without a name and non-finite times", async () => {
    const api = fakeApi();
    const rec = recorder(api);
    rec.record({ metadata: {} }, T0);
    rec.record({ metadata: { name: "" } }, T0);
    rec.record(api.key("k"), NaN);
    await rec.flush();
    assert.equal(api.writes.length, 0);
  });
});

/** A key that expires an hour after its last use. */
const hourIdleKey = (name: string): OwnedAccessKey => ({
  metadata: { name, creationTimestamp: rfc3339Seconds(T0 - MIN) },
  spec: { user: "u", ttl: 3600, ttlAfterLastActivity: true },
});

describe("ActivityRecorder: other replicas (docs/decisions.md OAK-35)", () => {
  it("decides again at the flush: another replica's write that the cache shows since covers the login", async () => {
    const api = fakeApi();
    const outcomes: ActivityOutcome[] = [];
    const rec = recorder(api, { now: () => T0 + 6000, onOutcome: (o) => outcomes.push(o) });
    api.put(hourIdleKey("k"));
    rec.record(api.key("k"), T0 + 5000);
    assert.equal(rec.pending, 1);
    // Another replica writes its own login of a moment before, and the watch brings it here.
    api.put({ ...api.key("k"), status: { lastActivity: rfc3339Seconds(T0) } });
    await rec.flush();
    assert.deepEqual(api.writes, [], "nothing written: within the interval of the stored value");
    assert.deepEqual(outcomes, ["covered"]);
    assert.equal(rec.pending, 0);
    // The login still counts here for the key's expiry.
    assert.equal(rec.latest("k"), T0 + 5000);
  });

  it("two replicas decide from the same stale cache: one write lands, the other is a conflict and is dropped", async () => {
    const api = fakeApi();
    const errors: string[] = [];
    const outcomes: [string, ActivityOutcome][] = [];
    const replica = (id: string) =>
      recorder(api, {
        now: () => T0 + 2000,
        onError: (n) => errors.push(n),
        onOutcome: (o) => outcomes.push([id, o]),
      });
    api.put(hourIdleKey("k"));
    const a = replica("a");
    const b = replica("b");
    a.record(api.key("k"), T0);
    b.record(api.key("k"), T0 + 1500);
    // Neither cache shows the other's write before it writes itself.
    api.freeze();
    await Promise.all([a.flush(), b.flush()]);
    assert.deepEqual(api.writes, [{ name: "k", lastActivity: rfc3339Seconds(T0) }]);
    assert.deepEqual(outcomes, [
      ["a", "written"],
      ["b", "conflict"],
    ]);
    assert.equal(b.pending, 1, "decided again at the next flush");
    api.thaw();
    await b.flush();
    assert.equal(api.writes.length, 1, "A's write covers B's login");
    assert.deepEqual(outcomes.at(-1), ["b", "covered"]);
    assert.equal(b.pending, 0);
    assert.deepEqual(errors, [], "a conflict is not an error");
    assert.equal(b.latest("k"), T0 + 1500, "B's login still counts for its expiry");
  });

  it("a conflict with an unrelated change is written at the next flush, on the new resourceVersion", async () => {
    const api = fakeApi();
    const rec = recorder(api);
    rec.record(api.key("k"), T0);
    api.freeze();
    api.put({ ...api.key("k"), metadata: { name: "k", labels: { team: "web" } } });
    await rec.flush();
    assert.deepEqual(api.writes, []);
    api.thaw();
    await rec.flush();
    assert.deepEqual(api.writes, [{ name: "k", lastActivity: rfc3339Seconds(T0) }]);
    assert.equal(api.key("k").metadata?.labels?.["team"], "web", "the label stays");
  });

  it("its own write, not yet in the cache, throttles it as the stored value would", async () => {
    const api = fakeApi();
    const rec = recorder(api, { now: () => T0 });
    rec.record(api.key("k"), T0);
    api.freeze(); // the watch lags behind the write
    await rec.flush();
    assert.equal(api.writes.length, 1);
    rec.record(api.keys.get("k")!, T0 + 10_000);
    assert.equal(rec.pending, 0);
    await rec.flush();
    assert.equal(api.calls(), 1);
  });
});

describe("ActivityRecorder: expiry counts from every login (docs/decisions.md OAK-10)", () => {
  const idleKey = (api: ReturnType<typeof fakeApi>, ttl: number) =>
    api.put({
      metadata: { name: "k", creationTimestamp: rfc3339Seconds(T0 - MIN) },
      spec: { user: "u", ttl, ttlAfterLastActivity: true },
    });

  it("latest() is the newest login, also one within the interval that is not written", async () => {
    let now = T0;
    const api = fakeApi();
    const rec = recorder(api, { now: () => now });
    idleKey(api, 90);
    rec.record(api.key("k"), T0);
    await rec.flush();
    // 50 s later: within the minute, so not written; a key idle for 90 s from T0 would expire at
    // T0 + 90 s, but it was used at T0 + 50 s.
    now = T0 + 50_000;
    rec.record(api.key("k"), now);
    assert.equal(rec.pending, 0);
    now = T0 + 100_000;
    await rec.flush();
    assert.equal(rec.latest("k"), T0 + 50_000, "kept: it moves the expiry");
    assert.equal(api.writes.length, 1);
  });

  it("forgets a login that no longer moves the expiry: no TTL, or written, or expired anyway", async () => {
    let now = T0;
    const api = fakeApi();
    const rec = recorder(api, { now: () => now });
    api.key("plain");
    rec.record(api.key("plain"), T0);
    idleKey(api, 90);
    rec.record(api.key("k"), T0);
    await rec.flush();
    assert.equal(rec.latest("plain"), undefined, "no ttlAfterLastActivity");
    assert.equal(rec.latest("k"), undefined, "status shows it");
    now = T0 + 30_000;
    rec.record(api.key("k"), now);
    await rec.flush();
    assert.equal(rec.latest("k"), T0 + 30_000);
    now = T0 + 30_000 + 90_000;
    await rec.flush();
    assert.equal(rec.latest("k"), undefined, "expired a TTL after its last use");
  });

  it("keeps memory bounded: 1000 keys used once leave nothing once written", async () => {
    const now = T0;
    const api = fakeApi();
    const rec = recorder(api, { now: () => now, maxWritesPerFlush: 1000 });
    for (let i = 0; i < 1000; i++) rec.record(api.key(`k${i}`), T0);
    await rec.flush();
    assert.equal(rec.pending, 0);
    assert.equal(rec.latest("k1"), undefined);
    // A failed write is kept.
    api.answerWith(async () => {
      throw new Error("down");
    });
    rec.record(api.key("stuck"), now);
    await rec.flush();
    assert.equal(rec.latest("stuck"), T0);
    assert.equal(rec.pending, 1);
  });
});

describe("ActivityRecorder: status.weakKey", () => {
  it("writes weakKey when a login's length disagrees with the stored status, alone within the minute", async () => {
    const api = fakeApi();
    const r = recorder(api, { now: () => T0 });
    const recent = rfc3339Seconds(T0 - 1000);
    // A fresh login just written: no write for time alone.
    r.record(api.key("strong", { lastActivity: recent }), T0);
    // A short key logging in: its weakness is written at once (the activity is recent enough).
    r.record(api.key("short", { lastActivity: recent }), T0, true);
    // Already recorded as weak: nothing to change.
    r.record(api.key("known", { lastActivity: recent, weakKey: true }), T0, true);
    // Rotated to a long key: false is written.
    r.record(api.key("rotated", { lastActivity: recent, weakKey: true }), T0);
    // Never used: both.
    r.record(api.key("new"), T0, true);
    await r.flush();
    assert.deepEqual(api.writes, [
      { name: "short", weakKey: true },
      { name: "rotated", weakKey: false },
      { name: "new", lastActivity: rfc3339Seconds(T0), weakKey: true },
    ]);
    // Written once: the next flush writes nothing more.
    r.record(api.key("short"), T0 + 1000, true);
    await r.flush();
    assert.equal(api.writes.length, 3);
  });
});

describe("ActivityRecorder: the previous key's use (docs/decisions.md OAK-38)", () => {
  const UNTIL = T0 + 3600_000;
  const OLD_DIGEST = `sha256:${"ab".repeat(32)}`;
  /** A key in a grace window ending at `until`, as the cache shows it, with `status`. */
  function rotated(api: ReturnType<typeof fakeApi>, name: string, until = UNTIL, status = {}) {
    return api.put({
      metadata: { name },
      spec: { user: "u", previousKey: { key: OLD_DIGEST, until: rfc3339Seconds(until) } },
      status,
    });
  }
  const prev = (until: number, at: number) => ({
    until: rfc3339Seconds(until),
    lastActivity: rfc3339Seconds(at),
  });

  it("writes status.previousKey {until, lastActivity} at a login with the previous key, never the digest", async () => {
    const api = fakeApi();
    const rec = recorder(api, { now: () => T0 });
    rec.record(rotated(api, "k"), T0 + 1500, false, true);
    await rec.flush();
    assert.deepEqual(api.writes, [
      { name: "k", lastActivity: rfc3339Seconds(T0 + 1500), previousKey: prev(UNTIL, T0 + 1500) },
    ]);
    assert.ok(!JSON.stringify(api.writes).includes("ab".repeat(32)), "no digest in status");
    // A login with the new key writes no previousKey.
    rec.record(api.key("k"), T0 + MIN + 2000, false, false);
    await rec.flush();
    assert.equal(api.writes.length, 2);
    assert.equal(api.writes[1]!.previousKey, undefined);
    assert.equal(api.writes[1]!.lastActivity, rfc3339Seconds(T0 + MIN + 2000));
  });

  it("writes it at most once an interval per window, also across replicas", async () => {
    let now = T0;
    const api = fakeApi();
    const one = recorder(api, { now: () => now });
    const two = recorder(api, { now: () => now });
    one.record(rotated(api, "k"), T0, false, true);
    await one.flush();
    // Within the interval: neither replica writes it again.
    for (const at of [T0 + 1000, T0 + MIN - 1000]) {
      now = at;
      one.record(api.key("k"), at, false, true);
      two.record(api.key("k"), at, false, true);
      await Promise.all([one.flush(), two.flush()]);
    }
    assert.equal(api.writes.length, 1);
    // An interval later the newest login is written once.
    now = T0 + MIN + 5000;
    one.record(api.key("k"), now, false, true);
    two.record(api.key("k"), now, false, true);
    await Promise.all([one.flush(), two.flush()]);
    assert.equal(api.writes.length, 2);
    assert.deepEqual(api.writes[1]!.previousKey, prev(UNTIL, T0 + MIN + 5000));
  });

  it("a new window's first login is written at once, though the stored one is recent", async () => {
    const api = fakeApi();
    const rec = recorder(api, { now: () => T0 });
    const later = UNTIL + 600_000;
    // status names the window before, used a second ago; the key has been rotated again since.
    rotated(api, "k", later, { lastActivity: rfc3339Seconds(T0), previousKey: prev(UNTIL, T0) });
    rec.record(api.key("k"), T0 + 1000, false, true);
    await rec.flush();
    assert.equal(api.writes.length, 1);
    assert.deepEqual(api.writes[0]!.previousKey, prev(later, T0 + 1000));
    assert.equal(api.writes[0]!.lastActivity, undefined, "lastActivity keeps its interval");
  });

  it("a login is not written into a window that a rotation since replaced or dropped", async () => {
    const api = fakeApi();
    const rec = recorder(api, { now: () => T0 });
    rec.record(rotated(api, "replaced"), T0, false, true);
    rec.record(rotated(api, "dropped"), T0, false, true);
    rotated(api, "replaced", UNTIL + 1000);
    api.put({ metadata: { name: "dropped" }, spec: { user: "u" }, status: {} });
    await rec.flush();
    assert.deepEqual(
      api.writes.map((w) => [w.name, w.previousKey]),
      [
        ["replaced", undefined],
        ["dropped", undefined],
      ],
    );
    assert.equal(rec.pending, 0);
  });

  it("a previous key without a well-formed window records lastActivity only", async () => {
    const api = fakeApi();
    const rec = recorder(api, { now: () => T0 });
    rec.record(api.key("k"), T0, false, true);
    await rec.flush();
    assert.deepEqual(api.writes, [{ name: "k", lastActivity: rfc3339Seconds(T0) }]);
  });
});

describe("previousKeyLastActivity: the previous key's use in the current window", () => {
  const key = (until: string, status: OwnedAccessKey["status"]): OwnedAccessKey => ({
    metadata: { name: "k" },
    spec: { previousKey: { key: `sha256:${"cd".repeat(32)}`, until } },
    status,
  });
  const until = "2026-03-10T01:00:00Z";

  it("is status.previousKey's lastActivity while it names the key's window, else nothing", () => {
    const used = { until, lastActivity: "2026-03-10T00:30:00Z" };
    assert.equal(
      previousKeyLastActivity(key(until, { previousKey: used })),
      Date.parse(used.lastActivity),
    );
    assert.equal(
      previousKeyLastActivity(key("2026-03-10T02:00:00Z", { previousKey: used })),
      undefined,
    );
    assert.equal(previousKeyLastActivity(key(until, {})), undefined);
    assert.equal(
      previousKeyLastActivity(key(until, { previousKey: { until, lastActivity: "soon" } })),
      undefined,
    );
    assert.equal(
      previousKeyLastActivity({ metadata: { name: "k" }, status: { previousKey: used } }),
      undefined,
    );
  });
});

describe("vgate serve --activity-write-interval", () => {
  const parse = (...flags: string[]) => {
    const o = parseServeArgs(["--dev", ...flags]);
    assert.ok(o !== "help");
    return o;
  };

  it("is a minute unless set; the flush follows it, at most every 10 s", () => {
    assert.equal(parse().activityWriteIntervalMs, MIN);
    assert.equal(parse("--activity-write-interval", "3s").activityWriteIntervalMs, 3000);
    assert.equal(flushIntervalFor(MIN), 10_000);
    assert.equal(flushIntervalFor(10 * MIN), 10_000);
    assert.equal(flushIntervalFor(3000), 500);
    assert.match(serveCommand.help, /\n\s+--activity-write-interval duration\s+\S/);
  });

  for (const [value, message] of [
    ["500ms", /invalid --activity-write-interval "500ms": must be between 1s and 3600s/],
    ["2h", /invalid --activity-write-interval "2h": use a duration such as 500ms or 5s/],
    ["0", /must be between 1s and 3600s/],
  ] as const) {
    it(`refuses ${value}`, () => {
      assert.throws(
        () => parse("--activity-write-interval", value),
        (err: Error & { exitCode?: number }) => {
          assert.match(err.message, message);
          assert.equal(err.exitCode, 2);
          return true;
        },
      );
    });
  }
});
