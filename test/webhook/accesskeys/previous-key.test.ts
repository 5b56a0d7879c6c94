// Rotation with a grace window, in admission (docs/decisions.md OAK-38): the mutating webhook turns
// the rotation-grace annotation of a rotation into spec.previousKey (the old key's digest, never the
// key, in both storage modes) and removes the annotation; no client can set, change or extend
// spec.previousKey, through either webhook. Real AdmissionReview JSON, decoded as the server does.

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { decodeAdmissionReview } from "../../../webhook/src/admission/review.js";
import type { AdmissionReviewResponse } from "../../../webhook/src/admission/review.js";
import {
  admitMutate,
  admitValidate,
  type AccessKeyAdmission,
} from "../../../webhook/src/accesskeys/admit.js";
import type { KeyStorage } from "../../../webhook/src/accesskeys/request.js";
import { hashKey } from "../../../webhook/src/shared/key-hash.js";
import { resourceIdentity } from "../../../webhook/src/shared/ownedaccesskey.js";
import type { KubeApi } from "../../../webhook/src/kube/ports.js";
import { review } from "../../support/reviews.js";
import { parseServeArgs } from "../../../webhook/src/cli/serve-options.js";
import { serveCommand } from "../../../webhook/src/cli/serve.js";

type Json = Record<string, unknown>;
const NOW = Date.parse("2026-11-29T06:00:00Z");
const ANNOTATION = "accesskey.loft.sh/rotation-grace-seconds";
const OLD = randomBytes(32).toString("base64url");
const NEW = randomBytes(32).toString("base64url");

const api: KubeApi = {
  getAccessKey: async () => null,
  resourceFor: async () => null,
  subjectAccessReview: async () => ({ allowed: false }),
  ready: async () => true,
};

function deps(keyStorage: KeyStorage, maxRotationGraceMs = 24 * 3600_000): AccessKeyAdmission {
  return {
    identity: resourceIdentity(),
    adminGroups: ["system:masters"],
    api,
    keyStorage,
    maxRotationGraceMs,
    now: () => NOW,
  };
}

function stored(keyStorage: KeyStorage, spec: Json = {}): Json {
  return {
    apiVersion: "management.loft.sh/v1",
    kind: "OwnedAccessKey",
    metadata: { name: "ci", uid: "u-ci", resourceVersion: "7" },
    spec: {
      user: "alice",
      type: "User",
      key: keyStorage === "hashed" ? hashKey(OLD) : OLD,
      ...spec,
    },
  };
}

/** The old object with `change` applied to a copy, as a client would PUT it. */
function sent(old: Json, change: (o: { metadata: Json; spec: Json }) => void): Json {
  const copy = structuredClone(old) as { metadata: Json; spec: Json };
  change(copy);
  return copy;
}

function rotation(old: Json, graceSeconds?: string, newKey = NEW): Json {
  return sent(old, (o) => {
    o.spec.key = newKey;
    if (graceSeconds !== undefined) o.metadata.annotations = { [ANNOTATION]: graceSeconds };
  });
}

const update = (object: Json, oldObject: Json) =>
  decodeAdmissionReview(
    JSON.parse(JSON.stringify(review({ operation: "UPDATE", object, oldObject, name: "ci" }))),
  );

interface Op {
  op: string;
  path: string;
  value?: unknown;
}

/** The object the mutating webhook's JSONPatch makes of `object` (only the ops these tests see). */
function patched(object: Json, res: AdmissionReviewResponse): Json {
  const { patch } = res.response as { patch?: string };
  const out = structuredClone(object);
  if (!patch) return out;
  for (const { op, path, value } of JSON.parse(Buffer.from(patch, "base64").toString()) as Op[]) {
    const steps = path
      .slice(1)
      .split("/")
      .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
    const last = steps.pop()!;
    let node = out as Json;
    for (const s of steps) node = node[s] as Json;
    if (op === "remove") Reflect.deleteProperty(node, last);
    else node[last] = structuredClone(value);
  }
  return out;
}

