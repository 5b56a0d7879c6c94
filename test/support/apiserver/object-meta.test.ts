// ObjectMeta rules kube-apiserver enforces on every type, custom resources included, before any
// validating webhook: owner references and finalizer names.

import assert from "node:assert/strict";
import { startApiServer, type TestApiServer } from "./index.js";
import { call } from "./test-client.js";

const KEYS = "/apis/management.loft.sh/v1/ownedaccesskeys";
const ref = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: "storage.loft.sh/v1",
  kind: "User",
  name,
  uid: `uid-${name}`,
  ...extra,
});

describe("apiserver ObjectMeta validation (owner references, finalizers)", () => {
  let server: TestApiServer;
  let n = 0;
  const create = (metadata: Record<string, unknown>) =>
    call(server, "POST", KEYS, {
      body: {
        apiVersion: "management.loft.sh/v1",
        kind: "OwnedAccessKey",
        metadata: { name: `meta-${++n}`, ...metadata },
        spec: { user: "alice" },
      },
    });
  before(async () => {
    // The real CRD and no webhooks: what kube itself answers.
    server = await startApiServer({ crds: "manifests" });
  });
  after(() => server.close());

  it("accepts one controller reference and qualified finalizers", async () => {
    const res = await create({
      ownerReferences: [ref("alice", { controller: true }), ref("bob")],
      finalizers: ["example.com/cleanup", "orphan"],
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
  });

  it("refuses a second controller with kube's message", async () => {
    const res = await create({
      ownerReferences: [ref("alice", { controller: true }), ref("bob", { controller: true })],
    });
    assert.equal(res.status, 422);
    assert.match(
      String(res.body["message"]),
      /^OwnedAccessKey\.management\.loft\.sh "meta-\d+" is invalid: metadata\.ownerReferences: Invalid value: .*: Only one reference can have Controller set to true\. Found "true" in references for User\/alice and User\/bob$/,
    );
  });

  it("refuses references without a version, kind, name or uid, on the list's path", async () => {
    const res = await create({ ownerReferences: [{ apiVersion: "storage.loft.sh/", kind: "" }] });
    assert.equal(res.status, 422);
    const causes = (res.body["details"] as { causes: { field: string; message: string }[] }).causes;
    assert.deepEqual(
      causes.map((c) => c.field),
      [
        "metadata.ownerReferences.apiVersion",
        "metadata.ownerReferences.kind",
        "metadata.ownerReferences.name",
        "metadata.ownerReferences.uid",
      ],
    );
    assert.match(causes[0]!.message, /version must not be empty/);
  });

  it("refuses finalizers that are not qualified names, and orphan with foregroundDeletion", async () => {
    const bad = await create({ finalizers: ["Bad Finalizer!"] });
    assert.equal(bad.status, 422);
    assert.match(
      String(bad.body["message"]),
      /metadata\.finalizers: Invalid value: "Bad Finalizer!": name part must consist of alphanumeric characters/,
    );
    const slashes = await create({ finalizers: ["a/b/c"] });
    assert.match(
      String(slashes.body["message"]),
      /Invalid value: "a\/b\/c": a qualified name must consist of alphanumeric characters/,
    );
    const both = await create({ finalizers: ["orphan", "foregroundDeletion"] });
    assert.equal(both.status, 422);
    assert.match(
      String(both.body["message"]),
      /finalizer orphan and foregroundDeletion cannot be both set/,
    );
  });

  it("applies the same rules on update", async () => {
    const created = await create({});
    const obj = created.body as { metadata: Record<string, unknown> };
    obj.metadata["ownerReferences"] = [
      ref("a", { controller: true }),
      ref("b", { controller: true }),
    ];
    const res = await call(server, "PUT", `${KEYS}/${String(obj.metadata["name"])}`, { body: obj });
    assert.equal(res.status, 422);
    assert.match(String(res.body["message"]), /Only one reference can have Controller set to true/);
  });
});
