import assert from "node:assert/strict";
import { KubeError } from "../../../webhook/src/api/status.js";
import { decodeAdmissionReview } from "../../../webhook/src/admission/review.js";
import { sharedFixture } from "../../support/fixtures.js";
import { review } from "../../support/reviews.js";

type Json = Record<string, unknown>;

function badRequest(body: unknown, pattern: RegExp): void {
  assert.throws(
    () => decodeAdmissionReview(body),
    (err: unknown) => err instanceof KubeError && err.code === 400 && pattern.test(err.message),
  );
}

describe("decodeAdmissionReview", () => {
  it("decodes every field of the wire fixture", () => {
    const fixture = sharedFixture<Json>("admission.k8s.io.v1.AdmissionReview.json");
    const req = fixture.request as Json;
    req.operation = "UPDATE"; // the fixture holds a placeholder
    const decoded = decodeAdmissionReview(fixture);
    assert.equal(decoded.uid, "uidValue");
    assert.deepEqual(decoded.kind, {
      group: "groupValue",
      version: "versionValue",
      kind: "kindValue",
    });
    assert.equal(decoded.resource.resource, "resourceValue");
    assert.equal(decoded.subResource, "subResourceValue");
    assert.equal(decoded.name, "nameValue");
    assert.equal(decoded.namespace, "namespaceValue");
    assert.deepEqual(decoded.userInfo.groups, ["groupsValue"]);
    assert.deepEqual(decoded.userInfo.extra?.extraKey, ["extraValue"]);
    assert.equal(decoded.dryRun, true);
    assert.equal((decoded.object as Json).kind, "CustomType");
  });

  it("rejects the v1beta1 AdmissionReview with a message naming v1", () => {
    badRequest(
      sharedFixture("admission.k8s.io.v1beta1.AdmissionReview.json"),
      /admission\.k8s\.io\/v1/,
    );
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
