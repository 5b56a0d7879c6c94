// `vgate check-config` against vCluster itself: the chart schema, chart defaults and example configs
// that vCluster's Go module ships (the version test/kube/versions.env pins), plus vCluster's Go-side
// patch validation, decide which configs vCluster accepts (test/webhook/config/vcluster-oracle.ts
// says how, with file:line for every Go rule). On a generated corpus of sync.toHost.endpoints
// sections and the way to them, vgate accepts exactly what vCluster accepts, except where vgate is
// stricter or laxer on purpose, each exception named with its decision:
// - EPS-9 (vgate refuses, vCluster accepts): a path vgate's grammar cannot parse; an expression
//   that does not compile or that the sandbox refuses; a reference whose apiVersion or kind is
//   blank, whose *Path does not parse, or with apiVersionPath/kindPath/namespacePath but no
//   namePath; metadata.name or metadata.namespace as a path; two paths equal after normalising
//   (vCluster compares the text).
// - EPS-34 (vgate refuses, vCluster accepts): an empty file; a YAML map with a duplicate key (helm
//   reads values files with go-yaml v2's non-strict decoder, the last one wins); several YAML
//   documents (go-yaml v2 reads the first).
// - EPS-34 (vgate accepts, vCluster v0.34 refuses): keys of other vCluster releases on the way to
//   sync.toHost.endpoints (root `external` and `sleepMode`, `sync.toHost.gatewayApi`), and every
//   section off that way, which vgate does not read.
// vCluster's Go test cases for ValidateAllSyncPatches (pkg/config/validation_test.go:684-750) check
// the oracle itself. The test skips, saying why, when Go or the module is not there.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import fc from "fast-check";
import { after, before, describe, it } from "mocha";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { checkConfigFile } from "../../../webhook/src/config/check-config.js";
import { loadVClusterConfig } from "../../../webhook/src/config/load-config.js";
import type { PatchSpec } from "../../../webhook/src/patches/types.js";
import { repoRoot } from "../../support/fixtures.js";
import { findVClusterModule } from "../../support/vcluster/vcluster-module.js";
import {
  goPatch,
  goValidatePatches,
  VClusterOracle,
  type GoEndpoints,
  type Verdict,
} from "./vcluster-oracle.js";

const lookup = findVClusterModule();
const SKIP = "missing" in lookup ? ` (skipped: ${lookup.missing})` : "";
const moduleDir = "found" in lookup ? lookup.found.dir : "";
const moduleVersion = "found" in lookup ? ` ${lookup.found.version}` : "";
const bin = resolve(repoRoot, "webhook/bin/vgate");

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

// ---- the corpus --------------------------------------------------------------------------------

/** A patch path: `eq` names its class after normalising (null: vgate cannot parse it). */
interface PathCase {
  text: string;
  eq: string | null;
  unpatchable?: true;
}
const PATHS: PathCase[] = [
  { text: "", eq: "root" },
  { text: " ", eq: "root" },
  { text: "metadata.labels.app", eq: "label" },
  { text: 'metadata.labels["app"]', eq: "label" },
  { text: "metadata..labels.app", eq: "label" },
  { text: " metadata.labels.app ", eq: "label" },
  { text: 'metadata.annotations["example.com/owner"]', eq: "owner" },
  { text: "metadata.annotations[example.com/owner]", eq: "owner" },
  { text: "subsets[*].addresses[*].ip", eq: "ip" },
  { text: "subsets.*.addresses.*.ip", eq: "ip" },
  { text: "subsets[0].ports[0].port", eq: "port" },
  { text: "spec.selector", eq: "selector" },
  { text: "yes", eq: "yes" },
  { text: "metadata.name", eq: "name", unpatchable: true },
  { text: 'metadata["name"]', eq: "name", unpatchable: true },
  { text: "metadata.namespace", eq: "namespace", unpatchable: true },
  { text: "a[", eq: null },
  { text: "a]", eq: null },
  { text: "a[]", eq: null },
  { text: '"a', eq: null },
  { text: "a[[b]]", eq: null },
];
const PATH_TEXTS = new Map(PATHS.map((p) => [p.text, p]));

