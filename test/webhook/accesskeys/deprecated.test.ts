import assert from "node:assert/strict";
import { describe, it } from "mocha";
import { deprecationWarnings } from "../../../webhook/src/accesskeys/deprecated.js";

describe("deprecationWarnings", () => {
  it("says nothing for a spec without deprecated fields", () => {
    assert.deepEqual(
      deprecationWarnings({ user: "a", scope: { roles: [{ role: "vcluster" }] } }),
      [],
    );
    assert.deepEqual(deprecationWarnings(undefined), []);
    assert.deepEqual(deprecationWarnings("spec"), []);
  });

  it("warns once per deprecated field, naming the replacement", () => {
    const warnings = deprecationWarnings({
      rules: [{ verbs: ["get"] }],
      allowLoftCli: true,
      scope: { rules: [{}], allowLoftCli: true },
      parent: "old-key",
      oidcLogin: { idToken: "aWQ=" },
    });
    assert.deepEqual(warnings, [
      "spec.rules is deprecated; use spec.scope instead",
      'spec.allowLoftCli is deprecated; use spec.scope.roles with role "loft-cli" instead',
      "spec.scope.rules is deprecated; use spec.scope roles, projects, spaces, virtualClusters or clusters",
      'spec.scope.allowLoftCli is deprecated; use spec.scope.roles with role "loft-cli" instead',
      "spec.parent is deprecated and has no replacement; do not use it",
      "spec.oidcLogin is deprecated; use spec.identity instead",
    ]);
    for (const w of warnings) assert.ok(w.length < 120, w);
  });

  it("warns for each field alone", () => {
    assert.equal(deprecationWarnings({ parent: "x" }).length, 1);
    assert.equal(deprecationWarnings({ scope: { allowLoftCli: true } }).length, 1);
    assert.equal(deprecationWarnings({ oidcLogin: {} }).length, 1);
  });

  it("ignores values omitempty would drop", () => {
    assert.deepEqual(
      deprecationWarnings({
        rules: [],
        allowLoftCli: false,
        parent: "",
        oidcLogin: null,
        scope: { rules: null },
      }),
      [],
    );
  });

  it("does not find inherited or prototype fields", () => {
    const spec = JSON.parse('{"__proto__": {"parent": "x"}}') as unknown;
    assert.deepEqual(deprecationWarnings(spec), []);
    assert.deepEqual(deprecationWarnings(Object.create({ parent: "x" })), []);
  });
});
