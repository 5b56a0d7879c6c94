import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { redactSecrets, REDACTED } from "../../../webhook/src/server/redact.js";
import { createLogger, isoTimestamp } from "../../../webhook/src/server/logger.js";

const SECRET = "s3cr3t-KEY-4q6bYp0kVvQy8t1Jm2cZrW3xN5";

describe("redactSecrets", () => {
  it("replaces secret fields at any depth and leaves the input unchanged", () => {
    const input = {
      request: { object: { spec: { key: SECRET, identity: { connectorData: SECRET } } } },
      list: [{ oidcLogin: { idToken: SECRET, accessToken: SECRET, refreshToken: SECRET } }],
      headers: { Authorization: `Bearer ${SECRET}` },
      name: "visible",
    };
    const copy = structuredClone(input);
    const out = JSON.stringify(redactSecrets(input));
    assert.ok(!out.includes(SECRET), out);
    assert.ok(out.includes(REDACTED));
    assert.ok(out.includes("visible"));
    assert.deepEqual(input, copy);
  });

  it("redacts bearer tokens inside free text", () => {
    assert.equal(
      redactSecrets(`auth failed for Bearer ${SECRET} (jwt a.b.c)`),
      `auth failed for Bearer ${REDACTED} (jwt a.b.c)`,
    );
  });

  it("returns a record with nothing to redact as is, without copying it", () => {
    const clean = {
      route: "validate/ownedaccesskeys",
      user: "alice",
      code: 200,
      nested: { a: [1, "b"] },
    };
    assert.equal(redactSecrets(clean), clean);
    const dirty = { ...clean, token: SECRET };
    assert.notEqual(redactSecrets(dirty), dirty);
  });

  it("does not invent redactions for empty values", () => {
    assert.deepEqual(redactSecrets({ key: "" }), { key: "" });
  });
});

describe("logger", () => {
  it("never writes a planted secret, in fields or in the message", () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    const logger = createLogger("debug", sink);
    logger.info({ spec: { key: SECRET }, token: SECRET }, "object");
    logger.debug({ review: { request: { object: { spec: { key: SECRET } } } } }, "debug dump");
    logger.error(`request with Authorization: Bearer ${SECRET} failed`);
    assert.equal(lines.length, 3);
    const all = lines.join("");
    assert.ok(!all.includes(SECRET), all);
    assert.equal(all.split(REDACTED).length - 1, 4);
  });

  it("writes each key once: the request line's `name` is the object's, not the logger's", () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    createLogger("info", sink).info({ name: "ci-key", user: "alice" }, "admission");
    const line = lines[0]!;
    const keys = [...line.matchAll(/"([^"]+)":/g)].map((m) => m[1]);
    assert.deepEqual(keys, [...new Set(keys)], line);
    assert.equal((JSON.parse(line) as { name: string }).name, "ci-key");
  });

  it("stamps each line with the RFC 3339 UTC time, as pino's isoTime does", () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    const before = Date.now();
    createLogger("info", sink).info("stamped");
    const time = Date.parse((JSON.parse(lines[0]!) as { time: string }).time);
    assert.ok(time >= before && time <= Date.now(), lines[0]);
  });

  it("formats every millisecond of a second, and a new second, exactly like Date#toISOString", () => {
    const base = Date.UTC(2026, 10, 22, 23, 59, 58);
    for (const now of [base, base + 1, base + 9, base + 10, base + 99, base + 100, base + 999]) {
      assert.equal(isoTimestamp(now), `,"time":"${new Date(now).toISOString()}"`);
    }
    // The next second (and the next day) after a cached one; then back to an earlier second.
    for (const now of [base + 1000, base + 2000, base + 2001, base - 5000, base]) {
      assert.equal(isoTimestamp(now), `,"time":"${new Date(now).toISOString()}"`);
    }
  });
});

describe("logger and credential shapes", () => {
  it("redacts values shaped like credentials in any field, and leaves names and UIDs alone", () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    const logger = createLogger("info", sink);
    const uid = "705ab4f5-6393-11e8-b7cc-42010a800002";
    logger.info({ name: SECRET, uid, route: "validate/ownedaccesskeys" }, "admission");
    logger.info(`odd object name ${SECRET} seen`);
    const all = lines.join("");
    assert.ok(!all.includes(SECRET), all);
    assert.ok(all.includes(uid) && all.includes("validate/ownedaccesskeys"), all);
    assert.equal(all.split(REDACTED).length - 1, 2);
  });
});
