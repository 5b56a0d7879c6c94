// How spec.key is stored: hashed storage turns a client's key into sha256:<hex> on CREATE and on
// UPDATE (a rotation), refuses a key it would have to make up, and no two keys may share a key.

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import {
  resourceIdentity,
  type OwnedAccessKey,
} from "../../../webhook/src/shared/ownedaccesskey.js";
import { fieldErrorText } from "../../../webhook/src/shared/field-errors.js";
import { hashKey } from "../../../webhook/src/shared/key-hash.js";
import { hashStoredKey, keyStorageErrors } from "../../../webhook/src/accesskeys/key-storage.js";
import { mutateKey } from "../../../webhook/src/accesskeys/mutate.js";
import type { KeyRequest, KeyStorage } from "../../../webhook/src/accesskeys/request.js";
import type { KubeApi } from "../../../webhook/src/kube/ports.js";

const KEY = "Zp3xO9f0kJ2vHq7Wm1LrT8sYcB4nE6uA5dG0iK2oQ1w";
const HASHED = `sha256:${createHash("sha256").update(KEY).digest("hex")}`;

const api: KubeApi = {
  getAccessKey: async () => null,
  resourceFor: async () => null,
  subjectAccessReview: async () => ({ allowed: false }),
  ready: async () => true,
};

function key(spec: Record<string, unknown>, name = "ci"): OwnedAccessKey {
  return { metadata: { name }, spec };
}

function request(
  operation: "CREATE" | "UPDATE",
  object: OwnedAccessKey,
  opts: {
    storage?: KeyStorage;
    old?: OwnedAccessKey;
    sameKey?: (stored: string) => string[];
  } = {},
): KeyRequest {
  return {
    operation,
    object,
    oldObject: opts.old ?? null,
    name: object.metadata?.name ?? "",
    userInfo: { username: "alice", groups: [] },
    isAdmin: false,
    adminGroups: ["system:masters"],
    identity: resourceIdentity(),
    dryRun: false,
    keyStorage: opts.storage,
    keyIndex: opts.sameKey ? { synced: () => true, namesWithSameKey: opts.sameKey } : undefined,
  };
}

const texts = (req: KeyRequest): string[] => keyStorageErrors(req).map(fieldErrorText);

describe("key storage", () => {
  it("hashes a plain key as SHA-256 of its UTF-8 bytes, and leaves a stored hash alone", () => {
    assert.equal(hashKey(KEY), HASHED);
    const hashed = hashStoredKey(key({ key: KEY, user: "alice" }));
    assert.deepEqual(hashed.spec, { key: HASHED, user: "alice" });
    const again = key({ key: HASHED });
    assert.equal(hashStoredKey(again), again);
    assert.equal(hashStoredKey(key({})).spec?.key, undefined);
  });

  it("hashed storage: CREATE stores only the hash, and never makes up a key", async () => {
    const m = await mutateKey(request("CREATE", key({ key: KEY }), { storage: "hashed" }), api);
    assert.equal(m.object?.spec?.key, HASHED);
    const none = await mutateKey(request("CREATE", key({}), { storage: "hashed" }), api);
    assert.equal(none.object?.spec?.key, undefined, "a made-up key could never be given back");
    const plain = await mutateKey(request("CREATE", key({}), { storage: "plain" }), api);
    assert.match(String(plain.object?.spec?.key), /^[A-Za-z0-9_-]{43}$/);
  });

  it("hashed storage: a rotated key is hashed on UPDATE; plain storage leaves UPDATE alone", async () => {
    const old = key({ key: HASHED });
    const rotated = key({ key: "new-key-0123456789abcdefghijklmnopqrstuvwxyz" });
    const m = await mutateKey(request("UPDATE", rotated, { storage: "hashed", old }), api);
    assert.equal(m.object?.spec?.key, hashKey("new-key-0123456789abcdefghijklmnopqrstuvwxyz"));
    const p = await mutateKey(request("UPDATE", rotated, { storage: "plain", old }), api);
    assert.equal(p.object, rotated);
  });

  it("hashed storage refuses a missing key and a key that reached validation unhashed", () => {
    const [missing] = texts(request("CREATE", key({}), { storage: "hashed" }));
    assert.match(missing!, /^spec\.key: Required value: vgate stores keys hashed/);
    const [unhashed] = texts(request("CREATE", key({ key: KEY }), { storage: "hashed" }));
    assert.match(unhashed!, /^spec\.key: Invalid value: must be stored as sha256:<hex>/);
    assert.ok(!unhashed!.includes(KEY), "the key is never echoed");
    assert.deepEqual(texts(request("CREATE", key({ key: HASHED }), { storage: "hashed" })), []);
  });

  it("refuses keys that can never be sent as a bearer token, without echoing them", () => {
    for (const bad of ["with space", "ключ", "tab\there", "x".repeat(8193)]) {
      const [error] = texts(request("CREATE", key({ key: bad })));
      assert.match(error!, /^spec\.key: Invalid value: must be 1 to 8192 printable ASCII/, bad);
      assert.ok(!error!.includes(bad.slice(0, 20)), "not echoed");
      // Hashed storage does not hash them away either.
      assert.equal(hashStoredKey(key({ key: bad })).spec?.key, bad);
    }
    assert.deepEqual(texts(request("CREATE", key({ key: "x".repeat(8192) }))), []);
  });

  it("refuses a key another object already has, plain or hashed, but not the object's own", () => {
    const holders = new Map([[HASHED, ["other"]]]);
    const sameKey = (stored: string) =>
      holders.get(stored.startsWith("sha256:") ? stored : hashKey(stored)) ?? [];
    for (const value of [KEY, HASHED]) {
      const [dup] = texts(request("CREATE", key({ key: value }), { sameKey }));
      assert.equal(dup, "spec.key: Invalid value: another access key already has this key");
    }
    // The holder itself, updated with its key unchanged, is fine.
    const own = key({ key: HASHED }, "other");
    assert.deepEqual(texts(request("UPDATE", own, { old: own, sameKey })), []);
    // An unchanged key passes even if someone else holds it (only new keys are checked).
    const mine = key({ key: KEY }, "mine");
    assert.deepEqual(texts(request("UPDATE", mine, { old: key({ key: HASHED }), sameKey })), []);
    assert.deepEqual(
      texts(request("CREATE", key({ key: "fresh-key-abcdefghijklmnopqrstuvwxyz" }), { sameKey })),
      [],
    );
  });
});