/** Expressions, and whether vgate's syntax check (vm.Script, strict, plus SES's rules) passes. */
const EXPRESSIONS: [string, boolean][] = [
  ["value", true],
  ['value + "-x"', true],
  ["value.toUpperCase()", true],
  ["(() => value)()", true],
  [" ", true],
  ["value;", true],
  ["1 +\n2", true],
  ["1 +", false],
  ["value)", false],
  ['import("x")', false],
  ["<!-- x", false],
  ["return value", false],
  ["with (value) {}", false],
];
const EXPRESSION_OK = new Map(EXPRESSIONS);

/** The EPS-9 exceptions a generated endpoints section triggers (vgate refuses, vCluster not). */
function eps9(endpoints: unknown): string[] {
  const found: string[] = [];
  const patches = isObj(endpoints) ? endpoints["patches"] : undefined;
  if (!Array.isArray(patches)) return found;
  const seen = new Map<string, string>();
  patches.forEach((entry: unknown, i) => {
    if (!isObj(entry)) return;
    const path = entry["path"];
    const known = typeof path === "string" ? PATH_TEXTS.get(path) : undefined;
    if (known?.eq === null) found.push(`patches[${i}].path does not parse`);
    if (known?.unpatchable) found.push(`patches[${i}].path is metadata.name or .namespace`);
    if (known?.eq) {
      const first = seen.get(known.eq);
      if (first !== undefined && first !== known.text) found.push(`patches[${i}] same path`);
      if (first === undefined) seen.set(known.eq, known.text);
    }
    for (const key of ["expression", "reverseExpression"]) {
      const source = entry[key];
      if (typeof source === "string" && EXPRESSION_OK.get(source) === false) {
        found.push(`patches[${i}].${key} does not compile`);
      }
    }
    const ref = entry["reference"];
    if (!isObj(ref)) return;
    for (const key of ["apiVersion", "kind"]) {
      const text = ref[key];
      if (typeof text === "string" && text.trim() === "") found.push(`reference.${key} blank`);
    }
    const paths = ["apiVersionPath", "kindPath", "namePath", "namespacePath"];
    for (const key of paths) {
      const text = ref[key];
      if (typeof text === "string" && PATH_TEXTS.get(text)?.eq === null) {
        found.push(`reference.${key} does not parse`);
      }
    }
    const nonEmpty = (key: string) => typeof ref[key] === "string" && ref[key] !== "";
    if (paths.some((k) => k !== "namePath" && nonEmpty(k)) && !nonEmpty("namePath")) {
      found.push(`patches[${i}].reference.namePath missing`);
    }
  });
  return found;
}

const ABSENT = Symbol("absent");
type Maybe<T> = T | typeof ABSENT;

/** A value of the wrong JSON type for a string, boolean or object field. */
const wrong = fc.constantFrom<unknown>(null, 0, 1.5, true, "x", [], ["a"], {}, { a: 1 });
/** Mostly `good`, sometimes absent or of the wrong type. */
function field<T>(good: fc.Arbitrary<T>, absent = 1, bad = 1): fc.Arbitrary<Maybe<unknown>> {
  return fc.oneof(
    { weight: 40, arbitrary: good },
    { weight: absent, arbitrary: fc.constant(ABSENT) },
    { weight: bad, arbitrary: wrong },
  );
}
function record(entries: [string, Maybe<unknown>][]): Obj {
  return Object.fromEntries(entries.filter((e): e is [string, unknown] => e[1] !== ABSENT));
}
/** `arb` once in `odds` times, null otherwise. */
function rarely<T>(arb: fc.Arbitrary<T>, odds: number): fc.Arbitrary<T | null> {
  return fc.oneof(
    { weight: odds - 1, arbitrary: fc.constant(null) },
    { weight: 1, arbitrary: arb },
  );
}
/** One of `good` mostly, one of `bad` sometimes. */
function mostly<T>(good: T[], bad: T[], ratio = 6): fc.Arbitrary<T> {
  return fc.oneof(
    { weight: ratio, arbitrary: fc.constantFrom(...good) },
    { weight: 1, arbitrary: fc.constantFrom(...bad) },
  );
}

