import assert from "node:assert/strict";
import { KubeError } from "../../../webhook/src/shared/status.js";
import { decodeAdmissionReview } from "../../../webhook/src/admission/review.js";
import { fixture } from "../../support/fixtures.js";
import { review } from "../../support/reviews.js";

type Json = Record<string, unknown>;

function badRequest(body: unknown, pattern: RegExp): void {
  assert.throws(
    () => decodeAdmissionReview(body),
    (err: unknown) => err instanceof KubeError && err.code === 400 && pattern.test(err.message),
  );
}

describe("decodeAdmissionReview", () => {
  it("decodes every field of the wire fixture, as kube-apiserver sends it", () => {
    const wire = fixture<Json>("admission.k8s.io.v1.AdmissionReview.json");
    const decoded = decodeAdmissionReview(wire);
    assert.equal(decoded.uid, "3b1f6c2e-8d4a-4f7e-9a51-0c6d2e9b7f14");
    assert.deepEqual(decoded.kind, {
      group: "management.loft.sh",
      version: "v1",
      kind: "OwnedAccessKey",
    });
    assert.deepEqual(decoded.resource, {
      group: "management.loft.sh",
      version: "v1",
      resource: "ownedaccesskeys",
    });
    // Left out on the wire (empty, cluster-scoped): decoded as "".
    assert.equal(decoded.subResource, "");
    assert.equal(decoded.namespace, "");
    assert.equal(decoded.name, "release-bot");
    assert.equal(decoded.operation, "CREATE");
    assert.equal(decoded.userInfo.username, "system:serviceaccount:ci:release-bot");
    assert.equal(decoded.userInfo.uid, "9e0d4b7a-5c21-4d8f-b3e6-71a2f0c4d958");
    assert.deepEqual(decoded.userInfo.groups, [
      "system:serviceaccounts",
      "system:serviceaccounts:ci",
      "system:authenticated",
    ]);
    assert.deepEqual(decoded.userInfo.extra?.["authentication.kubernetes.io/pod-name"], [
      "release-pipeline-7d9c5-x2k8p",
    ]);
    assert.equal(Object.keys(decoded.userInfo.extra ?? {}).length, 5);
    assert.equal(decoded.dryRun, false);
    assert.equal(decoded.oldObject, null);
    const object = decoded.object as Json;
    assert.equal(object.kind, "OwnedAccessKey");
    assert.equal((object.metadata as Json).name, "release-bot");
    assert.equal((object.spec as Json).ttl, 2592000);
  });

  it("decodes a CREATE that comes without name (generateName), as kube sends it", () => {
    const wire = fixture<Json>("admission.k8s.io.v1.AdmissionReview.json");
    delete (wire.request as Json).name;
    assert.equal(decodeAdmissionReview(wire).name, "");
  });

  it("rejects the v1beta1 AdmissionReview with a message naming v1", () => {
    badRequest(fixture("admission.k8s.io.v1beta1.AdmissionReview.json"), /admission\.k8s\.io\/v1/);
  });

  it("review() builds on the wire fixture: kube's field order, empty strings left out", () => {
    const wire = fixture<{ request: Json }>("admission.k8s.io.v1.AdmissionReview.json");
    assert.deepEqual(Object.keys(review({}).request as Json), Object.keys(wire.request));
    const generated = review({ object: { metadata: { generateName: "ci-" } } });
    assert.equal("name" in (generated.request as Json), false);
  });

  it("rejects non-objects", () => {
    for (const body of [null, 1, "x", [], true])
      badRequest(body, /expected an AdmissionReview object/);
  });

  it("rejects other kinds", () => {
    badRequest(
      { apiVersion: "admission.k8s.io/v1", kind: "TokenReview" },
      /expected kind AdmissionReview/,
    );
  });

  it("requires request, uid and a known operation", () => {
    badRequest(
      { apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview" },
      /request is required/,
    );
    const r = review({});
    (r.request as Json).uid = "";
    badRequest(r, /uid must not be empty/);
    const r2 = review({});
    (r2.request as Json).operation = "PATCH";
    badRequest(r2, /operation "PATCH" is not one of/);
  });

  const wrongTypes: [string, unknown, RegExp][] = [
    ["uid", 7, /request\.uid must be a string, got number/],
    ["name", {}, /request\.name must be a string, got object/],
    ["namespace", [], /request\.namespace must be a string, got array/],
    ["operation", false, /request\.operation must be a string/],
    ["kind", "OwnedAccessKey", /request\.kind must be an object/],
    ["resource", 1, /request\.resource must be an object/],
    ["userInfo", "alice", /request\.userInfo must be an object/],
    ["object", "x", /request\.object must be an object/],
    ["object", [], /request\.object must be an object, got array/],
    ["oldObject", 5, /request\.oldObject must be an object/],
    ["dryRun", "yes", /dryRun must be a boolean/],
    ["subResource", 3, /request\.subResource must be a string/],
  ];
  for (const [field, value, pattern] of wrongTypes) {
    it(`rejects request.${field} = ${JSON.stringify(value)}`, () => {
      const r = review({});
      (r.request as Json)[field] = value;
      badRequest(r, pattern);
    });
  }

  it("rejects wrong types inside userInfo, kind and resource", () => {
    const cases: [(req: Json) => void, RegExp][] = [
      [(q) => ((q.userInfo as Json).username = 1), /userInfo\.username must be a string/],
      [
        (q) => ((q.userInfo as Json).groups = "admins"),
        /userInfo\.groups must be a list of strings/,
      ],
      [(q) => ((q.userInfo as Json).groups = [1]), /userInfo\.groups must be a list of strings/],
      [(q) => ((q.userInfo as Json).extra = { a: "b" }), /extra\["a"\] must be a list of strings/],
      [(q) => ((q.kind as Json).kind = null), /request\.kind\.kind is required/],
      [(q) => ((q.resource as Json).resource = 2), /request\.resource\.resource must be a string/],
    ];
    for (const [mutate, pattern] of cases) {
      const r = review({});
      mutate(r.request as Json);
      badRequest(r, pattern);
    }
  });

  it("keeps __proto__ keys as plain data without touching prototypes", () => {
    const text = JSON.stringify(review({})).replace(
      '"extra":{}',
      '"extra":{"__proto__":["polluted"]}',
    );
    const decoded = decodeAdmissionReview(JSON.parse(text));
    assert.deepEqual(Object.getOwnPropertyDescriptor(decoded.userInfo.extra, "__proto__")?.value, [
      "polluted",
    ]);
    assert.equal(({} as Json).polluted, undefined);
    assert.equal(Object.prototype.hasOwnProperty.call(Object.prototype, "0"), false);
  });
});
