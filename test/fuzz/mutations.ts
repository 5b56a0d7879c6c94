// Structure-aware mutations as fast-check arbitraries: a valid body (bodies.ts) with keys planted in
// it (keys.ts) and then none or a few fields dropped, duplicated, retyped, made huge, nested deep,
// filled with odd unicode, given __proto__ keys or numbers out of range, or a wrong apiVersion/kind;
// plus bodies of random bytes, wrong content types and methods, and a body sent to another route
// now and then. Each request also picks the vgate it goes to (targets.ts) and the client
// certificate it presents (identities.ts).

import fc from "fast-check";
import { fuzzBases, ROUTES, type Base, type Route } from "./bodies.js";
import { IDENTITIES, TRUSTED, type Identity } from "./identities.js";
import { keyPlans, plantKeys, type KeyPlan } from "./keys.js";
import type { Target } from "./targets.js";
import {
  fromJson,
  nodeAt,
  Obj,
  parentOf,
  paths,
  Raw,
  replaceAt,
  toText,
  type Node,
} from "./json-tree.js";

/** One generated request. */
export interface FuzzInput {
  /** The base body's name, or "random bytes". */
  from: string;
  /** The vgate it goes to. */
  target: Target;
  /** The client certificate it presents. */
  identity: Identity;
  route: Route;
  method: string;
  contentType: string | undefined;
  body: Buffer;
  /** What was done to the base, for the failure report. */
  mutations: string[];
  /** The keys planted in the base; absent when the base carries none. */
  plan?: KeyPlan;
  /** The plaintext keys planted in it, wherever they are (the judge picks those vgate can know). */
  keys: string[];
  /** The base with its keys, unmutated, sent as kube-apiserver sends it (POST, JSON, its route). */
  wellFormed: boolean;
  /**
   * A /validate request whose object is what vgate's /mutate admitted, as kube-apiserver sends it
   * next; made by the judge (outcome.ts).
   */
  admitted?: boolean;
}

type Mutation = { kind: string; pick: number; value: Node };

const OUT_OF_RANGE = [
  "1e400",
  "-1e400",
  "9007199254740993",
  "-9223372036854775809",
  "18446744073709551616",
  "123456789012345678901234567890.5",
  "-0",
  "1E+2",
  "0.1e-400",
  "NaN",
  "Infinity",
  "0x10",
  "01",
].map((t) => new Raw(t));

const WRONG_VERSIONS = [
  "admission.k8s.io/v1beta1",
  "admission.k8s.io/v2",
  "authentication.k8s.io/v1",
  "authentication.k8s.io/v1beta1",
  "authorization.k8s.io/v1",
  "authorization.k8s.io/v1beta1",
  "v1",
  "",
  "ADMISSION.K8S.IO/V1",
];
const WRONG_KINDS = [
  "AdmissionReview",
  "TokenReview",
  "SubjectAccessReview",
  "Status",
  "",
  "admissionreview",
];

const scalar: fc.Arbitrary<Node> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double({ noDefaultInfinity: true, noNaN: true }),
  fc.string({ maxLength: 20 }),
);

const oddString = fc.oneof(
  fc.string({ unit: "binary", maxLength: 64 }),
  fc.constantFrom("\u0000", "\ud800", "\udfff", "\u202e", "\ufeff", "é", "e\u0301", "𝔘", "\u2028"),
);

/** `values` with weights: mostly the first, rarely the last. */
function weightedConstants<T>(...values: [T, number][]): fc.Arbitrary<T> {
  return fc.oneof(...values.map(([v, weight]) => ({ weight, arbitrary: fc.constant(v) })));
}

// Sizes around the body limit (3 MiB) are rare: each costs megabytes on the wire.
const hugeString = weightedConstants<number>(
  [10_000, 8],
  [100_000, 3],
  [1 << 20, 1],
  [(3 << 20) - 200, 1],
  [4 << 20, 1],
).chain((n) => fc.constantFrom("A", "ü", "\\", "\u0000").map((c) => c.repeat(n / c.length)));

const deep = fc.tuple(
  weightedConstants<number>([64, 4], [1000, 3], [10_000, 2], [100_000, 1], [1_000_000, 1]),
  fc.boolean(),
);

