// Keys stay secret (docs/decisions.md OAK-19, OAK-20): kubectl's last-applied-configuration gets
// the key's hash, a key that shows anywhere else is refused (found by value: a known plaintext as a
// substring, or a token whose SHA-256 is the stored hash), new keys are at least 32 characters, and
// a write that sets a key fails closed while the duplicate check cannot be made.

import assert from "node:assert/strict";
import fc from "fast-check";
import { fieldErrorText } from "../../../webhook/src/shared/field-errors.js";
import {
  resourceIdentity,
  type OwnedAccessKey,
} from "../../../webhook/src/shared/ownedaccesskey.js";
import {
  exposureErrors,
  hashLastApplied,
  LAST_APPLIED,
  lastAppliedErrors,
  plaintextKeys,
} from "../../../webhook/src/accesskeys/key-exposure.js";
import { hashKey } from "../../../webhook/src/shared/key-hash.js";
import {
  duplicateCheckUnavailable,
  keyStorageErrors,
} from "../../../webhook/src/accesskeys/key-storage.js";
import { admitMutate, admitValidate } from "../../../webhook/src/accesskeys/admit.js";
import { mutateKey } from "../../../webhook/src/accesskeys/mutate.js";
import { decodeAdmissionReview } from "../../../webhook/src/admission/review.js";
import { review } from "../../support/reviews.js";
import type { KeyRequest } from "../../../webhook/src/accesskeys/request.js";
import type { KubeApi } from "../../../webhook/src/kube/ports.js";

const KEY = "Zp3xO9f0kJ2vHq7Wm1LrT8sYcB4nE6uA5dG0iK2oQ1w";
const HASHED = hashKey(KEY);

const api: KubeApi = {
  getAccessKey: async () => null,
  resourceFor: async () => null,
  subjectAccessReview: async () => ({ allowed: false }),
  ready: async () => true,
};

function applied(spec: Record<string, unknown>, newline = true): string {
  const obj = {
    apiVersion: "management.loft.sh/v1",
    kind: "OwnedAccessKey",
    metadata: { annotations: {}, name: "ci" },
    spec,
  };
  return JSON.stringify(obj) + (newline ? "\n" : "");
}

function key(
  spec: Record<string, unknown>,
  annotations?: Record<string, string>,
  labels?: Record<string, string>,
): OwnedAccessKey {
  return {
    apiVersion: "management.loft.sh/v1",
    kind: "OwnedAccessKey",
    metadata: {
      name: "ci",
      ...(annotations ? { annotations } : {}),
      ...(labels ? { labels } : {}),
    },
    spec,
  };
}

function request(
  operation: "CREATE" | "UPDATE",
  object: OwnedAccessKey,
  opts: { storage?: "plain" | "hashed"; old?: OwnedAccessKey; synced?: boolean } = {},
): KeyRequest {
  return {
    operation,
    object,
    oldObject: opts.old ?? null,
    name: "ci",
    userInfo: { username: "alice", groups: [] },
    isAdmin: false,
    adminGroups: ["system:masters"],
    identity: resourceIdentity(),
    dryRun: false,
    keyStorage: opts.storage ?? "plain",
    keyIndex:
      opts.synced === undefined
        ? undefined
        : { synced: () => opts.synced!, namesWithSameKey: () => [] },
  };
}

const texts = (errors: { type: string }[]): string[] =>
  errors.map((e) => fieldErrorText(e as never));

