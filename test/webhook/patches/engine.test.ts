import assert from "node:assert/strict";
import { describe, it } from "mocha";
import {
  applyPatches,
  compilePatches,
  patchMode,
  type ApplyInput,
} from "../../../webhook/src/patches/engine.js";
import {
  PatchError,
  type Direction,
  type ExpressionContext,
  type ExpressionRunner,
  type Json,
  type JsonObject,
  type PatchSpec,
  type VClusterInfo,
} from "../../../webhook/src/patches/types.js";

const VC: VClusterInfo = {
  name: "my-vcluster",
  namespace: "vcluster-my-vcluster",
  config: { sync: {} },
};

type Fn = (
  value: Json,
  context: ExpressionContext,
  b: typeof btoa,
  a: typeof atob,
) => Json | undefined;

/** A plain runner (no sandbox): the expression's completion value, as docs/decisions.md EPS-8 describes. */
function plainRunner(
  specs: PatchSpec[],
  direction: Direction,
  calls: number[] = [],
): ExpressionRunner {
  const fns = specs.map((s) => {
    const src = direction === "toHost" ? s.expression : s.reverseExpression;
    if (!src) return null;
    return new Function(
      "value",
      "context",
      "btoa",
      "atob",
      `return (${src.replace(/;\s*$/, "")});`,
    ) as Fn;
  });
  return (i, value, context) => {
    calls.push(i);
    const fn = fns[i];
    if (!fn) throw new Error(`no expression for patch ${i}`);
    return fn(value, context, btoa, atob);
  };
}

interface Case {
  specs: PatchSpec[];
  object: JsonObject;
  direction?: Direction;
  changeSet?: boolean;
  hostObject?: Json;
  virtualObject?: Json;
}

function apply(c: Case, calls: number[] = []) {
  const direction = c.direction ?? "toHost";
  const input: ApplyInput = {
    object: c.object,
    direction,
    changeSet: c.changeSet,
    hostObject: c.hostObject ?? null,
    virtualObject: c.virtualObject ?? { metadata: { name: "ep", namespace: "default" } },
  };
  return applyPatches(input, {
    patches: compilePatches(c.specs),
    vcluster: VC,
    run: plainRunner(c.specs, direction, calls),
    explain: true,
  });
}

function patchError(fn: () => unknown): PatchError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof PatchError, `expected PatchError, got ${String(err)}`);
    return err;
  }
  assert.fail("expected a PatchError");
}