const pathText = mostly(
  PATHS.filter((p) => p.eq !== null && !p.unpatchable).map((p) => p.text),
  PATHS.filter((p) => p.eq === null || p.unpatchable).map((p) => p.text),
);
const expression = mostly(
  EXPRESSIONS.filter(([, ok]) => ok).map(([e]) => e),
  EXPRESSIONS.filter(([, ok]) => !ok).map(([e]) => e),
);
const refPath = fc.oneof(
  { weight: 3, arbitrary: fc.constant("") },
  { weight: 4, arbitrary: pathText },
);

const reference = fc
  .record({
    apiVersion: field(mostly(["v1", "apps/v1"], ["", "  "])),
    kind: field(mostly(["Secret", "ConfigMap"], ["", " "])),
    paths: fc.tuple(field(refPath, 60), field(refPath, 60), field(refPath, 4), field(refPath, 60)),
    unknown: rarely(fc.constantFrom("name", "Kind"), 15),
  })
  .map(({ apiVersion, kind, paths, unknown }) =>
    record([
      ["apiVersion", apiVersion],
      ["kind", kind],
      ["apiVersionPath", paths[0]],
      ["kindPath", paths[1]],
      ["namePath", paths[2]],
      ["namespacePath", paths[3]],
      ...(unknown === null ? [] : [[unknown, "x"] as [string, unknown]]),
    ]),
  );

const labels = fc.oneof(
  { weight: 12, arbitrary: fc.constant({}) },
  { weight: 1, arbitrary: fc.constantFrom<unknown>({ app: "x" }, [], "", null, true) },
);

type Mode = "expression" | "reverse" | "both" | "labels" | "reference" | "none" | "two";
const mode = mostly<Mode>(
  ["expression", "expression", "reverse", "both", "labels", "reference"],
  ["none", "two"],
  4,
);

const patchEntry = fc.oneof(
  {
    weight: 25,
    arbitrary: fc
      .record({
        mode,
        path: field(pathText, 1, 1),
        expression: field(expression, 0, 1),
        reverse: field(expression, 0, 1),
        reference: field(reference, 0, 1),
        labels,
        emptyStrings: fc.boolean(),
        unknown: rarely(fc.constantFrom("Path", "expr", "patches"), 20),
      })
      .map((p) => {
        const entries: [string, Maybe<unknown>][] = [["path", p.path]];
        const expr = p.mode === "expression" || p.mode === "both" || p.mode === "two";
        const rev = p.mode === "reverse" || p.mode === "both";
        if (expr) entries.push(["expression", p.expression]);
        else if (p.emptyStrings) entries.push(["expression", ""]);
        if (rev) entries.push(["reverseExpression", p.reverse]);
        else if (p.emptyStrings) entries.push(["reverseExpression", ""]);
        if (p.mode === "labels" || p.mode === "two") entries.push(["labels", p.labels]);
        if (p.mode === "reference") entries.push(["reference", p.reference]);
        if (p.unknown !== null) entries.push([p.unknown, "x"]);
        return record(entries);
      }),
  },
  { weight: 1, arbitrary: fc.constantFrom<unknown>(null, "path: a", 1, []) },
);
const patchList = fc.oneof(
  { weight: 3, arbitrary: fc.array(patchEntry, { maxLength: 1 }) },
  { weight: 2, arbitrary: fc.array(patchEntry, { minLength: 2, maxLength: 4 }) },
);

