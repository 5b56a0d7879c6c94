import assert from "node:assert/strict";
import { describe, it } from "mocha";
import { compilePatches } from "../../../webhook/src/patches/engine.js";
import {
  applyReferencePatch,
  type ReferenceInput,
} from "../../../webhook/src/patches/reference.js";
import {
  PatchError,
  type Json,
  type ReferenceResolver,
  type ReferenceSpec,
  type VClusterInfo,
} from "../../../webhook/src/patches/types.js";

const VC: VClusterInfo = { name: "my-vcluster", namespace: "vcluster-my-vcluster", config: {} };
const SECRET: ReferenceSpec = { apiVersion: "v1", kind: "Secret" };

function input(
  reference: ReferenceSpec,
  value: Json,
  over: Partial<ReferenceInput> = {},
): ReferenceInput {
  const [patch] = compilePatches([{ path: "spec.ref", reference }]);
  return {
    patch: patch!,
    value,
    path: "spec.ref",
    direction: "toHost",
    vcluster: VC,
    hostObject: { metadata: { name: "h", namespace: "vcluster-my-vcluster" } },
    virtualObject: { metadata: { name: "v", namespace: "default" } },
    ...over,
  };
}

/** A resolver over a fixed table, recording what it was asked. */
function tableResolver(
  table: Record<string, { namespace: string; name: string }>,
  asked: string[] = [],
): ReferenceResolver {
  return {
    hostToVirtual(ref, ns, name) {
      const key = `${ref.apiVersion}/${ref.kind}/${ns}/${name}`;
      asked.push(key);
      return Object.hasOwn(table, key) ? table[key]! : null;
    },
  };
}

