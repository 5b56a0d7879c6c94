import assert from "node:assert/strict";
import { describe, it } from "mocha";
import type { OwnedAccessKey } from "../../../webhook/src/api/ownedaccesskey.js";
import {
  ActivityRecorder,
  flushIntervalFor,
  rfc3339Seconds,
  type ActivityWriter,
} from "../../../webhook/src/auth/activity.js";
import { parseServeArgs } from "../../../webhook/src/cli/serve-options.js";
import { serveCommand } from "../../../webhook/src/cli/serve.js";

const T0 = Date.parse("2026-03-10T00:00:00Z");
const MIN = 60_000;

const key = (name: string, lastActivity?: string): OwnedAccessKey => ({
  metadata: { name },
  spec: { user: "u" },
  status: lastActivity === undefined ? {} : { lastActivity },
});

/** A writer that records calls; its answers can be scripted per call. */
function fakeWriter() {
  const writes: { name: string; lastActivity: string }[] = [];
  let calls = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  let answer: (name: string) => Promise<"written" | "gone"> = async () => "written";
  const writer: ActivityWriter = async (name, lastActivity) => {
    calls++;
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    try {
      await new Promise((resolve) => setImmediate(resolve));
      const result = await answer(name);
      writes.push({ name, lastActivity });
      return result;
    } finally {
      inFlight--;
    }
  };
  return {
    writer,
    writes,
    maxInFlight: () => maxInFlight,
    calls: () => calls,
    answerWith: (f: typeof answer) => (answer = f),
  };
}