const endpoints = fc.oneof(
  { weight: 1, arbitrary: fc.constantFrom<unknown>(null, "enabled", [], 0) },
  {
    weight: 20,
    arbitrary: fc
      .record({
        enabled: field(fc.boolean(), 6, 1),
        patches: field(patchList, 4, 1),
        unknown: rarely(fc.constantFrom("patch", "Enabled", "enable"), 20),
      })
      .map(({ enabled, patches, unknown }) =>
        record([
          ["enabled", enabled],
          ["patches", patches],
          ...(unknown === null ? [] : [[unknown, true] as [string, unknown]]),
        ]),
      ),
  },
);

/** Keys vCluster v0.34's schema refuses that vgate accepts, as other releases have them (EPS-34). */
const OTHER_RELEASES: [string[], string, unknown][] = [
  [[], "sleepMode", {}],
  [[], "external", {}],
  [["sync", "toHost"], "gatewayApi", { enabled: false }],
];

const config = fc
  .record({
    endpoints: field(endpoints, 1, 0),
    toHostNull: fc.nat(40),
    syncNull: fc.nat(40),
    pods: fc.boolean(),
    fromHost: fc.boolean(),
    telemetry: fc.boolean(),
    unknown: rarely(
      fc.tuple(
        fc.constantFrom<string[]>([], ["sync"], ["sync", "toHost"]),
        fc.constantFrom("Sync", "tohost", "ToHost", "Endpoints", "endpoint"),
      ),
      15,
    ),
    otherRelease: rarely(fc.constantFrom(...OTHER_RELEASES), 10),
  })
  .map((c) => {
    const toHost: unknown =
      c.toHostNull === 0
        ? null
        : record([
            ["endpoints", c.endpoints],
            ["pods", c.pods ? { enabled: true } : ABSENT],
          ]);
    const sync: unknown =
      c.syncNull === 0
        ? null
        : record([
            ["toHost", toHost],
            ["fromHost", c.fromHost ? { nodes: { enabled: false } } : ABSENT],
          ]);
    const root: Obj = record([
      ["sync", sync],
      ["telemetry", c.telemetry ? { enabled: false } : ABSENT],
    ]);
    const at = (keys: readonly string[]): Obj | null => {
      let obj: unknown = root;
      for (const k of keys) obj = isObj(obj) ? obj[k] : undefined;
      return isObj(obj) ? obj : null;
    };
    if (c.unknown) {
      const target = at(c.unknown[0]);
      if (target) target[c.unknown[1]] = {};
    }
    let otherRelease: [string[], string] | null = null;
    if (c.otherRelease) {
      const [keys, key, value] = c.otherRelease;
      const target = at(keys);
      if (target) {
        target[key] = value;
        otherRelease = [keys, key];
      }
    }
    return { root, otherRelease };
  });

/** The config as a file: JSON, or block YAML with every string quoted (so no 1.1 surprises). */
function serialise(root: unknown, yaml: boolean): string {
  return yaml
    ? stringifyYaml(root, { version: "1.1", defaultStringType: "QUOTE_DOUBLE" })
    : JSON.stringify(root);
}

/** vgate's typed patches for what Go holds (TranslatePatch with omitempty strings). */
function asPatchSpec(endpoints: GoEndpoints): { enabled: boolean; patches: PatchSpec[] } {
  return {
    enabled: endpoints.enabled,
    patches: endpoints.patches.map((p) => {
      const spec: PatchSpec = { path: p.path };
      if (p.expression !== "") spec.expression = p.expression;
      if (p.reverseExpression !== "") spec.reverseExpression = p.reverseExpression;
      if (p.reference) {
        const ref = p.reference;
        const out: NonNullable<PatchSpec["reference"]> = {
          apiVersion: ref["apiVersion"] ?? "",
          kind: ref["kind"] ?? "",
        };
        for (const k of ["apiVersionPath", "kindPath", "namePath", "namespacePath"] as const) {
          if (ref[k]) out[k] = ref[k];
        }
        spec.reference = out;
      }
      if (p.labels) spec.labels = {};
      return spec;
    }),
  };
}

