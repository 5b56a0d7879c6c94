// The "Did you mean this?" suggestions of vgate's usage errors (cli/suggest.ts).

import assert from "node:assert/strict";
import fc from "fast-check";
import { didYouMean, suggestions } from "../../../webhook/src/cli/suggest.js";

const FLAGS = ["--port", "--tls-cert-file", "--kubeconfig", "--host-kubeconfig", "--namespace"];

describe("cli/suggest", () => {
  it("suggests by edit distance (at most 2), by prefix, and longer flags holding the name", () => {
    assert.deepEqual(suggestions("--prot", FLAGS), ["--port"]);
    assert.deepEqual(suggestions("--namespce", FLAGS), ["--namespace"]);
    assert.deepEqual(suggestions("--tls-cert", FLAGS), ["--tls-cert-file"]);
    assert.deepEqual(suggestions("--kubeconfig", ["--host-kubeconfig", "--virtual-kubeconfig"]), [
      "--host-kubeconfig",
      "--virtual-kubeconfig",
    ]);
    assert.deepEqual(suggestions("--KUBECONFIG", FLAGS), ["--kubeconfig", "--host-kubeconfig"]);
    assert.deepEqual(suggestions("--frobnicate", FLAGS), []);
    assert.deepEqual(suggestions("", FLAGS), []);
    assert.equal(
      didYouMean("chek-config", ["check-config", "serve"]),
      "\n\nDid you mean this?\n\tcheck-config\n",
    );
    assert.equal(didYouMean("zzz", ["check-config"]), "");
  });

  it("always suggests a name with one letter changed, dropped or added", () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[a-z][a-z-]{3,20}$/),
        fc.nat(),
        fc.constantFrom("change", "drop", "add"),
        (name, at, how) => {
          const i = at % name.length;
          const typo =
            how === "drop"
              ? name.slice(0, i) + name.slice(i + 1)
              : how === "add"
                ? `${name.slice(0, i)}q${name.slice(i)}`
                : `${name.slice(0, i)}${name[i] === "x" ? "y" : "x"}${name.slice(i + 1)}`;
          const found = suggestions(typo, ["serve", "check-config", name]);
          assert.ok(found.includes(name), `${typo} -> ${found.join(",")}`);
        },
      ),
    );
  });
});