async function mutateThenValidate(object: Json, old: Json, d: AccessKeyAdmission) {
  const mutated = await admitMutate(update(object, old), d);
  if (!mutated.response.allowed) return { mutated, object: undefined, validated: undefined };
  const after = patched(object, mutated);
  const validated = await admitValidate(update(after, old), d);
  return { mutated, object: after, validated };
}

const message = (res: AdmissionReviewResponse | undefined) =>
  (res?.response as { status?: { message?: string; code?: number } }).status;

for (const storage of ["plain", "hashed"] as const) {
  describe(`rotation grace in admission, ${storage} storage`, () => {
    it("a rotation with a grace keeps the old key's digest and a deadline, and drops the annotation", async () => {
      const old = stored(storage);
      const { object, validated } = await mutateThenValidate(
        rotation(old, "3600"),
        old,
        deps(storage),
      );
      const spec = object!.spec as Json;
      assert.deepEqual(spec.previousKey, { key: hashKey(OLD), until: "2026-11-29T07:00:00Z" });
      assert.equal(spec.key, storage === "hashed" ? hashKey(NEW) : NEW);
      assert.equal((object!.metadata as Json).annotations, undefined, "annotation removed");
      assert.equal(validated!.response.allowed, true, JSON.stringify(validated!.response));
      // Never the old key itself, in any storage mode.
      assert.ok(!JSON.stringify(object).includes(OLD));
    });

    it("a grace of 0, or none, is a rotation without a window", async () => {
      const old = stored(storage);
      for (const grace of ["0", undefined]) {
        const { object, validated } = await mutateThenValidate(
          rotation(old, grace),
          old,
          deps(storage),
        );
        assert.equal((object!.spec as Json).previousKey, undefined);
        assert.equal(validated!.response.allowed, true);
      }
    });

    it("a later rotation replaces the previous key; one with no grace drops it", async () => {
      const first = stored(storage, {
        previousKey: { key: hashKey("older"), until: "2026-11-29T06:30:00Z" },
      });
      const again = await mutateThenValidate(rotation(first, "60"), first, deps(storage));
      assert.deepEqual((again.object!.spec as Json).previousKey, {
        key: hashKey(OLD),
        until: "2026-11-29T06:01:00Z",
      });
      const none = await mutateThenValidate(rotation(first), first, deps(storage));
      assert.equal((none.object!.spec as Json).previousKey, undefined);
    });

    it("a grace above --max-rotation-grace is refused with the limit", async () => {
      const old = stored(storage);
      const { mutated } = await mutateThenValidate(
        rotation(old, "7201"),
        old,
        deps(storage, 7200_000),
      );
      assert.equal(mutated.response.allowed, false);
      assert.equal(message(mutated)?.code, 422);
      assert.match(
        message(mutated)?.message ?? "",
        /metadata\.annotations\[accesskey\.loft\.sh\/rotation-grace-seconds\]: Invalid value: "7201": must be at most 7200 seconds/,
      );
    });

    it("a grace without a new key is refused", async () => {
      const old = stored(storage);
      const object = sent(old, (o) => (o.metadata.annotations = { [ANNOTATION]: "60" }));
      const { mutated } = await mutateThenValidate(object, old, deps(storage));
      assert.equal(mutated.response.allowed, false);
      assert.match(message(mutated)?.message ?? "", /spec\.key must change in the same update/);
    });

    it("no client can plant, change or extend spec.previousKey", async () => {
      const open = { key: hashKey(OLD), until: "2026-11-29T06:30:00Z" };
      const old = stored(storage, { previousKey: open });
      const none = stored(storage);
      // [what the client sends, what is stored, whether the validating webhook alone refuses it]
      const attempts: [Json, Json, boolean][] = [
        // extend the window
        [
          sent(old, (o) => (o.spec.previousKey = { ...open, until: "2026-11-30T06:30:00Z" })),
          old,
          true,
        ],
        // plant another digest
        [sent(old, (o) => (o.spec.previousKey = { ...open, key: hashKey("stolen") })), old, true],
        // plant one where there was none
        [sent(none, (o) => (o.spec.previousKey = open)), none, true],
        // a rotation without the annotation, with a hand-made window: what the annotation would
        // have given, so only the mutating webhook (which derives the value) tells them apart
        [
          sent(none, (o) => {
            o.spec.key = NEW;
            o.spec.previousKey = { key: hashKey(OLD), until: "2026-11-29T06:10:00Z" };
          }),
          none,
          false,
        ],
      ];
      for (const [attempt, oldObject, validatorRefuses] of attempts) {
        const d = deps(storage);
        const mutated = await admitMutate(update(attempt, oldObject), d);
        assert.equal(mutated.response.allowed, false, JSON.stringify(attempt.spec));
        assert.equal(message(mutated)?.code, 422);
        assert.match(
          message(mutated)?.message ?? "",
          /spec\.previousKey: Forbidden: is set by vgate on a rotation/,
        );
        if (!validatorRefuses) continue;
        // The validating webhook refuses it as well, were the mutating webhook bypassed.
        const validated = await admitValidate(update(attempt, oldObject), d);
        assert.equal(validated.response.allowed, false, JSON.stringify(attempt.spec));
        assert.match(message(validated)?.message ?? "", /spec\.previousKey: Forbidden/);
      }
    });

    it("an unchanged window passes other updates, and an expired one is dropped", async () => {
      const open = { key: hashKey(OLD), until: "2026-11-29T06:30:00Z" };
      const old = stored(storage, { previousKey: open });
      const disabled = sent(old, (o) => (o.spec.disabled = true));
      const kept = await mutateThenValidate(disabled, old, deps(storage));
      assert.deepEqual((kept.object!.spec as Json).previousKey, open);
      assert.equal(kept.validated!.response.allowed, true);
      const expired = stored(storage, { previousKey: { ...open, until: "2026-11-29T05:59:59Z" } });
      const later = await mutateThenValidate(
        sent(expired, (o) => (o.spec.disabled = true)),
        expired,
        deps(storage),
      );
      assert.equal((later.object!.spec as Json).previousKey, undefined);
      // Removing it ends the window early: it only takes access away.
      const removed = await mutateThenValidate(
        sent(old, (o) => delete o.spec.previousKey),
        old,
        deps(storage),
      );
      assert.equal((removed.object!.spec as Json).previousKey, undefined);
      assert.equal(removed.validated!.response.allowed, true);
    });

    it("a new key has no previous key and cannot ask for one", async () => {
      const d = deps(storage);
      const create = (object: Json) =>
        admitValidate(decodeAdmissionReview(JSON.parse(JSON.stringify(review({ object })))), d);
      const planted = stored("hashed", {
        previousKey: { key: hashKey(OLD), until: "2026-11-29T06:30:00Z" },
      });
      assert.match(message(await create(planted))?.message ?? "", /spec\.previousKey: Forbidden/);
      const asked = sent(
        stored("hashed"),
        (o) => (o.metadata.annotations = { [ANNOTATION]: "60" }),
      );
      assert.match(message(await create(asked))?.message ?? "", /applies to a rotation only/);
    });
  });
}

