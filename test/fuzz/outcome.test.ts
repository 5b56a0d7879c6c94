// The fuzzer's judge and JSON tree without a server: what counts as a failure must be caught.

import assert from "node:assert/strict";
import { fromJson, Obj, Raw, toText } from "./json-tree.js";
import { applyMutation, type FuzzInput } from "./mutations.js";
import { judge } from "./outcome.js";
import type { Answer } from "../soak/timed-client.js";

const body = {
  apiVersion: "admission.k8s.io/v1",
  kind: "AdmissionReview",
  request: { uid: "u-1" },
};
const input = (route: FuzzInput["route"] = "/validate/ownedaccesskeys"): FuzzInput => ({
  from: "test",
  route,
  method: "POST",
  contentType: "application/json",
  body: Buffer.from(JSON.stringify(body)),
  mutations: [],
});
const answer = (status: number, value: unknown): Answer => ({
  status,
  contentType: "application/json",
  text: typeof value === "string" ? value : JSON.stringify(value),
  ms: 1,
});
const status = (code: number) => ({
  kind: "Status",
  apiVersion: "v1",
  status: "Failure",
  code,
  message: "m",
});

describe("fuzz judge", () => {
  it("accepts a review of the route's kind echoing the uid, and a 4xx metav1.Status", () => {
    const ok = { kind: "AdmissionReview", response: { uid: "u-1", allowed: false } };
    assert.deepEqual(judge(input(), answer(200, ok)), { outcome: "200 AdmissionReview" });
    assert.deepEqual(judge(input(), answer(400, status(400))), { outcome: "400 Status" });
    const tr = { kind: "TokenReview", status: { authenticated: false } };
    assert.equal(judge(input("/authenticate"), answer(200, tr)).problem, undefined);
  });

  it("flags 5xx, a wrong uid or kind, a 4xx that is no Status, non-JSON and hangs", () => {
    const problems = [
      judge(input(), answer(500, status(500))),
      judge(input(), answer(503, status(503))),
      judge(
        input(),
        answer(200, { kind: "AdmissionReview", response: { uid: "u-2", allowed: true } }),
      ),
      judge(input(), answer(200, { kind: "TokenReview", status: { authenticated: false } })),
      judge(
        input(),
        answer(200, {
          kind: "AdmissionReview",
          response: { uid: "u-1", allowed: false, status: { code: 500 } },
        }),
      ),
      judge(
        input(),
        answer(400, {
          kind: "Status",
          code: 404,
          apiVersion: "v1",
          status: "Failure",
          message: "",
        }),
      ),
      judge(input(), answer(400, "Bad Request")),
      judge(input(), { ...answer(0, ""), error: "TIMEOUT" }),
      judge(input(), { ...answer(0, ""), error: "ECONNRESET" }),
    ];
    for (const p of problems) assert.ok(p.problem, JSON.stringify(p));
  });
});

describe("fuzz JSON tree", () => {
  it("prints duplicate keys, __proto__ and raw numbers that JSON.stringify cannot", () => {
    const tree = fromJson({ a: [1, "x"] }) as Obj;
    tree.entries.push(["a", new Raw("1e400")], ["__proto__", new Obj([["polluted", true]])]);
    assert.equal(toText(tree), '{"a":[1,"x"],"a":1e400,"__proto__":{"polluted":true}}');
  });

  it("mutates a copy of generated values, never the values themselves", () => {
    const value = new Obj([]);
    const root = fromJson({ a: { b: 1 } });
    const { root: out, what } = applyMutation(root, { kind: "retype", pick: 1, value });
    assert.equal(what, "retype at 0");
    assert.equal(toText(out), '{"a":{}}');
    applyMutation(out, { kind: "__proto__", pick: 1, value: "__proto__" });
    assert.equal(value.entries.length, 0);
  });
});