function mutation(kind: string, value: fc.Arbitrary<Node>, weight: number) {
  return { weight, arbitrary: fc.record({ kind: fc.constant(kind), pick: fc.nat(), value }) };
}

const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  mutation("drop", fc.constant(null), 10),
  mutation("duplicate", scalar, 6),
  mutation("retype", fc.oneof(scalar, fc.constant<Node>([]), fc.constant<Node>(new Obj([]))), 14),
  mutation("huge string", hugeString, 1),
  mutation(
    "deep nesting",
    deep.map(([d, obj]) => new Raw(`${d}:${obj ? "o" : "a"}`)),
    1,
  ),
  mutation("unicode", oddString, 8),
  mutation(
    "__proto__",
    fc.constantFrom("__proto__", "constructor", "prototype", "toString", "hasOwnProperty"),
    6,
  ),
  mutation("number out of range", fc.constantFrom(...OUT_OF_RANGE), 6),
  mutation("apiVersion", fc.constantFrom(...WRONG_VERSIONS), 4),
  mutation("kind", fc.constantFrom(...WRONG_KINDS), 2),
);

/** Applies `m` to the tree (in place where it can); returns the root and what was done. */
export function applyMutation(root: Node, given: Mutation): { root: Node; what: string } {
  // Generated values are shared with fast-check's shrinker: never mutate them.
  const m = { ...given, value: clone(given.value) };
  const all = paths(root);
  const path = all[m.pick % all.length]!;
  const where = path.join(".") || "(root)";
  const target = nodeAt(root, path);
  switch (m.kind) {
    case "drop":
      return { root: drop(root, path), what: `drop ${where}` };
    case "duplicate":
      return { root: duplicate(root, path, m.value), what: `duplicate ${where}` };
    case "deep nesting": {
      const [depth, shape] = String((m.value as Raw).text).split(":");
      const d = Number(depth);
      const [open, close] = shape === "o" ? ['{"a":', "}"] : ["[", "]"];
      const text = `${open.repeat(d)}${toText(target)}${close.repeat(d)}`;
      return { root: replaceAt(root, path, new Raw(text)), what: `nest ${where} ${d} deep` };
    }
    case "__proto__":
      return {
        root: protoKey(root, path, m.value as string),
        what: `${String(m.value)} key at ${where}`,
      };
    case "apiVersion":
    case "kind":
      return { root: setTop(root, m.kind, m.value), what: `${m.kind} ${JSON.stringify(m.value)}` };
    default:
      return { root: replaceAt(root, path, m.value), what: `${m.kind} at ${where}` };
  }
}

function clone(n: Node): Node {
  if (n instanceof Obj) return new Obj(n.entries.map(([k, v]) => [k, clone(v)]));
  return Array.isArray(n) ? n.map(clone) : n;
}

function drop(root: Node, path: (string | number)[]): Node {
  const at = parentOf(root, path);
  if (!at) return new Raw("");
  if (at.parent instanceof Obj) at.parent.entries.splice(at.index, 1);
  else at.parent.splice(at.index, 1);
  return root;
}

/** A repeated key (the same key twice in one object) or a repeated array element. */
function duplicate(root: Node, path: (string | number)[], other: Node): Node {
  const at = parentOf(root, path);
  if (!at) return new Raw(`${toText(root)}${toText(root)}`);
  if (at.parent instanceof Obj) {
    const [k, v] = at.parent.entries[at.index]!;
    at.parent.entries.splice(at.index + 1, 0, [k, other], [k, v]);
  } else at.parent.splice(at.index, 0, at.parent[at.index]!);
  return root;
}

/** Adds `key` (holding a small object) to the object at or above `path`. */
function protoKey(root: Node, path: (string | number)[], key: string): Node {
  for (let p = path; ; p = p.slice(0, -1)) {
    const n = nodeAt(root, p);
    if (n instanceof Obj) {
      n.entries.push([
        key,
        new Obj([
          ["polluted", true],
          ["allowed", true],
          ["uid", "x"],
        ]),
      ]);
      return root;
    }
    if (p.length === 0) return root;
  }
}

