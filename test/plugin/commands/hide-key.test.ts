// A key the plugin generated never reaches an error message built from a server answer.

import assert from "node:assert/strict";
import { errorLine, KubeError } from "../../../plugin/src/cli/errors.js";
import { hideKey } from "../../../plugin/src/keys/hide-key.js";

describe("hideKey", () => {
  it("removes the key from the printed Status message", () => {
    const key = "k3y-k3y-k3y-k3y-k3y-k3y-k3y-k3y-k3y-k3y-abc";
    const err = new KubeError(422, "Invalid", `spec.key: "${key}" is bad`);
    const line = errorLine(hideKey(err, key));
    assert.equal(line, 'Error from server (Invalid): spec.key: "<redacted>" is bad');
  });

  it("leaves other errors as they are", () => {
    const err = new Error("nothing secret");
    assert.equal(hideKey(err, "abcdefgh"), err);
    assert.equal(err.message, "nothing secret");
  });
});
