// Warning headers (RFC 7234 as the API server sends them) to the texts kubectl prints.

import assert from "node:assert/strict";
import { warnings } from "../../../plugin/src/kube/api.js";

describe("Warning headers", () => {
  it("reads each 299 warning's text, unescaping quotes, from one or joined headers", () => {
    assert.deepEqual(warnings(undefined), []);
    assert.deepEqual(warnings('299 - "spec.allowLoftCli is deprecated"'), [
      "spec.allowLoftCli is deprecated",
    ]);
    assert.deepEqual(warnings(['299 - "a, b"', '299 - "say \\"hi\\""']), ["a, b", 'say "hi"']);
    assert.deepEqual(warnings('299 - "one", 299 - "two"'), ["one", "two"]);
  });
});