describe("keys stay secret: last-applied-configuration and exposure", () => {
  it("hashes the key in last-applied-configuration, keeping the rest and its trailing newline", () => {
    const obj = key(
      { key: HASHED },
      { [LAST_APPLIED]: applied({ key: KEY, user: "alice" }), a: "b" },
    );
    const out = hashLastApplied(obj);
    const text = out.metadata!.annotations![LAST_APPLIED]!;
    assert.ok(text.endsWith("\n"));
    assert.deepEqual(JSON.parse(text), JSON.parse(applied({ key: HASHED, user: "alice" })));
    assert.equal(out.metadata!.annotations!["a"], "b");
    assert.ok(!JSON.stringify(out).includes(KEY));
    // A hash, no key, or no JSON: nothing to rewrite.
    for (const a of [applied({ key: HASHED }), applied({ user: "x" }, false), "{not json", "[]"]) {
      const same = key({ key: HASHED }, { [LAST_APPLIED]: a });
      assert.equal(hashLastApplied(same), same);
    }
  });

  it("knows the plaintexts a request carries, and refuses an unhashed last-applied in validation", () => {
    const obj = key(
      { key: KEY },
      { [LAST_APPLIED]: applied({ key: "Other0123456789abcdefghijklmnopqrstu" }) },
    );
    assert.deepEqual(plaintextKeys(obj), [KEY, "Other0123456789abcdefghijklmnopqrstu"]);
    assert.deepEqual(plaintextKeys(key({ key: HASHED })), []);
    assert.deepEqual(texts(lastAppliedErrors(obj)), [
      `metadata.annotations[${LAST_APPLIED}]: Forbidden: holds spec.key unhashed, which --key-storage=hashed never stores; is the mutating webhook installed?`,
    ]);
    const ok = key({ key: HASHED }, { [LAST_APPLIED]: applied({ key: HASHED }) });
    assert.deepEqual(lastAppliedErrors(ok), []);
  });

  it("finds the key anywhere but spec.key: as a substring of a known plaintext, or by its hash", () => {
    const exposed = key(
      { key: HASHED, description: `use ${KEY} in CI` },
      { "example.com/token": `Bearer ${KEY}`, [`x-${KEY.slice(0, 40)}`]: "k" },
      { copy: KEY },
    );
    assert.deepEqual(
      texts(exposureErrors(exposed, [KEY])).map((t) => t.split(": ")[0]),
      ["metadata.annotations[example.com/token]", "metadata.labels[copy]", "spec.description"],
    );
    // Without the plaintext (an edit that sends only the stored hash): found by the token's hash.
    assert.equal(exposureErrors(exposed, []).length, 3);
    const jsonish = key({ key: HASHED }, { note: `{"token":"${KEY}"}`, env: `KEY=${KEY};` });
    assert.equal(exposureErrors(jsonish, []).length, 2);
    // The hash itself, and text that merely resembles the key, are fine.
    const clean = key({ key: HASHED }, { "example.com/digest": HASHED, note: KEY.slice(1) });
    assert.deepEqual(exposureErrors(clean, []), []);
    // The messages never hold the key.
    for (const t of texts(exposureErrors(exposed, [KEY]))) assert.ok(!t.includes(KEY));
  });

  it("property: a key put into any annotation or label value is found, and nothing else is", () => {
    const value = fc.string({ maxLength: 40 }).filter((s) => !s.includes(KEY));
    fc.assert(
      fc.property(
        fc.dictionary(fc.stringMatching(/^[a-z][a-z0-9.-]{0,20}$/), value, { maxKeys: 5 }),
        fc.dictionary(fc.stringMatching(/^[a-z][a-z0-9]{0,10}$/), value, { maxKeys: 5 }),
        fc.option(fc.tuple(fc.boolean(), fc.nat(), fc.constantFrom("", " ", "=", '"', ":"))),
        fc.boolean(),
        (annotations, labels, plant, known) => {
          // Glued to other text, the key is found by value only when its plaintext is known.
          fc.pre(!(plant && plant[2] === "" && !known));
          const maps = { annotations: { ...annotations }, labels: { ...labels } };
          let planted: string | undefined;
          if (plant) {
            const [inLabels, n, sep] = plant;
            const which = inLabels ? "labels" : "annotations";
            const names = Object.keys(maps[which]);
            const at = names.length ? names[n % names.length]! : "planted";
            maps[which][at] = `${maps[which][at] ?? ""}${sep}${KEY}`;
            planted = `metadata.${which}[${at}]`;
          }
          const obj = key({ key: HASHED }, maps.annotations, maps.labels);
          const fields = exposureErrors(obj, known ? [KEY] : []).map((e) => e.field);
          assert.deepEqual(fields, planted === undefined ? [] : [planted]);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("finds a generated key joined to punctuation by its hash, but not one joined to more letters", () => {
    const found = [
      `https://ci:${KEY}@git.example.com/repo.git`,
      `https://ci.example.com/hook?token=${KEY}&run=1`,
      `the key is ${KEY}.`,
      `example.com/${KEY}`,
      `${KEY}-`,
      `-${KEY}_`,
    ];
    for (const text of found) {
      assert.equal(exposureErrors(key({ key: HASHED }, { note: text }), []).length, 1, text);
    }
    // A generateName made of the key: found by its hash, and then in the name made from it.
    const named = key({ key: HASHED });
    named.metadata = { name: `${KEY}-x7k2q`, generateName: `${KEY}-` };
    assert.deepEqual(
      exposureErrors(named, []).map((e) => e.field),
      ["metadata.name", "metadata.generateName"],
    );
    // The validating webhook refuses it too: it sees the object after every mutating webhook.
    const pasted = key({ key: HASHED }, { note: `the key is ${KEY}.` });
    assert.deepEqual(
      keyStorageErrors(
        request("UPDATE", pasted, { storage: "hashed", old: key({ key: HASHED }) }),
      ).map((e) => e.field),
      ["metadata.annotations[note]"],
    );
    // Joined to more key characters, a hash cannot tell it from a longer word.
    for (const text of [`${KEY}x`, `v2${KEY}`, `${KEY}--`, KEY.slice(1)]) {
      assert.deepEqual(exposureErrors(key({ key: HASHED }, { note: text }), []), [], text);
    }
  });

  it("never quotes a key it found by its hash: names and field paths hide it, in both webhooks", async () => {
    // Lower-case letters: nothing a credential pattern would catch; only the hash finds it.
    const lower = "correcthorsebatterystapleandmoreletters";
    const obj = key({ key: hashKey(lower) }, { [`example.com/${lower}`]: "x" }, { [lower]: "y" });
    obj.metadata = { generateName: `${lower}-`, ...obj.metadata, name: "" };
    const req = decodeAdmissionReview(review({ object: obj as Record<string, unknown>, name: "" }));
    const deps = {
      identity: resourceIdentity(),
      adminGroups: ["system:masters"],
      api,
      keyStorage: "hashed" as const,
    };
    const mutated = (await admitMutate(req, deps)).response;
    assert.equal(mutated.allowed, false);
    const text = JSON.stringify(mutated);
    assert.ok(!text.includes(lower), text);
    assert.deepEqual(
      mutated.status!.details!.causes!.map((c) => c.field),
      [
        "metadata.generateName",
        "metadata.name",
        "metadata.annotations[example.com/[REDACTED]]",
        "metadata.labels[[REDACTED]]",
        // The CREATE default of displayName is the name, key and all.
        "spec.displayName",
      ],
    );
    // The name generated from the generateName hides the key too.
    assert.match(
      mutated.status!.message,
      /^OwnedAccessKey\.management\.loft\.sh "\[REDACTED\]-[a-z0-9]{5}" is invalid/,
    );
    // The validating webhook refuses it too (it sees the object after every mutating webhook), and
    // hides the key in what it says: here the name, as a metadata rule quotes it.
    obj.metadata.name = `${lower}.ci`;
    const validated = (
      await admitValidate(
        decodeAdmissionReview(review({ object: obj as Record<string, unknown> })),
        deps,
      )
    ).response;
    assert.equal(validated.allowed, false);
    assert.equal(validated.status!.code, 422);
    assert.ok(!JSON.stringify(validated).includes(lower), JSON.stringify(validated));
    assert.ok(
      validated.status!.details!.causes!.some(
        (c) =>
          c.field === "metadata.labels[[REDACTED]]" &&
          /must not contain the access key/.test(c.message),
      ),
    );
  });

  it("hashed storage: the mutating webhook hashes both copies and refuses the key elsewhere", async () => {
    const withApplied = key({ key: KEY }, { [LAST_APPLIED]: applied({ key: KEY }) });
    const m = await mutateKey(request("CREATE", withApplied, { storage: "hashed" }), api);
    assert.equal(m.error, null);
    assert.ok(!JSON.stringify(m.object).includes(KEY));
    assert.equal(m.object?.spec?.key, HASHED);
    const exposed = key({ key: KEY }, { note: `the key: ${KEY}` });
    const refused = await mutateKey(request("CREATE", exposed, { storage: "hashed" }), api);
    assert.equal(refused.error?.code, 422);
    assert.match(
      refused.error!.message,
      /metadata\.annotations\[note\]: Forbidden: must not contain the access key/,
    );
    assert.ok(!refused.error!.message.includes(KEY));
    // UPDATE with the stored hash and the key pasted into a label: found by hash.
    const edit = key({ key: HASHED }, undefined, { k: KEY });
    const e = await mutateKey(
      request("UPDATE", edit, { storage: "hashed", old: key({ key: HASHED }) }),
      api,
    );
    assert.equal(e.error?.code, 422);
    // Plain storage keeps the key in spec.key by design; nothing is rewritten.
    const plain = await mutateKey(
      request("UPDATE", withApplied, { storage: "plain", old: withApplied }),
      api,
    );
    assert.equal(plain.object, withApplied);
  });
});

describe("keys stay secret: strength and the duplicate check", () => {
  const weak = "k".repeat(31);

  it("refuses a new key shorter than 32 characters, in either storage, without echoing it", async () => {
    for (const storage of ["plain", "hashed"] as const) {
      const m = await mutateKey(request("CREATE", key({ key: weak }), { storage }), api);
      // The mutating webhook leaves it for validation to refuse, unhashed and unstored.
      assert.equal(m.object?.spec?.key, weak);
      const [err] = texts(keyStorageErrors(request("CREATE", key({ key: weak }), { storage })));
      assert.equal(
        err,
        "spec.key: Invalid value: must be at least 32 characters (kubectl accesskey makes 43 from 256 random bits)",
      );
    }
    assert.deepEqual(keyStorageErrors(request("CREATE", key({ key: "k".repeat(32) }))), []);
  });

  it("keeps an existing short key working, and refuses rotating to one", () => {
    const legacy = key({ key: weak, displayName: "old" });
    const edited = key({ key: weak, displayName: "renamed" });
    assert.deepEqual(keyStorageErrors(request("UPDATE", edited, { old: legacy })), []);
    const storedHashed = key({ key: hashKey(weak) });
    assert.deepEqual(
      keyStorageErrors(
        request("UPDATE", key({ key: hashKey(weak) }), { storage: "hashed", old: storedHashed }),
      ),
      [],
    );
    const rotated = key({ key: "r".repeat(20) });
    assert.equal(keyStorageErrors(request("UPDATE", rotated, { old: legacy })).length, 1);
  });

  it("takes a key sent already hashed as it is: its length cannot be known", () => {
    assert.deepEqual(
      keyStorageErrors(request("CREATE", key({ key: hashKey("short") }), { storage: "hashed" })),
      [],
    );
  });

  it("fails closed (503) on a new key until the key index has synced; never without an API server", () => {
    const unsynced = duplicateCheckUnavailable(
      request("CREATE", key({ key: KEY }), { synced: false }),
    );
    assert.equal(unsynced?.code, 503);
    assert.equal(unsynced?.reason, "ServiceUnavailable");
    assert.match(
      unsynced!.message,
      /not loaded yet, so vgate cannot check that no other key has this key/,
    );
    assert.equal(
      duplicateCheckUnavailable(request("CREATE", key({ key: KEY }), { synced: true })),
      null,
    );
    // No index: no API server, nothing stored that a key could duplicate (--dev).
    assert.equal(duplicateCheckUnavailable(request("CREATE", key({ key: KEY }))), null);
    // An unchanged key, or no key at all, needs no check.
    const stored = key({ key: KEY });
    assert.equal(
      duplicateCheckUnavailable(request("UPDATE", stored, { old: stored, synced: false })),
      null,
    );
    assert.equal(duplicateCheckUnavailable(request("CREATE", key({}), { synced: false })), null);
  });
});
