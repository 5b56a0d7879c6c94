// A key the plugin generated, or the hash it sent instead, never reaches an error message built
// from a server answer: main.ts prints every error line through the context's redaction.

import assert from "node:assert/strict";
import { hashKey } from "../../../webhook/src/shared/key-hash.js";
import { CommandContext } from "../../../plugin/src/cli/command.js";
import { errorLine, KubeError } from "../../../plugin/src/cli/errors.js";
import { keyForms } from "../../../plugin/src/output/mask.js";

const io = { out: () => undefined, err: () => undefined, readStdin: async () => "" };

describe("redaction of generated keys", () => {
  it("removes the key, its sha256:<hex> and its hex from the printed Status message", async () => {
    const key = "k3y-k3y-k3y-k3y-k3y-k3y-k3y-k3y-k3y-k3y-abc";
    const ctx = new CommandContext("create", [], {}, io, {});
    ctx.addGeneratedKey(key, keyForms(key));
    for (const sent of [key, hashKey(key), hashKey(key).slice("sha256:".length)]) {
      const err = new KubeError(422, "Invalid", `spec.key: "${sent}" is bad`);
      assert.equal(
        await ctx.redact(errorLine(err)),
        'Error from server (Invalid): spec.key: "<redacted>" is bad',
      );
    }
  });

  it("leaves other errors as they are", async () => {
    const ctx = new CommandContext("create", [], {}, io, {});
    ctx.addGeneratedKey("abcdefgh", keyForms("abcdefgh"));
    assert.equal(await ctx.redact("error: nothing secret"), "error: nothing secret");
  });
});