describe("patches/engine", () => {
  describe("documentation examples (docs/reference.md#patch-doc-examples)", () => {
    it("Pods image rewrite", () => {
      const specs = [
        {
          path: "spec.containers[*].image",
          expression: 'value.replace("docker.io/", "registry.internal/")',
        },
      ];
      const out = apply({
        specs,
        object: {
          spec: { containers: [{ image: "docker.io/nginx:latest" }, { image: "quay.io/x" }] },
        },
      });
      assert.deepEqual(out.object, {
        spec: { containers: [{ image: "registry.internal/nginx:latest" }, { image: "quay.io/x" }] },
      });
    });

    it("Service port names, both directions", () => {
      const specs = [
        {
          path: "spec.ports[*].name",
          expression: '"tenant-" + value',
          reverseExpression: 'value.replace(/^tenant-/, "")',
        },
      ];
      const toHost = apply({ specs, object: { spec: { ports: [{ name: "http", port: 80 }] } } });
      assert.deepEqual(toHost.object, { spec: { ports: [{ name: "tenant-http", port: 80 }] } });
      const back = apply({ specs, direction: "toVirtual", object: toHost.object });
      assert.deepEqual(back.object, { spec: { ports: [{ name: "http", port: 80 }] } });
    });

    it("annotation wildcard with a reverseExpression runs host to virtual", () => {
      const specs = [
        {
          path: "metadata.annotations[*]",
          reverseExpression: 'value.startsWith("www.") ? value.slice(4) : value',
        },
      ];
      const out = apply({
        specs,
        direction: "toVirtual",
        object: { metadata: { annotations: { a: "www.example.com", b: "x" } } },
      });
      assert.deepEqual(out.object, { metadata: { annotations: { a: "example.com", b: "x" } } });
    });

    it("custom resource hosts, both directions", () => {
      const specs = [
        {
          path: "spec.hosts[*]",
          expression: "value.startsWith('prod-') ? value : `prod-${value}`",
          reverseExpression: "value.startsWith('prod-') ? value.slice(5) : value",
        },
      ];
      assert.deepEqual(
        apply({ specs, object: { spec: { hosts: ["server.example.com"] } } }).object,
        {
          spec: { hosts: ["prod-server.example.com"] },
        },
      );
      assert.deepEqual(
        apply({
          specs,
          direction: "toVirtual",
          object: { spec: { hosts: ["prod-other-server.example.com"] } },
        }).object,
        { spec: { hosts: ["other-server.example.com"] } },
      );
    });

    it("Endpoints page prefix and its optional reverse", () => {
      const specs = [
        {
          path: "metadata.annotations[*]",
          expression: '"my-prefix-"+value',
          reverseExpression: 'value.slice("my-prefix-".length)',
        },
      ];
      const out = apply({ specs, object: { metadata: { annotations: { k: "x" } } } });
      assert.deepEqual(out.object, { metadata: { annotations: { k: "my-prefix-x" } } });
      assert.deepEqual(apply({ specs, direction: "toVirtual", object: out.object }).object, {
        metadata: { annotations: { k: "x" } },
      });
    });

    it("empty path IIFE composes the whole object", () => {
      const specs = [
        {
          path: "",
          expression:
            '(() => { value.metadata ??= {}; value.metadata.annotations ??= {}; value.metadata.annotations["patched-by"] = "vcluster"; return value; })()',
        },
      ];
      const out = apply({ specs, object: { spec: { replicas: 3 } } });
      assert.deepEqual(out.object, {
        spec: { replicas: 3 },
        metadata: { annotations: { "patched-by": "vcluster" } },
      });
    });

    it("btoa / atob", () => {
      const specs = [
        {
          path: `metadata.annotations["encoded-value"]`,
          expression: "btoa(value)",
          reverseExpression: "atob(value)",
        },
      ];
      const out = apply({
        specs,
        object: { metadata: { annotations: { "encoded-value": "my-value" } } },
      });
      assert.deepEqual(out.object, {
        metadata: { annotations: { "encoded-value": "bXktdmFsdWU=" } },
      });
      assert.deepEqual(
        apply({ specs, direction: "toVirtual", object: out.object }).object.metadata,
        {
          annotations: { "encoded-value": "my-value" },
        },
      );
    });
  });

  describe("order and purity", () => {
    it("runs patches in list order, each on the previous output", () => {
      const specs = [
        { path: "a", expression: 'value + "1"' },
        { path: "a", expression: 'value + "2"' },
      ];
      assert.equal(apply({ specs, object: { a: "x" } }).object["a"], "x12");
    });

    it("never mutates the input object or the context objects", () => {
      const object = { a: { b: "x" }, list: [1, 2] };
      const hostObject = { h: 1 };
      const before = structuredClone({ object, hostObject });
      const specs = [
        { path: "a", expression: '(value.b = "changed", context.hostObject.h = 2, value)' },
        { path: "list[*]", expression: "value + 1" },
      ];
      const out = apply({ specs, object, hostObject });
      assert.deepEqual({ object, hostObject }, before);
      assert.deepEqual(out.object, { a: { b: "changed" }, list: [2, 3] });
    });

    it("never creates keys or extends arrays (docs/reference.md#patch-path-edge-cases item 11)", () => {
      const specs = [
        { path: `metadata.annotations["new"]`, expression: '"v"' },
        { path: "list[5]", expression: '"v"' },
        { path: "missing.deep", expression: '"v"' },
      ];
      const object = { metadata: { annotations: {} }, list: [1] };
      const out = apply({ specs, object });
      assert.deepEqual(out.object, object);
      assert.deepEqual(
        out.explain.map((e) => [e.action, e.matched]),
        [
          ["skip", []],
          ["skip", []],
          ["skip", []],
        ],
      );
    });
  });

  describe("context", () => {
    it("passes vcluster, both objects and the canonical matched path (docs/decisions.md EPS-4)", () => {
      const seen: ExpressionContext[] = [];
      const object = {
        subsets: [{ addresses: [{ hostname: "a" }, { hostname: "b" }] }],
        metadata: { annotations: { "x.y": "1" } },
      };
      const run: ExpressionRunner = (_i, value, context) => {
        seen.push(context);
        return value;
      };
      const specs = [
        { path: "subsets[*].addresses[*].hostname", expression: "value" },
        { path: "metadata.annotations[*]", expression: "value" },
      ];
      applyPatches(
        {
          object,
          direction: "toHost",
          hostObject: { kind: "host" },
          virtualObject: { kind: "virtual" },
        },
        { patches: compilePatches(specs), vcluster: VC, run },
      );
      assert.deepEqual(
        seen.map((c) => c.path),
        [
          "subsets.0.addresses.0.hostname",
          "subsets.0.addresses.1.hostname",
          `metadata.annotations."x.y"`,
        ],
      );
      assert.deepEqual(seen[0]!.vcluster, {
        name: VC.name,
        namespace: VC.namespace,
        config: VC.config,
      });
      assert.deepEqual(seen[0]!.hostObject, { kind: "host" });
      assert.deepEqual(seen[0]!.virtualObject, { kind: "virtual" });
      assert.ok(Object.isFrozen(seen[0]!.hostObject));
    });

    it("gives the empty path as the root path", () => {
      const paths: string[] = [];
      const run: ExpressionRunner = (_i, value, context) => (paths.push(context.path), value);
      applyPatches(
        { object: { a: 1 }, direction: "toHost", hostObject: null, virtualObject: null },
        { patches: compilePatches([{ path: "", expression: "value" }]), vcluster: VC, run },
      );
      assert.deepEqual(paths, [""]);
    });
  });

  describe("docs/decisions.md EPS-5: result handling", () => {
    it("null or undefined deletes an object key", () => {
      const specs = [
        { path: "a", expression: "null" },
        { path: "b", expression: "undefined" },
        { path: "c", expression: "value" },
      ];
      const out = apply({ specs, object: { a: 1, b: 2, c: 3 } });
      assert.deepEqual(out.object, { c: 3 });
    });

    it("null for an array element is an error naming patch index and path", () => {
      const specs = [
        { path: "x", expression: "value" },
        { path: "spec.hosts[*]", expression: 'value === "b" ? null : value' },
      ];
      const err = patchError(() => apply({ specs, object: { x: 1, spec: { hosts: ["a", "b"] } } }));
      assert.equal(err.patchIndex, 1);
      assert.equal(err.path, "spec.hosts.1");
      assert.match(err.message, /patches\[1\] at "spec\.hosts\.1"/);
    });

    it("a replacement may be an object or an array", () => {
      const specs = [
        { path: "a", expression: "[value, value]" },
        { path: "b", expression: "({ v: value })" },
      ];
      assert.deepEqual(apply({ specs, object: { a: 1, b: 2 } }).object, { a: [1, 1], b: { v: 2 } });
    });

    it("a null leaf of an update change set passes through without running the expression", () => {
      const calls: number[] = [];
      const specs = [{ path: "metadata.annotations[*]", expression: '"p-" + value' }];
      const out = apply(
        {
          specs,
          changeSet: true,
          object: { metadata: { annotations: { gone: null, kept: "v" } } },
        },
        calls,
      );
      assert.deepEqual(out.object, { metadata: { annotations: { gone: null, kept: "p-v" } } });
      assert.equal(calls.length, 1);
      assert.match(out.explain[0]!.note ?? "", /deletion passed through/);
    });

    it("outside a change set a null leaf is given to the expression", () => {
      const specs = [{ path: "metadata.annotations[*]", expression: '"p-" + value' }];
      const out = apply({ specs, object: { metadata: { annotations: { gone: null } } } });
      assert.deepEqual(out.object, { metadata: { annotations: { gone: "p-null" } } });
    });

    it("the empty path runs in a change set and its result replaces the object", () => {
      const specs = [{ path: "", expression: "({ replaced: Object.keys(value).length })" }];
      assert.deepEqual(apply({ specs, changeSet: true, object: { a: null, b: 1 } }).object, {
        replaced: 2,
      });
    });

    it("the empty path must give an object", () => {
      for (const expression of ["null", "[1]", '"s"']) {
        const err = patchError(() =>
          apply({ specs: [{ path: ".", expression }], object: { a: 1 } }),
        );
        assert.equal(err.patchIndex, 0);
        assert.equal(err.path, "");
      }
    });

    it("a result JSON cannot hold is an error", () => {
      const err = patchError(() =>
        apply({ specs: [{ path: "a", expression: "10n" }], object: { a: 1 } }),
      );
      assert.match(err.message, /not JSON/);
    });

    it("a __proto__ key in a result stays a plain key", () => {
      const specs = [{ path: "a", expression: `JSON.parse('{"__proto__": {"polluted": 1}}')` }];
      const out = apply({ specs, object: { a: 1 } });
      const a = out.object["a"] as JsonObject;
      assert.ok(Object.hasOwn(a, "__proto__"));
      assert.equal(Object.getPrototypeOf(a), Object.prototype);
    });
  });

  describe("docs/decisions.md EPS-6: a missing expression for this direction drops the field", () => {
    it("reverseExpression only: dropped going to the host, transformed coming back", () => {
      const specs = [
        { path: `metadata.annotations["k"]`, reverseExpression: "value.toLowerCase()" },
      ];
      const object = { metadata: { annotations: { k: "V", other: "o" } } };
      const toHost = apply({ specs, object });
      assert.deepEqual(toHost.object, { metadata: { annotations: { other: "o" } } });
      assert.equal(toHost.explain[0]!.action, "drop");
      assert.deepEqual(apply({ specs, direction: "toVirtual", object }).object, {
        metadata: { annotations: { k: "v", other: "o" } },
      });
    });

    it("expression only: transformed to the host, dropped coming back", () => {
      const specs = [{ path: "metadata.annotations.k", expression: "value.toUpperCase()" }];
      const object = { metadata: { annotations: { k: "v" } } };
      assert.deepEqual(apply({ specs, object }).object, { metadata: { annotations: { k: "V" } } });
      assert.deepEqual(apply({ specs, direction: "toVirtual", object }).object, {
        metadata: { annotations: {} },
      });
    });

    it("drops deletions of an update change set too", () => {
      const specs = [{ path: "metadata.annotations.k", reverseExpression: "value" }];
      const out = apply({
        specs,
        changeSet: true,
        object: { metadata: { annotations: { k: null } } },
      });
      assert.deepEqual(out.object, { metadata: { annotations: {} } });
    });

    it("cannot drop an array element", () => {
      const specs = [{ path: "spec.hosts[0]", reverseExpression: "value" }];
      const err = patchError(() => apply({ specs, object: { spec: { hosts: ["a"] } } }));
      assert.equal(err.path, "spec.hosts.0");
      assert.match(err.message, /array element cannot be removed/);
    });

    it("dropping the empty path leaves an empty change set", () => {
      assert.deepEqual(
        apply({ specs: [{ path: "", reverseExpression: "value" }], object: { a: 1 } }).object,
        {},
      );
    });

    it("patchMode picks the action per direction", () => {
      assert.equal(patchMode({ path: "a", expression: "x" }, "toHost"), "expression");
      assert.equal(patchMode({ path: "a", expression: "x" }, "toVirtual"), "drop");
      assert.equal(
        patchMode({ path: "a", reverseExpression: "x" }, "toVirtual"),
        "reverseExpression",
      );
      assert.equal(
        patchMode({ path: "a", expression: "", reverseExpression: "x" }, "toHost"),
        "drop",
      );
      assert.equal(patchMode({ path: "a" }, "toHost"), "skip");
      assert.equal(patchMode({ path: "a", labels: {} }, "toHost"), "labels");
      assert.equal(
        patchMode({ path: "a", reference: { apiVersion: "v1", kind: "Secret" } }, "toVirtual"),
        "reference",
      );
    });

    it("patchMode runs the kind's keyword (KND-2): sync.fromHost kinds sync one way", () => {
      const node = { toHost: null, toVirtual: "expression" } as const;
      const configMap = { toHost: null, toVirtual: "reverseExpression" } as const;
      const both = { path: "a", expression: "x", reverseExpression: "y" };
      assert.equal(patchMode({ path: "a", expression: "x" }, "toVirtual", node), "expression");
      assert.equal(patchMode(both, "toVirtual", node), "expression");
      // Never virtual -> host: skipped, not dropped, whatever the patch has.
      assert.equal(patchMode({ path: "a", expression: "x" }, "toHost", node), "skip");
      assert.equal(patchMode(both, "toHost", configMap), "skip");
      assert.equal(
        patchMode({ path: "a", reverseExpression: "x" }, "toVirtual", configMap),
        "reverseExpression",
      );
      assert.equal(patchMode({ path: "a", expression: "x" }, "toVirtual", configMap), "skip");
      assert.equal(patchMode({ path: "a", labels: {} }, "toHost", node), "labels");
    });
  });

  describe("errors", () => {
    it("an expression that throws becomes a PatchError naming patch and path", () => {
      const specs = [
        { path: "a", expression: "value" },
        { path: "b[*]", expression: "value.nope.deeper" },
      ];
      const err = patchError(() => apply({ specs, object: { a: 1, b: [{ x: 1 }] } }));
      assert.equal(err.patchIndex, 1);
      assert.equal(err.path, "b.0");
      assert.ok(err.cause instanceof TypeError);
    });

    it("a PatchError from the runner for this patch and path is passed on unchanged", () => {
      const original = new PatchError("timed out", 0, "a");
      const run: ExpressionRunner = () => {
        throw original;
      };
      const thrown = patchError(() =>
        applyPatches(
          { object: { a: 1 }, direction: "toHost", hostObject: null, virtualObject: null },
          { patches: compilePatches([{ path: "a", expression: "x" }]), vcluster: VC, run },
        ),
      );
      assert.equal(thrown, original);
    });

    it("compilePatches names the patch and field of a syntax error", () => {
      const err = patchError(() =>
        compilePatches([
          { path: "a", expression: "v" },
          { path: "a[]", expression: "v" },
        ]),
      );
      assert.equal(err.patchIndex, 1);
      assert.match(
        err.message,
        /^patches\[1\]\.path: invalid path "a\[\]": empty brackets at position 1/,
      );
      const ref = patchError(() =>
        compilePatches([
          { path: "a", reference: { apiVersion: "v1", kind: "Secret", namePath: "x[[y]]" } },
        ]),
      );
      assert.match(ref.message, /^patches\[0\]\.reference\.namePath: /);
    });

    it("compilePatches accepts good paths and treats empty sub-paths as absent", () => {
      const [c] = compilePatches([
        {
          path: "spec.secretRef",
          reference: { apiVersion: "v1", kind: "Secret", namePath: "name", namespacePath: "" },
        },
      ]);
      assert.equal(c!.ref?.nameSegments?.length, 1);
      assert.equal(c!.ref?.namespaceSegments, undefined);
    });

    it("rejects a non-object to patch", () => {
      patchError(() =>
        applyPatches(
          {
            object: [] as unknown as JsonObject,
            direction: "toHost",
            hostObject: null,
            virtualObject: null,
          },
          { patches: [], vcluster: VC, run: () => null },
        ),
      );
    });
  });

  describe("explain", () => {
    it("lists one entry per patch with matched paths and action", () => {
      const specs: PatchSpec[] = [
        { path: "a[*]", expression: "value" },
        { path: "missing", expression: "value" },
        { path: "b", reverseExpression: "value" },
      ];
      const out = apply({ specs, object: { a: [1, 2], b: 1 } });
      assert.deepEqual(out.explain, [
        { patchIndex: 0, path: "a[*]", matched: ["a.0", "a.1"], action: "expression" },
        { patchIndex: 1, path: "missing", matched: [], action: "skip", note: "path not found" },
        {
          patchIndex: 2,
          path: "b",
          matched: ["b"],
          action: "drop",
          note: "no expression for this direction",
        },
      ]);
    });

    it("is empty unless asked for", () => {
      const specs = [{ path: "a", expression: "value" }];
      const out = applyPatches(
        { object: { a: 1 }, direction: "toHost", hostObject: null, virtualObject: null },
        { patches: compilePatches(specs), vcluster: VC, run: plainRunner(specs, "toHost") },
      );
      assert.deepEqual(out.explain, []);
    });
  });

  describe("delegation", () => {
    it("reference patches rewrite names and report the reference", () => {
      const specs = [
        { path: `metadata.annotations["secret"]`, reference: { apiVersion: "v1", kind: "Secret" } },
      ];
      const out = apply({ specs, object: { metadata: { annotations: { secret: "my-secret" } } } });
      // docs/reference.md#host-name-examples #1: HostNameShort(my-secret, default, my-vcluster).
      assert.deepEqual(out.object, { metadata: { annotations: { secret: "v5ri45ovgqam9c" } } });
      assert.equal(out.references.length, 1);
      assert.equal(out.explain[0]!.action, "reference");
    });

    it("labels patches translate label maps", () => {
      const specs = [{ path: "spec.selector", labels: {} }];
      const out = apply({ specs, object: { spec: { selector: { app: "x", release: "r" } } } });
      const selector = (out.object["spec"] as JsonObject)["selector"] as JsonObject;
      assert.equal(selector["app"], "x");
      assert.equal(Object.hasOwn(selector, "release"), false);
      assert.equal(out.explain[0]!.action, "labels");
    });

    it("labels patches on an unknown shape warn and keep the value", () => {
      const specs = [{ path: "spec.selector", labels: {} }];
      const out = apply({ specs, object: { spec: { selector: ["a"] } } });
      assert.deepEqual(out.object, { spec: { selector: ["a"] } });
      assert.equal(out.warnings.length, 1);
      assert.match(out.warnings[0]!, /^patches\[0\] at "spec\.selector": /);
    });
  });
});
