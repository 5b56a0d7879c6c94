import assert from "node:assert/strict";
import {
  resourceIdentity,
  type OwnedAccessKey,
} from "../../../webhook/src/shared/ownedaccesskey.js";
import { mutateKey } from "../../../webhook/src/accesskeys/mutate.js";
import type { KeyRequest } from "../../../webhook/src/accesskeys/request.js";
import type { KubeApi } from "../../../webhook/src/kube/ports.js";

/** A KubeApi whose store is a set of names; records every lookup. */
function storeApi(exists: (name: string) => boolean): KubeApi & { lookups: string[] } {
  const lookups: string[] = [];
  return {
    lookups,
    getAccessKey: async (name) => {
      lookups.push(name);
      return exists(name) ? { metadata: { name } } : null;
    },
    resourceFor: async () => null,
    subjectAccessReview: async () => ({ allowed: false }),
    ready: async () => true,
  };
}

function create(object: OwnedAccessKey): KeyRequest {
  return {
    operation: "CREATE",
    object,
    oldObject: null,
    name: object.metadata?.name ?? "",
    userInfo: { username: "alice", groups: [] },
    isAdmin: false,
    adminGroups: ["system:masters"],
    identity: resourceIdentity(),
    dryRun: false,
  };
}

describe("mutateKey", () => {
  it("answers 409 AlreadyExists with retryAfterSeconds 1 after 8 colliding generated names", async () => {
    const api = storeApi(() => true);
    const m = await mutateKey(create({ metadata: { generateName: "ci-" }, spec: {} }), api);
    assert.equal(api.lookups.length, 8);
    assert.equal(new Set(api.lookups).size > 1, true, "each try is a new candidate");
    const status = m.error!.toStatus();
    assert.equal(status.code, 409);
    assert.equal(status.reason, "AlreadyExists");
    assert.equal(status.details?.retryAfterSeconds, 1);
    assert.equal(status.details?.kind, "ownedaccesskeys");
    assert.equal(
      status.message,
      `ownedaccesskeys.management.loft.sh "${api.lookups.at(-1)}" already exists, the server was not able to generate a unique name for the object`,
    );
  });

  it("takes the first free generated name and defaults displayName to it", async () => {
    let calls = 0;
    const api = storeApi(() => ++calls < 3);
    const m = await mutateKey(create({ metadata: { generateName: "ci-" }, spec: {} }), api);
    assert.equal(m.error, null);
    assert.equal(m.object?.metadata?.name, api.lookups[2]);
    assert.equal(m.object?.spec?.displayName, api.lookups[2]);
  });

  it("reports a terminating object with kube's prefix", async () => {
    const api: KubeApi = {
      ...storeApi(() => true),
      getAccessKey: async (name) => ({
        metadata: { name, deletionTimestamp: "2026-01-01T00:00:00Z" },
      }),
    };
    const m = await mutateKey(create({ metadata: { name: "gone" }, spec: {} }), api);
    assert.equal(
      m.error?.message,
      'object is being deleted: ownedaccesskeys.management.loft.sh "gone" already exists',
    );
  });

  it("does not touch the request's object", async () => {
    const obj: OwnedAccessKey = { metadata: { name: "k" }, spec: {} };
    const copy = structuredClone(obj);
    const m = await mutateKey(
      create(obj),
      storeApi(() => false),
    );
    assert.deepEqual(obj, copy);
    assert.equal(m.object?.spec?.user, "alice");
  });

  it("leaves malformed metadata for the validating webhook", async () => {
    const api = storeApi(() => false);
    const m = await mutateKey(create({ metadata: [] as never }), api);
    assert.equal(m.error, null);
    assert.equal(api.lookups.length, 0);
  });
});
