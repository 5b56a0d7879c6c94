import assert from "node:assert/strict";
import { describe, it } from "mocha";
import { fieldErrorText, OMIT_VALUE } from "../../../webhook/src/shared/field-errors.js";
import {
  checkBoolean,
  checkFields,
  checkObject,
  checkObjectList,
  checkString,
  checkStringList,
  checkStringMap,
  isSet,
  own,
} from "../../../webhook/src/accesskeys/json-fields.js";
import { ownPath } from "../../../webhook/src/shared/own-path.js";

const texts = (errors: { field: string }[]): string[] =>
  errors.map((e) => fieldErrorText(e as Parameters<typeof fieldErrorText>[0]));

describe("json-fields", () => {
  describe("own / ownPath", () => {
    it("reads own properties", () => {
      assert.equal(own({ a: 1 }, "a"), 1);
      assert.equal(ownPath({ a: { b: "x" } }, ["a", "b"]), "x");
    });
    it("never reads prototype members", () => {
      assert.equal(own({}, "constructor"), undefined);
      assert.equal(own({}, "__proto__"), undefined);
      assert.equal(ownPath({ a: {} }, ["a", "toString"]), undefined);
    });
    it("reads an own __proto__ key created by JSON.parse as plain data", () => {
      const obj = JSON.parse('{"__proto__": {"polluted": true}}') as Record<string, unknown>;
      assert.deepEqual(own(obj, "__proto__"), { polluted: true });
      assert.equal(({} as Record<string, unknown>)["polluted"], undefined);
    });
    it("stops at non-objects and arrays", () => {
      assert.equal(ownPath("str", ["length"]), undefined);
      assert.equal(ownPath({ a: [1] }, ["a", "0"]), undefined);
      assert.equal(ownPath(null, ["a"]), undefined);
    });
  });

  describe("isSet", () => {
    it("treats omitempty zero values as unset", () => {
      for (const v of [undefined, null, "", false, 0, []]) assert.equal(isSet(v), false, String(v));
    });
    it("treats anything else as set", () => {
      for (const v of ["x", true, 1, ["a"], {}]) assert.equal(isSet(v), true, JSON.stringify(v));
    });
  });

  describe("checks", () => {
    it("accepts absent and null values", () => {
      for (const v of [undefined, null]) {
        assert.deepEqual(checkString(v, "f"), []);
        assert.deepEqual(checkBoolean(v, "f"), []);
        assert.deepEqual(checkStringList(v, "f"), []);
        assert.deepEqual(
          checkObjectList(v, "f", () => assert.fail("not called")),
          [],
        );
        assert.deepEqual(checkStringMap(v, "f"), []);
      }
    });
    it("rejects a wrong type with kube's wording", () => {
      assert.deepEqual(texts(checkString(5, "a.b")), [
        "a.b: Invalid value: 5: must be of type string",
      ]);
      assert.deepEqual(texts(checkBoolean("true", "a")), [
        'a: Invalid value: "true": must be of type boolean',
      ]);
      assert.deepEqual(texts(checkStringList("x", "a")), [
        'a: Invalid value: "x": must be of type array',
      ]);
      assert.deepEqual(texts(checkStringList(["ok", 1, null], "a")), [
        "a[1]: Invalid value: 1: must be of type string",
        "a[2]: Invalid value: null: must be of type string",
      ]);
      assert.deepEqual(texts(checkStringMap({ k: "v", n: 2 }, "m")), [
        "m[n]: Invalid value: 2: must be of type string",
      ]);
      assert.deepEqual(texts(checkStringMap(["v"], "m")), [
        'm: Invalid value: ["v"]: must be of type object',
      ]);
    });
    it("hides a secret value", () => {
      const [error] = checkString(123456, "spec.key", true);
      assert.equal(error?.badValue, OMIT_VALUE);
      assert.equal(fieldErrorText(error!), "spec.key: Invalid value: must be of type string");
      const [objError] = checkObject("s3cr3t", "spec", () => [], true);
      assert.equal(objError?.badValue, OMIT_VALUE);
    });
    it("runs each item check with its path", () => {
      const seen: string[] = [];
      checkObjectList([{}, {}], "l", (_o, p) => (seen.push(p), []));
      assert.deepEqual(seen, ["l[0]", "l[1]"]);
      assert.deepEqual(texts(checkObjectList([{}, "x"], "l", () => [])), [
        'l[1]: Invalid value: "x": must be of type object',
      ]);
    });
    it("checkFields checks only own fields and ignores unknown ones", () => {
      const obj = JSON.parse('{"a": 1, "zzz": 2, "__proto__": 3}') as Record<string, unknown>;
      const errors = checkFields(obj, "spec", { a: checkString, constructor: checkString });
      assert.deepEqual(texts(errors), ["spec.a: Invalid value: 1: must be of type string"]);
    });
  });
});