describe("patches/reference", () => {
  describe("to host, single-namespace mode (docs/decisions.md EPS-1)", () => {
    it("simple form: the short host name from the virtual object's namespace (docs/reference.md#host-name-examples #1)", () => {
      const out = applyReferencePatch(input(SECRET, "my-secret"));
      assert.equal(out.kind, "set");
      assert.equal(out.kind === "set" && out.value, "v5ri45ovgqam9c");
      assert.deepEqual(out.reference, {
        patchIndex: 0,
        direction: "toHost",
        apiVersion: "v1",
        kind: "Secret",
        virtual: { namespace: "default", name: "my-secret" },
        host: { namespace: "vcluster-my-vcluster", name: "v5ri45ovgqam9c" },
      });
    });

    it("keeps the leading-zero quirk of base36 (docs/reference.md#host-name-examples #5)", () => {
      const out = applyReferencePatch(input(SECRET, "ep-14"));
      assert.equal(out.kind === "set" && out.value, "v0qlj0x03ss950");
    });

    it("structured form: name and namespace rewritten from namespacePath (docs/reference.md#host-name-examples #2)", () => {
      const spec = { ...SECRET, namePath: "name", namespacePath: "namespace" };
      const out = applyReferencePatch(
        input(
          spec,
          { name: "test-endpoints", namespace: "test", other: 1 },
          { vcluster: { ...VC, name: "suffix" } },
        ),
      );
      assert.deepEqual(out.kind === "set" && out.value, {
        name: "v1mi4z771xlawq",
        namespace: "vcluster-my-vcluster",
        other: 1,
      });
    });

    it("structured form without a namespace in the value: not added, object namespace used", () => {
      const spec = { ...SECRET, namePath: "name", namespacePath: "namespace" };
      const out = applyReferencePatch(input(spec, { name: "my-secret" }));
      assert.deepEqual(out.kind === "set" && out.value, { name: "v5ri45ovgqam9c" });
    });

    it("kindPath and apiVersionPath choose the kind, falling back when absent", () => {
      const spec = { ...SECRET, namePath: "name", kindPath: "kind", apiVersionPath: "apiVersion" };
      const found = applyReferencePatch(
        input(spec, { name: "n", kind: "ConfigMap", apiVersion: "v2" }),
      );
      assert.equal(found.reference?.kind, "ConfigMap");
      assert.equal(found.reference?.apiVersion, "v2");
      const fallback = applyReferencePatch(input(spec, { name: "n" }));
      assert.equal(fallback.reference?.kind, "Secret");
      assert.equal(fallback.reference?.apiVersion, "v1");
    });

    it("skips non-string or empty names", () => {
      for (const value of [42, "", null, { name: "x" }]) {
        assert.equal(applyReferencePatch(input(SECRET, value)).kind, "keep");
      }
      const structured = { ...SECRET, namePath: "name" };
      const values: Json[] = [{ name: 1 }, { name: "" }, { other: "x" }, "plain", ["a"]];
      for (const value of values) {
        const out = applyReferencePatch(input(structured, value));
        assert.equal(out.kind, "keep");
        assert.ok(out.note !== undefined);
      }
    });

    it("warns and keeps the value when there is no namespace to use", () => {
      const out = applyReferencePatch(
        input(SECRET, "my-secret", { virtualObject: { metadata: {} } }),
      );
      assert.equal(out.kind, "keep");
      assert.match(out.warning ?? "", /no namespace/);
    });

    it("a wildcard sub-path matching several values is an error (docs/reference.md#reference-patches)", () => {
      const spec = { ...SECRET, namePath: "names[*]" };
      assert.throws(
        () => applyReferencePatch(input(spec, { names: ["a", "b"] })),
        (err: unknown) => {
          return (
            err instanceof PatchError &&
            err.patchIndex === 0 &&
            /namePath matches 2 values/.test(err.message)
          );
        },
      );
      const one = applyReferencePatch(input(spec, { names: ["my-secret"] }));
      assert.deepEqual(one.kind === "set" && one.value, { names: ["v5ri45ovgqam9c"] });
    });
  });

  describe("to host, multi-namespace mode", () => {
    const mapped = { ...VC, namespaceMappings: { "team-a-*": "h-team-a-*", exact: "host-exact" } };

    it("keeps the name and maps the namespace", () => {
      const spec = { ...SECRET, namePath: "name", namespacePath: "namespace" };
      const out = applyReferencePatch(
        input(spec, { name: "s", namespace: "team-a-x" }, { vcluster: mapped }),
      );
      assert.deepEqual(out.kind === "set" && out.value, { name: "s", namespace: "h-team-a-x" });
    });

    it("an unmapped namespace falls back to single-namespace naming", () => {
      const out = applyReferencePatch(input(SECRET, "my-secret", { vcluster: mapped }));
      assert.equal(out.kind === "set" && out.value, "v5ri45ovgqam9c");
    });
  });

  describe("to virtual (docs/reference.md#reference-patches-reverse)", () => {
    it("asks the resolver with the host namespace and writes the virtual name", () => {
      const asked: string[] = [];
      const resolver = tableResolver(
        {
          "v1/Secret/vcluster-my-vcluster/v5ri45ovgqam9c": {
            namespace: "default",
            name: "my-secret",
          },
        },
        asked,
      );
      const spec = { ...SECRET, namePath: "name", namespacePath: "namespace" };
      const out = applyReferencePatch(
        input(
          spec,
          { name: "v5ri45ovgqam9c", namespace: "vcluster-my-vcluster" },
          { direction: "toVirtual", resolver },
        ),
      );
      assert.deepEqual(out.kind === "set" && out.value, {
        name: "my-secret",
        namespace: "default",
      });
      assert.deepEqual(asked, ["v1/Secret/vcluster-my-vcluster/v5ri45ovgqam9c"]);
    });

    it("simple form uses the host object's namespace", () => {
      const resolver = tableResolver({
        "v1/Secret/vcluster-my-vcluster/hs": { namespace: "default", name: "vs" },
      });
      const out = applyReferencePatch(input(SECRET, "hs", { direction: "toVirtual", resolver }));
      assert.equal(out.kind === "set" && out.value, "vs");
    });

    it("an unknown host object keeps the value with a warning", () => {
      const out = applyReferencePatch(
        input(SECRET, "unknown", { direction: "toVirtual", resolver: tableResolver({}) }),
      );
      assert.equal(out.kind, "keep");
      assert.match(out.warning ?? "", /no known virtual object/);
    });

    it("without a resolver the value is kept with a warning", () => {
      const out = applyReferencePatch(input(SECRET, "x", { direction: "toVirtual" }));
      assert.equal(out.kind, "keep");
      assert.ok(out.warning);
    });
  });
});