describe("ActivityRecorder", () => {
  it("writes at most maxWritesPerFlush keys per flush, oldest first, and loses none", async () => {
    const w = fakeWriter();
    const rec = new ActivityRecorder(w.writer, { now: () => T0, maxWritesPerFlush: 200 });
    for (let i = 0; i < 500; i++) rec.record(key(`k${i}`), T0 + i);
    await rec.flush();
    assert.equal(w.writes.length, 200);
    assert.deepEqual(
      w.writes.map((x) => x.name).sort(),
      Array.from({ length: 200 }, (_, i) => `k${i}`).sort(),
      "the oldest uses go first",
    );
    assert.equal(rec.pending, 300);
    await rec.flush();
    await rec.flush();
    assert.equal(w.writes.length, 500);
    assert.equal(new Set(w.writes.map((x) => x.name)).size, 500, "each key once");
    assert.equal(rec.pending, 0);
  });

  it("formats lastActivity as metav1.Time does (UTC, whole seconds)", () => {
    assert.equal(rfc3339Seconds(Date.parse("2026-03-10T01:02:03.999Z")), "2026-03-10T01:02:03Z");
    assert.equal(rfc3339Seconds(0), "1970-01-01T00:00:00Z");
  });

  it("writes at most once a minute per key under 10,000 records", async () => {
    let now = T0;
    const w = fakeWriter();
    const rec = new ActivityRecorder(w.writer, { now: () => now });
    const names = ["a", "b", "c"];
    // 10,000 logins over 5 minutes, flushing every 10 seconds.
    for (let i = 0; i < 10_000; i++) {
      now = T0 + Math.floor((i * 5 * MIN) / 10_000);
      rec.record(key(names[i % 3]!), now);
      if (i % 333 === 0) await rec.flush();
    }
    await rec.flush();
    for (const name of names) {
      const times = w.writes.filter((x) => x.name === name).map((x) => Date.parse(x.lastActivity));
      // Once at the start, then once after each full minute: 0, 1, 2, 3 and 4 minutes.
      assert.equal(times.length, 5, `${name}: ${times.length} writes`);
      // The written values are whole seconds, so two writes a minute apart may differ by 59.x s.
      for (let i = 1; i < times.length; i++) {
        assert.ok(
          times[i]! - times[i - 1]! >= MIN - 1000,
          `${name}: writes ${i - 1} and ${i} too close`,
        );
      }
    }
  });

  it("skips a record when the stored status.lastActivity is under a minute old", async () => {
    const w = fakeWriter();
    const rec = new ActivityRecorder(w.writer);
    rec.record(key("k", rfc3339Seconds(T0)), T0 + MIN - 1);
    assert.equal(rec.pending, 0);
    rec.record(key("k", rfc3339Seconds(T0)), T0 + MIN);
    assert.equal(rec.pending, 1);
    await rec.flush();
    assert.deepEqual(w.writes, [{ name: "k", lastActivity: rfc3339Seconds(T0 + MIN) }]);
  });

  it("record() writes nothing by itself; flush() batches with bounded concurrency", async () => {
    const w = fakeWriter();
    const rec = new ActivityRecorder(w.writer, { concurrency: 3 });
    for (let i = 0; i < 20; i++) rec.record(key(`k${i}`), T0);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(w.writes.length, 0);
    assert.equal(rec.latest("k7"), T0);
    await rec.flush();
    assert.equal(w.writes.length, 20);
    assert.equal(w.maxInFlight(), 3);
    assert.equal(rec.pending, 0);
    await rec.flush();
    assert.equal(w.writes.length, 20);
  });

  it("a failed write stays queued and is retried; a newer record replaces it", async () => {
    const errors: string[] = [];
    const w = fakeWriter();
    const rec = new ActivityRecorder(w.writer, { onError: (name) => errors.push(name) });
    w.answerWith(async () => {
      throw new Error("conflict");
    });
    rec.record(key("k"), T0);
    await rec.flush();
    assert.deepEqual(errors, ["k"]);
    assert.equal(rec.pending, 1);
    rec.record(key("k"), T0 + 30_000); // within the minute of the queued value: nothing new
    rec.record(key("k"), T0 + MIN + 5000);
    w.answerWith(async () => "written");
    await rec.flush();
    assert.deepEqual(w.writes, [{ name: "k", lastActivity: rfc3339Seconds(T0 + MIN + 5000) }]);
    assert.equal(rec.pending, 0);
  });

  it("an onError that throws does not break later flushes", async () => {
    const w = fakeWriter();
    const rec = new ActivityRecorder(w.writer, {
      onError: () => {
        throw new Error("logger broke");
      },
    });
    w.answerWith(async () => {
      throw new Error("down");
    });
    rec.record(key("k"), T0);
    await rec.flush();
    w.answerWith(async () => "written");
    await rec.flush();
    assert.deepEqual(w.writes, [{ name: "k", lastActivity: rfc3339Seconds(T0) }]);
  });

  it("timer ticks do not pile up flushes while a write hangs", async () => {
    const w = fakeWriter();
    let flushesDone = 0; // each flush reads the clock once, to prune
    const rec = new ActivityRecorder(w.writer, {
      flushIntervalMs: 2,
      now: () => (flushesDone++, T0),
    });
    let release = () => {};
    w.answerWith(() => new Promise((resolve) => (release = () => resolve("written"))));
    rec.record(key("k"), T0);
    rec.start();
    await new Promise((resolve) => setTimeout(resolve, 40));
    assert.equal(w.calls(), 1);
    w.answerWith(async () => "written");
    release();
    await rec.stop();
    assert.equal(w.calls(), 1);
    // The hung flush, and the one stop() makes; not one per tick.
    assert.equal(flushesDone, 2);
  });

  it("a writer that throws synchronously is a failed write, not a crash", async () => {
    const errors: unknown[] = [];
    const rec = new ActivityRecorder(
      () => {
        throw new Error("boom");
      },
      { onError: (_n, err) => errors.push(err) },
    );
    rec.record(key("k"), T0);
    await rec.flush();
    assert.equal(errors.length, 1);
    assert.equal(rec.pending, 1);
  });

  it("a record during an in-flight write is written by the next flush, never overwritten by the older value", async () => {
    const w = fakeWriter();
    const rec = new ActivityRecorder(w.writer);
    let release = () => {};
    w.answerWith(() => new Promise((resolve) => (release = () => resolve("written"))));
    rec.record(key("k"), T0);
    const first = rec.flush();
    while (w.calls() === 0) await new Promise((resolve) => setImmediate(resolve));
    rec.record(key("k"), T0 + MIN); // while the first write is in flight
    w.answerWith(async () => "written");
    release();
    const second = rec.flush();
    await Promise.all([first, second]);
    assert.deepEqual(
      w.writes.map((x) => x.lastActivity),
      [rfc3339Seconds(T0), rfc3339Seconds(T0 + MIN)],
    );
    assert.equal(rec.pending, 0);
  });

  it('"gone" drops the key; forget() drops a queued write', async () => {
    const w = fakeWriter();
    const rec = new ActivityRecorder(w.writer);
    w.answerWith(async (name) => (name === "deleted" ? "gone" : "written"));
    rec.record(key("deleted"), T0);
    rec.record(key("forgotten"), T0);
    rec.forget("forgotten");
    await rec.flush();
    assert.deepEqual(
      w.writes.map((x) => x.name),
      ["deleted"],
    );
    assert.equal(rec.pending, 0);
    assert.equal(rec.latest("deleted"), undefined);
    assert.equal(rec.latest("forgotten"), undefined);
    await rec.flush();
    assert.equal(w.writes.length, 1);
  });

  it("stop() flushes once, and nothing is written after it", async () => {
    const w = fakeWriter();
    const rec = new ActivityRecorder(w.writer, { flushIntervalMs: 5 });
    rec.start();
    rec.record(key("k"), T0);
    await rec.stop();
    assert.equal(w.writes.length, 1);
    rec.record(key("later"), T0 + 10 * MIN);
    await new Promise((resolve) => setTimeout(resolve, 30));
    await rec.flush();
    assert.equal(w.writes.length, 1);
  });

  it("start() flushes periodically", async () => {
    const w = fakeWriter();
    const rec = new ActivityRecorder(w.writer, { flushIntervalMs: 5 });
    rec.start();
    rec.record(key("k"), T0);
    for (let i = 0; i < 100 && w.writes.length === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await rec.stop();
    assert.equal(w.writes.length, 1);
  });

  it("keeps memory bounded: written entries older than a minute are pruned", async () => {
    let now = T0;
    const w = fakeWriter();
    const rec = new ActivityRecorder(w.writer, { now: () => now, maxWritesPerFlush: 1000 });
    for (let i = 0; i < 1000; i++) rec.record(key(`k${i}`), T0);
    await rec.flush();
    assert.equal(rec.latest("k1"), T0);
    now = T0 + MIN;
    await rec.flush();
    assert.equal(rec.latest("k1"), undefined);
    // A failed write is not pruned.
    w.answerWith(async () => {
      throw new Error("down");
    });
    rec.record(key("stuck"), now);
    now += 10 * MIN;
    await rec.flush();
    assert.equal(rec.latest("stuck"), T0 + MIN);
    assert.equal(rec.pending, 1);
  });

  it("ignores keys without a name and non-finite times", async () => {
    const w = fakeWriter();
    const rec = new ActivityRecorder(w.writer);
    rec.record({ metadata: {} }, T0);
    rec.record({ metadata: { name: "" } }, T0);
    rec.record(key("k"), NaN);
    await rec.flush();
    assert.equal(w.writes.length, 0);
  });
});

describe("ActivityRecorder: status.weakKey", () => {
  it("writes weakKey when a login's length disagrees with the stored status, even within the minute", async () => {
    const writes: [string, string, boolean | undefined][] = [];
    const writer: ActivityWriter = async (name, lastActivity, weak) => {
      writes.push([name, lastActivity, weak]);
      return "written";
    };
    const r = new ActivityRecorder(writer, { now: () => T0 });
    const recent = rfc3339Seconds(T0 - 1000);
    // A fresh login just written: no write for time alone.
    r.record(key("strong", recent), T0);
    // A short key logging in: its weakness is written at once, with the activity.
    r.record(key("short", recent), T0, true);
    // Already recorded as weak: nothing to change.
    r.record(
      { ...key("known", recent), status: { lastActivity: recent, weakKey: true } },
      T0,
      true,
    );
    // Rotated to a long key: false is written.
    r.record({ ...key("rotated", recent), status: { lastActivity: recent, weakKey: true } }, T0);
    await r.flush();
    assert.deepEqual(writes, [
      ["short", rfc3339Seconds(T0), true],
      ["rotated", rfc3339Seconds(T0), false],
    ]);
    // Written once: the next flush writes nothing more.
    await r.flush();
    assert.equal(writes.length, 2);
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