/** Schema errors on the way to sync.toHost.endpoints or in it: the part vgate checks. */
function onVgatesWay(error: { instancePath: string }): boolean {
  const at = error.instancePath;
  return ["", "/sync", "/sync/toHost"].includes(at) || at.startsWith("/sync/toHost/endpoints");
}

function deleteAt(root: Obj, keys: string[], key: string): Obj {
  const copy = structuredClone(root);
  let obj: unknown = copy;
  for (const k of keys) obj = isObj(obj) ? obj[k] : undefined;
  if (isObj(obj)) Reflect.deleteProperty(obj, key);
  return copy;
}

// ---- the module's example configs --------------------------------------------------------------

interface Example {
  name: string;
  text: string;
}

/** vcluster.yaml files the module ships, plus the value sets of its chart's unit tests. */
function moduleExamples(dir: string): { files: Example[]; chartTestSets: Example[] } {
  const read = (path: string) => readFileSync(join(dir, path), "utf8");
  const list = (sub: string, pattern: RegExp): string[] => {
    try {
      return readdirSync(join(dir, sub), { recursive: true, encoding: "utf8" })
        .filter((f) => pattern.test(f))
        .map((f) => join(sub, f))
        .sort();
    } catch {
      return [];
    }
  };
  const paths = [
    "chart/values.yaml",
    "config/values.yaml",
    ...list("test", /^[^/]*Values\.yaml$/),
    ...list("conformance", /(^|\/)(vcluster|values)\.yaml$/),
    ...list("e2e-next/clusters", /^vcluster-[^/]*\.yaml$/),
  ];
  // The e2e configs are Go templates ({{.Repository}} and such) for image names and host names.
  const files = paths.map((name) => ({ name, text: read(name).replace(/\{\{[^}]*\}\}/g, "x") }));
  const chartTestSets: Example[] = [];
  for (const file of list("chart/tests", /_test\.yaml$/)) {
    const suite: unknown = parseYaml(read(file).replace(/\{\{[^}]*\}\}/g, "x"), { version: "1.1" });
    const tests = isObj(suite) && Array.isArray(suite["tests"]) ? suite["tests"] : [];
    tests.forEach((t: unknown, i) => {
      if (isObj(t) && isObj(t["set"])) {
        chartTestSets.push({ name: `${file} tests[${i}].set`, text: JSON.stringify(t["set"]) });
      }
    });
  }
  return { files, chartTestSets };
}

// ---- the tests ---------------------------------------------------------------------------------

