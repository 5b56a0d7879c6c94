// The validating webhook and the key lifecycle's deletions (--expired-key-retention): vgate's own
// user may delete a key whose retention is over, and nothing else that only owners and admins may
// delete; everyone else is judged as before. Real AdmissionReview JSON, as kube-apiserver sends a
// DELETE.

import assert from "node:assert/strict";
import { admitValidate, type AccessKeyAdmission } from "../../../webhook/src/accesskeys/admit.js";
import { decodeAdmissionReview } from "../../../webhook/src/admission/review.js";
import type { KubeApi } from "../../../webhook/src/kube/ports.js";
import { resourceIdentity } from "../../../webhook/src/shared/ownedaccesskey.js";
import { accessKey, review } from "../../support/reviews.js";

const VGATE = "system:serviceaccount:vgate-system:vgate";
const HOUR = 3_600_000;
const CREATED = Date.parse("2026-11-01T00:00:00Z");

const api: KubeApi = {
  getAccessKey: async () => null,
  resourceFor: async () => null,
  subjectAccessReview: async () => ({ allowed: false }),
  ready: async () => true,
};

function deps(now: number, username: string | null = VGATE): AccessKeyAdmission {
  return {
    identity: resourceIdentity(),
    adminGroups: ["system:masters"],
    api,
    expiredCleanup: {
      username: () => username ?? undefined,
      retentionMs: 24 * HOUR,
      now: () => now,
    },
  };
}

/** A DELETE by `username` of alice's key with a one-hour TTL. */
async function deleteBy(
  username: string,
  d: AccessKeyAdmission,
  spec: Record<string, unknown> = { ttl: 3600 },
) {
  const stored = accessKey("ci-key", spec, {
    creationTimestamp: new Date(CREATED).toISOString().replace(/\.\d+Z$/, "Z"),
    uid: "6b1f9a52-0000-4000-8000-000000000001",
  });
  const req = review({ operation: "DELETE", object: null, oldObject: stored, username });
  return (await admitValidate(decodeAdmissionReview(req), d)).response;
}

describe("deleting keys past --expired-key-retention", () => {
  const over = CREATED + HOUR + 24 * HOUR;

  it("vgate's own user deletes a key whose retention is over", async () => {
    assert.equal((await deleteBy(VGATE, deps(over))).allowed, true);
  });

  it("is refused to vgate before the retention is over, or for a key that never expires", async () => {
    assert.equal((await deleteBy(VGATE, deps(over - 1))).allowed, false);
    assert.equal((await deleteBy(VGATE, deps(over), { ttl: 0 })).allowed, false);
  });

  it("is refused to another user, and to vgate when it does not know who it is", async () => {
    const other = await deleteBy("system:serviceaccount:team:bot", deps(over));
    assert.equal(other.allowed, false);
    assert.equal(other.status?.code, 403);
    assert.equal((await deleteBy(VGATE, deps(over, null))).allowed, false);
  });

  it("is refused to vgate without --expired-key-retention", async () => {
    const d = { ...deps(over), expiredCleanup: undefined };
    assert.equal((await deleteBy(VGATE, d)).allowed, false);
  });

  it("still lets the owner delete their key at any time", async () => {
    assert.equal((await deleteBy("alice", deps(CREATED))).allowed, true);
  });
});