function setTop(root: Node, field: string, value: Node): Node {
  if (!(root instanceof Obj)) return root;
  const entry = root.entries.find(([k]) => k === field);
  if (entry) entry[1] = value;
  else root.entries.unshift([field, value]);
  return root;
}

const CONTENT_TYPES = [
  "application/json",
  "application/json; charset=utf-8",
  "application/json; charset=utf-16",
  "Application/JSON",
  "application/merge-patch+json",
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/vnd.kubernetes.protobuf",
  "application/yaml",
];

/** Mostly the base's own route and POST with JSON; sometimes another route, method or type. */
function envelope(base: Route) {
  return fc.record({
    route: fc.oneof(
      { weight: 19, arbitrary: fc.constant(base) },
      { weight: 1, arbitrary: fc.constantFrom(...ROUTES) },
    ),
    method: fc.oneof(
      { weight: 49, arbitrary: fc.constant("POST") },
      { weight: 1, arbitrary: fc.constantFrom("GET", "PUT", "PATCH", "DELETE") },
    ),
    contentType: fc.oneof(
      { weight: 24, arbitrary: fc.constant<string | undefined>("application/json") },
      { weight: 1, arbitrary: fc.constantFrom<string | undefined>(undefined, ...CONTENT_TYPES) },
    ),
  });
}

/** Mostly the rig's own vgate and the hashed one; the unsynced one answers little else than 503. */
const targets: fc.Arbitrary<Target> = fc.oneof(
  { weight: 2, arbitrary: fc.constant("plain" as const) },
  { weight: 2, arbitrary: fc.constant("hashed" as const) },
  { weight: 1, arbitrary: fc.constant("unsynced" as const) },
);

/** Three in four requests present kube-apiserver's certificate; the rest one of the others. */
const identities: fc.Arbitrary<Identity> = fc.oneof(
  { weight: 12, arbitrary: fc.constant(TRUSTED) },
  { weight: 4, arbitrary: fc.constantFrom(...IDENTITIES.filter((i) => i !== TRUSTED)) },
);

/** One in four bodies goes unmutated: what a real caller sends, judged against the README. */
const mutationLists = fc.oneof(
  { weight: 1, arbitrary: fc.constant<Mutation[]>([]) },
  { weight: 3, arbitrary: fc.array(mutationArb, { minLength: 1, maxLength: 4 }) },
);

function mutated(base: Base): fc.Arbitrary<FuzzInput> {
  return fc
    .tuple(targets, identities, keyPlans, envelope(base.route), mutationLists)
    .map(([target, identity, plan, env, ms]) => {
      const planted = plantKeys(base, plan);
      let root = fromJson(planted.body);
      const mutations = ms.map((m) => {
        const r = applyMutation(root, m);
        root = r.root;
        return r.what;
      });
      const wellFormed =
        ms.length === 0 &&
        env.route === base.route &&
        env.method === "POST" &&
        env.contentType === "application/json";
      return {
        from: base.name,
        target,
        identity,
        ...env,
        body: Buffer.from(toText(root), "utf8"),
        mutations,
        ...(planted.planted ? { plan } : {}),
        keys: planted.plaintexts,
        wellFormed,
      };
    });
}

const randomBytes: fc.Arbitrary<FuzzInput> = fc
  .tuple(
    targets,
    identities,
    fc.constantFrom(...ROUTES),
    fc.oneof(
      fc.uint8Array({ maxLength: 2048 }),
      fc.string({ unit: "binary", maxLength: 512 }).map((s) => Buffer.from(s)),
    ),
    fc.constantFrom<string | undefined>("application/json", undefined, ...CONTENT_TYPES),
  )
  .map(([target, identity, route, bytes, contentType]) => ({
    from: "random bytes",
    target,
    identity,
    route,
    method: "POST",
    contentType,
    body: Buffer.from(bytes),
    mutations: [],
    keys: [],
    wellFormed: false,
  }));

/** Requests to fuzz vgate with: nine in ten structure-aware mutations of valid bodies. */
export function fuzzInputs(): fc.Arbitrary<FuzzInput> {
  const bases = fuzzBases();
  return fc.oneof(
    { weight: 9, arbitrary: fc.oneof(...bases.map(mutated)) },
    { weight: 1, arbitrary: randomBytes },
  );
}