describe("vgate serve --max-rotation-grace", () => {
  const parse = (...flags: string[]) => {
    const o = parseServeArgs(["--dev", ...flags]);
    assert.ok(o !== "help");
    return o.auth?.maxRotationGraceMs;
  };

  it("is 24 hours unless set, and is given to the admission webhooks", () => {
    assert.equal(parse(), 24 * 3600_000);
    assert.equal(parse("--max-rotation-grace", "1h"), 3600_000);
    assert.equal(parse("--max-rotation-grace", "0s"), 0);
    assert.match(serveCommand.help, /\n\s+--max-rotation-grace duration\s+\S/);
  });

  for (const value of ["721h", "-1h", "1d", "soon"]) {
    it(`refuses ${value}`, () => {
      assert.throws(
        () => parse(`--max-rotation-grace=${value}`),
        (err: Error & { exitCode?: number }) => {
          assert.match(err.message, /invalid --max-rotation-grace/);
          assert.equal(err.exitCode, 2);
          return true;
        },
      );
    });
  }

  it("0s allows no window: any grace is refused", async () => {
    const old = stored("plain");
    const { mutated } = await mutateThenValidate(rotation(old, "1"), old, deps("plain", 0));
    assert.equal(mutated.response.allowed, false);
    assert.match(message(mutated)?.message ?? "", /must be at most 0 seconds/);
  });
});
