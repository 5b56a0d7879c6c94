// `vgate serve --discover-vclusters`: which flags go with it (cli/serve-options.ts).

import assert from "node:assert/strict";
import { parseServeArgs } from "../../../webhook/src/cli/serve-options.js";

const BASE = ["--dev", "--discover-vclusters"];

function usage(args: string[], message: RegExp): void {
  assert.throws(
    () => parseServeArgs(args),
    (err: Error & { exitCode?: number }) => {
      assert.match(err.message, message);
      return true;
    },
  );
}

describe("vgate serve --discover-vclusters flags", () => {
  it("takes the patch flags, and no --config nor a single vCluster's flags", () => {
    const opts = parseServeArgs([...BASE, "--patch-workers=3", "--on-patch-error=allow"]);
    assert.ok(opts !== "help");
    assert.deepEqual(opts.discovery, {
      onPatchError: "allow",
      deadlineMs: 100,
      workers: 3,
      selfNamespace: process.env.POD_NAMESPACE || undefined,
    });
    assert.equal(opts.endpoints, undefined);
    for (const flag of ["--config=x.yaml", "--vcluster-name=a", "--vcluster-namespace=b"]) {
      usage([...BASE, flag], /cannot be combined with --/);
    }
  });

  it("patches host objects only", () => {
    usage([...BASE, "--side=virtual"], /--side must be host/);
  });

  it("is off unless asked for", () => {
    const opts = parseServeArgs(["--dev"]);
    assert.ok(opts !== "help");
    assert.equal(opts.discovery, undefined);
  });
});