("found" in lookup ? describe : describe.skip)(
  `config: vgate check-config accepts what vCluster${moduleVersion} accepts${SKIP}`,
  function () {
    this.timeout(60_000);
    let oracle: VClusterOracle;
    let dir = "";
    let n = 0;

    before(() => {
      oracle = new VClusterOracle(moduleDir);
      dir = mkdtempSync(join(tmpdir(), "vgate-oracle-"));
    });
    after(() => {
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    async function vgateCheck(text: string) {
      const file = join(dir, `c${n++ % 8}.yaml`);
      writeFileSync(file, text);
      return checkConfigFile(file);
    }

    /** Asserts vgate's answer on `root` against the oracle's; returns both. */
    async function compare(root: Obj, text: string, otherRelease: [string[], string] | null) {
      // Keys of other releases: vCluster v0.34 refuses them, vgate reads past them (EPS-34).
      const judged = otherRelease ? deleteAt(root, ...otherRelease) : root;
      const verdict = oracle.judge(judged);
      if (otherRelease) assert.equal(oracle.judge(root).accepted, false, "v0.34 refuses the key");
      for (const e of verdict.schemaErrors)
        assert.ok(onVgatesWay(e), `off-path error ${e.instancePath}`);
      const endpointsValue = (judged["sync"] as Obj | null)?.["toHost"];
      const exceptions = eps9(isObj(endpointsValue) ? endpointsValue["endpoints"] : undefined);
      const result = await vgateCheck(text);
      const why = () =>
        `config ${text}\nvCluster: ${JSON.stringify(verdict.schemaErrors.map((e) => [e.instancePath, e.message]))} ${verdict.goError}\n` +
        `EPS-9: ${exceptions.join("; ")}\nvgate: ${result.ok ? "OK" : result.problems.join("\n  ")}`;
      assert.equal(result.ok, verdict.accepted && exceptions.length === 0, why());
      // Where vCluster's Go validation refuses, vgate says it in vCluster's words.
      if (!result.ok && verdict.goError && exceptions.length === 0) {
        assert.ok(result.problems.includes(verdict.goError), why());
      }
      // What vgate reads from an accepted config is what vCluster's syncer holds.
      if (result.ok && verdict.endpoints) {
        assert.deepEqual(
          loadVClusterConfig(text, "c.yaml").endpoints,
          asPatchSpec(verdict.endpoints),
        );
      }
      return { verdict, result, exceptions };
    }

    it("the oracle: the chart's defaults pass its schema; vCluster's Go test cases hold", () => {
      assert.equal(oracle.judge({}).accepted, true);
      assert.equal(oracle.judge(oracle.defaults).accepted, true);
      // pkg/config/validation_test.go:684-750 (TestValidateAllSyncPatches), on the same lists.
      const path = "spec.containers[*].name";
      const prefix = {
        path,
        expression: '"my-prefix-"+value',
        reverseExpression: 'value.slice("my-prefix".length)',
      };
      assert.equal(goValidatePatches("sync.toHost.pods", [goPatch(prefix)]), null);
      const split = [
        { path, expression: '"my-prefix-"+value' },
        { path, reverseExpression: 'value.slice("my-prefix".length)' },
      ];
      assert.equal(
        goValidatePatches("sync.toHost.pods", split.map(goPatch)),
        'sync.toHost.pods.patches[0] and sync.toHost.pods.patches[1] have the same path "spec.containers[*].name"',
      );
      const both = {
        sync: { toHost: { pods: { patches: [prefix] }, endpoints: { patches: [prefix] } } },
      };
      assert.equal(oracle.judge(both).accepted, true);
      const twice = { sync: { toHost: { pods: { patches: split } } } };
      assert.match(oracle.judge(twice).goError ?? "", /^sync\.toHost\.pods\.patches\[0\] and/);
      // Helm's coalescing: null drops a default, and the schema judges nulls elsewhere.
      const off: Verdict = oracle.judge({ sync: { toHost: { endpoints: { enabled: null } } } });
      assert.deepEqual([off.accepted, off.endpoints?.enabled], [true, false]);
      assert.equal(
        oracle.judge({ sync: { toHost: { endpoints: { patches: null } } } }).accepted,
        false,
      );
    });

    it("on generated sync.toHost.endpoints configs, vgate accepts exactly what vCluster accepts, but for EPS-9 and EPS-34", async () => {
      const tally = { accepted: 0, schema: 0, go: 0, eps9: 0 };
      await fc.assert(
        fc.asyncProperty(config, fc.boolean(), async ({ root, otherRelease }, yaml) => {
          const { verdict, exceptions } = await compare(root, serialise(root, yaml), otherRelease);
          if (!verdict.accepted) tally[verdict.goError ? "go" : "schema"]++;
          else if (exceptions.length > 0) tally.eps9++;
          else tally.accepted++;
        }),
        { numRuns: 700 },
      );
      // The corpus reaches every kind of verdict, each often enough to mean something.
      for (const count of Object.values(tally)) assert.ok(count >= 25, JSON.stringify(tally));
    });

    it("plain YAML 1.1 scalars mean what go-yaml v2 reads (EPS-34)", async () => {
      // go-yaml v2's resolve.go: its bool and null lists, Go's ParseInt/ParseUint (base 0, `_`
      // removed) and yamlStyleFloat for numbers, everything else a string (timestamps included).
      const TOKENS: [string, unknown][] = [
        ...["yes", "Yes", "YES", "y", "Y", "on", "On", "ON", "true", "True", "TRUE"].map(
          (t): [string, unknown] => [t, true],
        ),
        ...["no", "No", "NO", "n", "N", "off", "Off", "OFF", "false", "False", "FALSE"].map(
          (t): [string, unknown] => [t, false],
        ),
        ...["~", "null", "Null", "NULL", ""].map((t): [string, unknown] => [t, null]),
        ...([
          ["0", 0],
          ["-1", -1],
          ["+1", 1],
          ["017", 15],
          ["08", 8],
          ["0x1F", 31],
          ["0o17", 15],
          ["0b101", 5],
          ["1_000", 1000],
          ["1e3", 1000],
          ["1E-3", 0.001],
          ["1.", 1],
          [".5", 0.5],
          ["+.inf", Infinity],
          ["-.Inf", -Infinity],
          [".NaN", NaN],
          ["99999999999999999999", 1e20],
        ] as [string, number][]),
        ...[
          "0xFFFFFFFFFFFFFFFFFF",
          "1e400",
          "yesno",
          "O",
          "t",
          "nil",
          "e3",
          "inf",
          "0x",
          "._5",
          "1:20",
          "2001-12-14",
          "2001-12-14t21:59:43.10-05:00",
          "v1",
          "<<",
        ].map((t): [string, unknown] => [t, t]),
      ];
      const POSITIONS: [string, (v: unknown) => Obj][] = [
        ["enabled", (v) => ({ enabled: v })],
        ["path", (v) => ({ patches: [{ path: v, expression: "value" }] })],
        [
          "apiVersion",
          (v) => ({ patches: [{ path: "a", reference: { apiVersion: v, kind: "Secret" } }] }),
        ],
        ["kind", (v) => ({ patches: [{ path: "a", reference: { apiVersion: "v1", kind: v } }] })],
      ];
      const yamlOf = (position: string, token: string): string => {
        const t = token === "" ? "" : ` ${token}`;
        const head = "sync:\n  toHost:\n    endpoints:\n";
        if (position === "enabled") return `${head}      enabled:${t}\n`;
        const patch =
          position === "path"
            ? `        - path:${t}\n          expression: value\n`
            : `        - path: a\n          reference:\n            ${position === "kind" ? "apiVersion: v1" : "kind: Secret"}\n            ${position}:${t}\n`;
        return `${head}      patches:\n${patch}`;
      };
      let accepted = 0;
      for (const [token, value] of TOKENS) {
        for (const [position, endpointsOf] of POSITIONS) {
          const root = { sync: { toHost: { endpoints: endpointsOf(value) } } };
          const { result } = await compare(root, yamlOf(position, token), null);
          if (result.ok) accepted++;
        }
      }
      assert.ok(accepted >= 40, `accepted ${accepted}`);
    });

    it("EPS-34: where vgate and vCluster differ on purpose", async () => {
      const endpoints = "sync: {toHost: {endpoints: {patches: [{path: a, expression: value}]}}}\n";
      // An empty file: all defaults to vCluster, almost always the wrong file to vgate.
      assert.equal(oracle.judge(null).accepted, true);
      assert.equal((await vgateCheck("# nothing\n")).ok, false);
      // A duplicate key: go-yaml v2's non-strict decoding (helm's) keeps the last one.
      assert.equal(
        oracle.judge({ sync: { toHost: { endpoints: { enabled: false } } } }).accepted,
        true,
      );
      assert.equal(
        (await vgateCheck("sync: {toHost: {endpoints: {enabled: true, enabled: false}}}")).ok,
        false,
      );
      // Several documents: go-yaml v2 decodes the first and never reads the rest.
      assert.equal(oracle.judge(parseYaml(endpoints, { version: "1.1" })).accepted, true);
      assert.equal((await vgateCheck(endpoints)).ok, true);
      assert.equal(
        (await vgateCheck(`${endpoints}---\nsync: {toHost: {endpoints: {}}}\n`)).ok,
        false,
      );
      // Off vgate's way: a section v0.34's schema refuses is not vgate's to judge.
      const offPath = { controlPlane: { distro: { k8s: { apiServer: { image: {} } } } } };
      const verdict = oracle.judge(offPath);
      assert.equal(verdict.accepted, false);
      assert.ok(verdict.schemaErrors.every((e) => !onVgatesWay(e)));
      assert.equal(
        (await vgateCheck(`${endpoints}controlPlane: {distro: {k8s: {apiServer: {image: {}}}}}\n`))
          .ok,
        true,
      );
    });

    it("vCluster's example configs in the module load in vgate check-config", async () => {
      const { files, chartTestSets } = moduleExamples(moduleDir);
      assert.ok(files.length >= 20, `${files.length} example files`);
      assert.ok(chartTestSets.length >= 100, `${chartTestSets.length} chart test value sets`);
      const withPatches = [...files, ...chartTestSets].filter((e) => /\bpatches\b/.test(e.text));
      assert.ok(withPatches.length >= 3, `${withPatches.length} examples with patches`);
      const offPathRefusals: string[] = [];
      for (const example of [...files, ...chartTestSets]) {
        const result = await vgateCheck(example.text);
        assert.ok(result.ok, `${example.name}: ${result.ok ? "" : result.problems.join("; ")}`);
        const verdict = oracle.judge(parseYaml(example.text, { version: "1.1" }));
        if (verdict.accepted) continue;
        // v0.34 refuses a few older configs, always off vgate's way (EPS-34).
        assert.equal(verdict.goError, null, example.name);
        assert.ok(
          verdict.schemaErrors.every((e) => !onVgatesWay(e)),
          example.name,
        );
        offPathRefusals.push(example.name);
      }
      assert.ok(offPathRefusals.length < files.length / 2, offPathRefusals.join(", "));
    });

    it("the vgate command says the same on the module's examples and on a few configs", () => {
      const run = (file: string) =>
        spawnSync(bin, ["check-config", file], { encoding: "utf8", timeout: 20_000 });
      for (const name of ["chart/values.yaml", "test/commonValues.yaml"]) {
        const r = run(join(moduleDir, name));
        assert.deepEqual([r.status, r.stdout, r.stderr], [0, "OK\n", ""], name);
      }
      const rendered = join(dir, "vcluster-default.yaml");
      const e2e = readFileSync(join(moduleDir, "e2e-next/clusters/vcluster-default.yaml"), "utf8");
      writeFileSync(rendered, e2e.replace(/\{\{[^}]*\}\}/g, "x"));
      assert.equal(run(rendered).status, 0, relative(dir, rendered));
      const cases: [string, number, string][] = [
        [
          "sync: {toHost: {endpoints: {enabled: yes, patches: [{path: a, expression: value}]}}}",
          0,
          "",
        ],
        [
          "sync: {toHost: {endpoints: {patches: [{path: a, expression: value, labels: {}}]}}}",
          1,
          "sync.toHost.endpoints.patches[0] can only use one of: expression, labels or reference\n",
        ],
        [
          "sync: {toHost: {endpoints: {patches: ~}}}",
          1,
          "sync.toHost.endpoints.patches: must be an array, got null\n",
        ],
        [
          "sync: {toHost: {endpoints: {patches: [{path: metadata.name, expression: value}]}}}",
          1,
          'sync.toHost.endpoints.patches[0].path: "metadata.name" is not a valid patch path: metadata.name and metadata.namespace are never in an update change set\n',
        ],
      ];
      for (const [text, status, stderr] of cases) {
        const file = join(dir, "cli.yaml");
        writeFileSync(file, text);
        const r = run(file);
        assert.deepEqual([r.status, r.stderr], [status, stderr], text);
        const verdict = oracle.judge(parseYaml(text, { version: "1.1" }));
        assert.equal(verdict.accepted, status === 0 || text.includes("metadata.name"), text);
      }
    });
  },
);
