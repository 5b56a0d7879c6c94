// The files in manifests/, loaded as they are: the OwnedAccessKey CRD (structural schema, every
// field of the product document, printer columns) and vgate's webhook configurations (paths vgate
// serves, rules that reach it).

import assert from "node:assert/strict";
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import addFormats from "ajv-formats";
import { parseAllDocuments } from "yaml";
import {
  ACCESS_KEY_TYPES,
  KIND,
  PLURAL,
  SECRET_FIELD_NAMES,
  VERSION,
  resourceIdentity,
  type OwnedAccessKeySpec,
  type OwnedAccessKeyStatus,
} from "../../webhook/src/api/ownedaccesskey.js";
import { REQUEST_TARGETS } from "../../webhook/src/accesskeys/policy-rules.js";
import { startServe, type StartedServe } from "../../webhook/src/cli/serve-runtime.js";
import { createLogger } from "../../webhook/src/server/logger.js";
import { startApiServer, type TestApiServer } from "../support/apiserver/index.js";
import { repoFile } from "../support/fixtures.js";
import { postJson } from "../support/https-client.js";
import { accessKey, review } from "../support/reviews.js";
import { structuralSchemaErrors } from "./structural-schema.js";

type Json = Record<string, unknown>;

const IDENTITY = resourceIdentity();

/** Every YAML document of a manifest text, failing on any YAML error. */
function parseManifests(text: string, name: string): Json[] {
  const docs = parseAllDocuments(text);
  assert.ok(Array.isArray(docs), `${name}: no documents`);
  return docs.map((doc, i) => {
    assert.deepEqual(doc.errors, [], `${name}: YAML errors in document ${i}`);
    return doc.toJS() as Json;
  });
}

const manifestText = (name: string): string => repoFile(`manifests/${name}`);
const loadManifests = (name: string): Json[] => parseManifests(manifestText(name), name);

const obj = (v: unknown): Json => {
  assert.ok(typeof v === "object" && v !== null && !Array.isArray(v), `not an object: ${v}`);
  return v as Json;
};
const list = (v: unknown): unknown[] => {
  assert.ok(Array.isArray(v), `not a list: ${JSON.stringify(v)}`);
  return v;
};

// --- the CRD -------------------------------------------------------------------------------------

const [crd, ...extraCrdDocs] = loadManifests("crd-ownedaccesskeys.yaml");
const crdSpec = obj(crd?.spec);
const crdVersions = list(crdSpec.versions).map(obj);
const crdVersion = obj(crdVersions[0]);
const schema = obj(obj(crdVersion.schema).openAPIV3Schema);
const columns = list(crdVersion.additionalPrinterColumns).map(obj);

/** kube's CRD handler uses its own formats; ajv-formats has the same names for the ones we use. */
function compile(s: Json): ValidateFunction {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats.default(ajv, ["date-time", "byte", "int64"]);
  for (const keyword of [
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-int-or-string",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-list-type",
    "x-kubernetes-map-type",
    "x-kubernetes-validations",
  ]) {
    ajv.addKeyword(keyword);
  }
  return ajv.compile(s);
}

const validate = compile(schema);

function errorsOf(value: unknown): ErrorObject[] {
  return validate(value) ? [] : (validate.errors ?? []);
}

function assertValid(value: unknown, what: string): void {
  assert.deepEqual(errorsOf(value), [], `${what} should pass the CRD schema`);
}

/** Asserts the schema rejects `value`, with an error at `instancePath` (e.g. `/spec/ttl`). */
function assertRejectedAt(value: unknown, instancePath: string): void {
  const errors = errorsOf(value);
  assert.ok(errors.length > 0, `expected a schema error at ${instancePath}`);
  const paths = errors.map((e) => e.instancePath);
  assert.ok(paths.includes(instancePath), `error paths ${JSON.stringify(paths)}`);
}

/** The same schema, closed: every object with `properties` refuses unknown fields (metadata and
 * maps have none, so they stay open). */
function closed(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(closed);
  if (typeof node !== "object" || node === null) return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node)) {
    out[k] = k === "properties" ? mapValues(obj(v), closed) : closed(v);
  }
  if (out.properties !== undefined) out.additionalProperties = false;
  return out;
}

function mapValues(o: Json, f: (v: unknown) => unknown): Json {
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, f(v)]));
}

/** Dotted paths of every schema leaf under a node (`[]` for items, `{}` for map values). */
function schemaLeaves(node: Json, path: string): string[] {
  if (node.properties !== undefined) {
    return Object.entries(obj(node.properties)).flatMap(([k, v]) =>
      schemaLeaves(obj(v), `${path}.${k}`),
    );
  }
  if (node.items !== undefined) return schemaLeaves(obj(node.items), `${path}[]`);
  if (typeof node.additionalProperties === "object") {
    return schemaLeaves(obj(node.additionalProperties), `${path}{}`);
  }
  return [path];
}

/** The same paths for a value; map values are found through `mapPaths`. */
function valueLeaves(value: unknown, path: string, mapPaths: ReadonlySet<string>): string[] {
  if (Array.isArray(value)) {
    return [...new Set(value.flatMap((v) => valueLeaves(v, `${path}[]`, mapPaths)))];
  }
  if (typeof value === "object" && value !== null) {
    if (mapPaths.has(path)) {
      return [
        ...new Set(Object.values(value).flatMap((v) => valueLeaves(v, `${path}{}`, mapPaths))),
      ];
    }
    return Object.entries(value).flatMap(([k, v]) => valueLeaves(v, `${path}.${k}`, mapPaths));
  }
  return [path];
}

/** Every field required, all the way down, so the compiler lists any field the fixture lacks. */
type DeepRequired<T> = T extends (infer U)[]
  ? DeepRequired<U>[]
  : T extends object
    ? { [K in keyof T]-?: DeepRequired<NonNullable<T[K]>> }
    : NonNullable<T>;

const RULE: DeepRequired<NonNullable<OwnedAccessKeySpec["rules"]>>[number] = {
  verbs: ["get", "list"],
  resources: [{ group: "", resources: ["pods", "pods/log"], resourceNames: ["web"] }],
  namespaces: ["default", ""],
  nonResourceURLs: ["/healthz", "/metrics/*"],
  requestTargets: ["Management", "Cluster"],
  cluster: "prod",
  virtualClusters: [{ name: "vc1", namespace: "team-a" }],
};

/** An OwnedAccessKey that sets every field of the TypeScript types (and so of section 2.2). */
const FULL_SPEC: DeepRequired<OwnedAccessKeySpec> = {
  displayName: "CI pipeline",
  description: "deploys from CI",
  user: "alice",
  team: "platform",
  subject: "loft:metrics-writer:p-default:my-vcluster",
  groups: ["loft:system:metrics-writers"],
  key: "4q6bYp0kVvQy8t1Jm2cZrW3xN5sD7fGhK9LqA0eUoIw",
  disabled: false,
  ttl: 1728000,
  ttlAfterLastActivity: true,
  scope: {
    roles: [{ role: "vcluster", projects: ["default"], virtualClusters: ["*"] }],
    projects: [{ project: "default" }],
    spaces: [{ project: "default", space: "*" }],
    virtualClusters: [{ project: "default", virtualCluster: "my-vcluster" }],
    clusters: [{ cluster: "*" }],
    rules: [RULE],
    allowLoftCli: true,
  },
  rules: [RULE],
  allowLoftCli: true,
  type: "User",
  identity: {
    userId: "0a1b2c",
    username: "alice",
    preferredUsername: "Alice",
    email: "alice@example.com",
    emailVerified: true,
    groups: ["developers"],
    connector: "github",
    connectorData: Buffer.from("opaque connector data").toString("base64"),
    extraClaims: { department: "engineering" },
  },
  identityRefresh: "2025-01-01T00:00:00Z",
  oidcProvider: {
    clientId: "kubectl",
    nonce: "n-0S6_WzA2Mj",
    redirectUri: "http://localhost:8000/callback",
    scopes: "openid profile email",
  },
  parent: "alice-login",
  oidcLogin: {
    idToken: Buffer.from("id-token").toString("base64"),
    accessToken: Buffer.from("access-token").toString("base64"),
    refreshToken: Buffer.from("refresh-token").toString("base64"),
    lastRefresh: "2025-01-01T00:00:00Z",
  },
};
const FULL_STATUS: DeepRequired<OwnedAccessKeyStatus> = { lastActivity: "2025-01-02T03:04:05Z" };

function fullKey(): Json {
  return {
    apiVersion: IDENTITY.apiVersion,
    kind: KIND,
    metadata: { name: "full" },
    spec: structuredClone(FULL_SPEC),
    status: { ...FULL_STATUS },
  };
}

/** Section 2.2: "the example object sets only metadata.name, spec.displayName, spec.ttl, spec.type,
 * spec.user, an empty status, and a null metadata.creationTimestamp". */
const PRODUCT_EXAMPLE: Json = {
  apiVersion: "management.loft.sh/v1",
  kind: "OwnedAccessKey",
  metadata: { name: "my-access-key", creationTimestamp: null },
  spec: { displayName: "my-access-key", ttl: 1728000, type: "User", user: "admin" },
  status: {},
};

/** Walks a printer column's simple JSONPath (`.spec.ttl`) through the schema. */
function schemaAt(path: string): Json | undefined {
  let node: Json | undefined = schema;
  for (const step of path.replace(/^\./, "").split(".")) {
    const props: unknown = node?.properties;
    node =
      typeof props === "object" && props !== null ? ((props as Json)[step] as Json) : undefined;
  }
  return node;
}

/** ObjectMeta fields kube serves for every custom resource (metadata is not in the CRD schema). */
const OBJECT_META_TIMESTAMPS = ["creationTimestamp", "deletionTimestamp"];

describe("manifests/crd-ownedaccesskeys.yaml", () => {
  it("is one CustomResourceDefinition for management.loft.sh/v1 ownedaccesskeys", () => {
    assert.equal(extraCrdDocs.length, 0);
    assert.equal(crd?.apiVersion, "apiextensions.k8s.io/v1");
    assert.equal(crd?.kind, "CustomResourceDefinition");
    // kube: metadata.name "must be spec.names.plural+\".\"+spec.group".
    assert.equal(obj(crd?.metadata).name, `${PLURAL}.${IDENTITY.group}`);
    assert.equal(crdSpec.group, IDENTITY.group);
    assert.equal(crdSpec.scope, "Cluster");
    const names = obj(crdSpec.names);
    assert.equal(names.kind, KIND);
    assert.equal(names.listKind, `${KIND}List`);
    assert.equal(names.plural, PLURAL);
    assert.equal(names.singular, "ownedaccesskey");
    for (const short of list(names.shortNames)) assert.match(String(short), /^[a-z0-9]+$/);
  });

  it("serves and stores exactly v1, with the status subresource", () => {
    assert.equal(crdVersions.length, 1);
    assert.equal(crdVersion.name, VERSION);
    assert.equal(crdVersion.served, true);
    assert.equal(crdVersion.storage, true);
    assert.deepEqual(obj(crdVersion.subresources).status, {});
    assert.equal(crdSpec.preserveUnknownFields ?? false, false);
  });

  it("has a structural schema, as kube requires before it serves the CRD", () => {
    assert.deepEqual(structuralSchemaErrors(schema), []);
  });

  it("restricts spec.type to the AccessKeyType values the webhook accepts", () => {
    assert.deepEqual(schemaAt(".spec.type")?.enum, [...ACCESS_KEY_TYPES]);
  });

  it("declares every field of the OwnedAccessKey types, and no other", () => {
    // Unknown fields are pruned by kube, so a field missing here would be dropped silently.
    const strict = compile(obj(closed(schema)));
    const full = fullKey();
    assert.ok(strict(full), JSON.stringify(strict.errors));
    const fromSchema = schemaLeaves(schema, "").filter(
      (p) => !/^\.(apiVersion|kind|metadata)$/.test(p),
    );
    const maps = new Set(fromSchema.filter((p) => p.endsWith("{}")).map((p) => p.slice(0, -2)));
    const fromObject = valueLeaves({ spec: full.spec, status: full.status }, "", maps);
    assert.deepEqual([...fromObject].sort(), [...fromSchema].sort());
  });

  it("gives spec.rules and spec.scope.rules the same AccessKeyScopeRule schema", () => {
    assert.deepEqual(schemaAt(".spec.rules")?.items, schemaAt(".spec.scope.rules")?.items);
  });

  it("types ttl as int64 and timestamps as date-time, and []byte secrets as base64", () => {
    assert.deepEqual(schemaAt(".spec.ttl"), {
      ...schemaAt(".spec.ttl"),
      type: "integer",
      format: "int64",
    });
    for (const p of [
      ".spec.identityRefresh",
      ".spec.oidcLogin.lastRefresh",
      ".status.lastActivity",
    ]) {
      assert.equal(schemaAt(p)?.format, "date-time", p);
    }
    for (const p of [
      ".spec.identity.connectorData",
      ".spec.oidcLogin.idToken",
      ".spec.oidcLogin.accessToken",
      ".spec.oidcLogin.refreshToken",
    ]) {
      assert.equal(schemaAt(p)?.format, "byte", p);
    }
  });

  it("documents the requestTargets the webhook accepts", () => {
    const items = obj(obj(schemaAt(".spec.rules")?.items).properties).requestTargets;
    const description = String(obj(items).description);
    for (const target of REQUEST_TARGETS) assert.ok(description.includes(target), target);
  });

  describe("compiled with ajv", () => {
    it("accepts the product document's example object", () => {
      assertValid(PRODUCT_EXAMPLE, "the section 2.2 example");
    });

    it("accepts the object of webhook/examples/admission-review.json", () => {
      const example = JSON.parse(repoFile("webhook/examples/admission-review.json")) as Json;
      assertValid(obj(example.request).object, "admission-review.json's object");
    });

    it("accepts the objects the test helpers build", () => {
      assertValid(accessKey("k1"), "accessKey('k1')");
      assertValid(accessKey("k2", { ttl: 0, disabled: true, groups: [] }), "a disabled key");
      assertValid(
        accessKey(
          "k3",
          { scope: { roles: [{ role: "loft-cli" }] }, type: "" },
          { labels: { a: "b" } },
        ),
        "a scoped key",
      );
      assertValid(obj(review({ name: "k4" }).request).object, "review()'s object");
    });

    it("accepts an object that sets every field", () => {
      assertValid(fullKey(), "the full key");
    });

    it("rejects ttl as a string, a fraction or a boolean", () => {
      // The range (non-negative, at most 2^53-1) is the webhook's check, not the schema's.
      assertRejectedAt(accessKey("k", { ttl: "3600" }), "/spec/ttl");
      assertRejectedAt(accessKey("k", { ttl: 1.5 }), "/spec/ttl");
      assertRejectedAt(accessKey("k", { ttl: true }), "/spec/ttl");
    });

    it("rejects a type outside the enum", () => {
      assertRejectedAt(accessKey("k", { type: "Admin" }), "/spec/type");
      assertRejectedAt(accessKey("k", { type: "user" }), "/spec/type");
    });

    it("rejects scope lists that are not arrays of objects", () => {
      assertRejectedAt(
        accessKey("k", { scope: { projects: { project: "p" } } }),
        "/spec/scope/projects",
      );
      assertRejectedAt(accessKey("k", { scope: { clusters: ["c1"] } }), "/spec/scope/clusters/0");
      assertRejectedAt(
        accessKey("k", { scope: { roles: [{ role: "vcluster", projects: "default" }] } }),
        "/spec/scope/roles/0/projects",
      );
    });

    it("rejects wrong types in the other fields", () => {
      assertRejectedAt(accessKey("k", { disabled: "true" }), "/spec/disabled");
      assertRejectedAt(accessKey("k", { groups: "developers" }), "/spec/groups");
      assertRejectedAt(accessKey("k", { key: 42 }), "/spec/key");
      assertRejectedAt(accessKey("k", { rules: [{ verbs: "get" }] }), "/spec/rules/0/verbs");
      assertRejectedAt(
        accessKey("k", { scope: { rules: [{ resources: [{ resources: "pods" }] }] } }),
        "/spec/scope/rules/0/resources/0/resources",
      );
      assertRejectedAt(
        accessKey("k", { identity: { extraClaims: { n: 1 } } }),
        "/spec/identity/extraClaims/n",
      );
      assertRejectedAt(
        accessKey("k", { identity: { emailVerified: "yes" } }),
        "/spec/identity/emailVerified",
      );
      assertRejectedAt(accessKey("k", { oidcProvider: "kubectl" }), "/spec/oidcProvider");
      assertRejectedAt({ ...accessKey("k"), spec: "x" }, "/spec");
      assertRejectedAt({ ...accessKey("k"), status: { lastActivity: 5 } }, "/status/lastActivity");
    });

    it("rejects timestamps that are not RFC 3339 and []byte fields that are not base64", () => {
      assertRejectedAt(
        { ...accessKey("k"), status: { lastActivity: "yesterday" } },
        "/status/lastActivity",
      );
      assertRejectedAt(accessKey("k", { identityRefresh: "2025-01-01" }), "/spec/identityRefresh");
      assertRejectedAt(
        accessKey("k", { identity: { connectorData: "not base64!" } }),
        "/spec/identity/connectorData",
      );
      assertRejectedAt(
        accessKey("k", { oidcLogin: { idToken: "%%%" } }),
        "/spec/oidcLogin/idToken",
      );
    });
  });

  describe("printer columns", () => {
    it("use kube's column types and point at fields of the schema or of ObjectMeta", () => {
      const kinds = ["integer", "number", "string", "boolean", "date"];
      for (const column of columns) {
        const path = String(column.jsonPath);
        assert.ok(kinds.includes(String(column.type)), `${column.name}: type ${column.type}`);
        assert.match(path, /^(\.[A-Za-z][A-Za-z0-9]*)+$/, `${column.name}: a simple JSONPath`);
        const meta = /^\.metadata\.(\w+)$/.exec(path);
        if (meta) {
          assert.ok(OBJECT_META_TIMESTAMPS.includes(meta[1]!), `${column.name}: ${path}`);
          continue;
        }
        assert.ok(schemaAt(path), `${column.name}: ${path} is not in the schema`);
      }
    });

    it("match the schema's types (dates for date-time strings)", () => {
      for (const column of columns) {
        const path = String(column.jsonPath);
        if (path.startsWith(".metadata.")) {
          assert.equal(column.type, "date", String(column.name));
          continue;
        }
        const node = schemaAt(path)!;
        const expected = node.format === "date-time" ? "date" : node.type;
        assert.equal(column.type, expected, String(column.name));
      }
    });

    it("never show spec.key or any other secret field", () => {
      for (const column of columns) {
        const last = String(column.jsonPath).split(".").pop()!;
        assert.ok(!SECRET_FIELD_NAMES.includes(last), `${column.name} shows ${column.jsonPath}`);
        assert.ok(!/^\.spec\.(identity|oidcLogin)(\.|$)/.test(String(column.jsonPath)));
      }
      assert.ok(!columns.some((c) => c.jsonPath === ".spec.key"));
    });

    it("show Display Name, User, Type, Disabled and TTL, with Age last", () => {
      const byName = new Map(columns.map((c) => [c.name, c.jsonPath]));
      assert.equal(byName.get("Display Name"), ".spec.displayName");
      assert.equal(byName.get("User"), ".spec.user");
      assert.equal(byName.get("Type"), ".spec.type");
      assert.equal(byName.get("Disabled"), ".spec.disabled");
      assert.equal(byName.get("TTL"), ".spec.ttl");
      assert.deepEqual(columns.at(-1), {
        name: "Age",
        type: "date",
        jsonPath: ".metadata.creationTimestamp",
      });
      assert.equal(new Set(columns.map((c) => c.name)).size, columns.length, "unique names");
    });
  });
});

// --- the webhook configurations ------------------------------------------------------------------

const webhookDocs = loadManifests("webhook-configurations.yaml");

function configuration(kind: string): Json {
  const found = webhookDocs.filter((d) => d.kind === kind);
  assert.equal(found.length, 1, `one ${kind}`);
  return found[0]!;
}

function onlyWebhook(config: Json): Json {
  const hooks = list(config.webhooks).map(obj);
  assert.equal(hooks.length, 1);
  return hooks[0]!;
}

interface Attributes {
  group: string;
  version: string;
  resource: string;
  subresource?: string;
  operation: string;
  namespaced?: boolean;
}

/** admissionregistration RuleWithOperations matching, "*" wildcards and "x/*" subresources. */
function ruleMatches(rule: Json, a: Attributes): boolean {
  const has = (values: unknown, v: string): boolean =>
    list(values).some((x) => x === "*" || x === v);
  const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  const resources = list(rule.resources).map(String);
  const resourceOk = resources.some(
    (r) =>
      r === "*/*" ||
      r === resource ||
      (!a.subresource && r === "*") ||
      (a.subresource !== undefined && (r === `${a.resource}/*` || r === `*/${a.subresource}`)),
  );
  const scope = rule.scope ?? "*";
  const scopeOk = scope === "*" || scope === (a.namespaced ? "Namespaced" : "Cluster");
  return (
    has(rule.apiGroups, a.group) &&
    has(rule.apiVersions, a.version) &&
    has(rule.operations, a.operation) &&
    resourceOk &&
    scopeOk
  );
}

function matches(hook: Json, a: Attributes): boolean {
  return list(hook.rules).some((r) => ruleMatches(obj(r), a));
}

const ours = (operation: string, subresource?: string): Attributes => ({
  group: IDENTITY.group,
  version: IDENTITY.version,
  resource: IDENTITY.resource,
  operation,
  subresource,
});

describe("manifests/webhook-configurations.yaml", () => {
  const mutating = configuration("MutatingWebhookConfiguration");
  const validating = configuration("ValidatingWebhookConfiguration");
  const mutate = onlyWebhook(mutating);
  const validateHook = onlyWebhook(validating);
  const both: [string, Json, string][] = [
    ["mutating", mutate, "/mutate/ownedaccesskeys"],
    ["validating", validateHook, "/validate/ownedaccesskeys"],
  ];

  it("holds one Mutating and one Validating configuration, both admissionregistration v1", () => {
    assert.equal(webhookDocs.length, 2);
    for (const doc of webhookDocs) {
      assert.equal(doc.apiVersion, "admissionregistration.k8s.io/v1");
      assert.equal(obj(doc.metadata).name, "vgate-ownedaccesskeys");
    }
    assert.equal(mutate.name, `mutate.${PLURAL}.${IDENTITY.group}`);
    assert.equal(validateHook.name, `validate.${PLURAL}.${IDENTITY.group}`);
  });

  it("call the paths vgate serves, on the vgate Service", () => {
    const runtime = repoFile("webhook/src/cli/serve-runtime.ts");
    for (const [what, hook, path] of both) {
      const service = obj(obj(hook.clientConfig).service);
      assert.deepEqual(
        { ...service },
        { namespace: "vgate-system", name: "vgate", port: 443, path },
        what,
      );
      assert.ok(runtime.includes(`"${path}":`), `serve-runtime.ts routes ${path}`);
    }
  });

  it("leave caBundle empty for the installer to fill", () => {
    for (const [what, hook] of both) {
      assert.equal(obj(hook.clientConfig).caBundle, "", what);
      assert.equal(obj(hook.clientConfig).url, undefined, what);
    }
  });

  it("use AdmissionReview v1, no side effects, fail closed within 10 s, Equivalent matching", () => {
    for (const [what, hook] of both) {
      assert.deepEqual(hook.admissionReviewVersions, ["v1"], what);
      assert.equal(hook.sideEffects, "None", what);
      assert.equal(hook.failurePolicy, "Fail", what);
      assert.equal(hook.matchPolicy, "Equivalent", what);
      assert.equal(hook.timeoutSeconds, 10, what);
      // kube: "the timeout value must be between 1 and 30 seconds".
      assert.ok(Number(hook.timeoutSeconds) >= 1 && Number(hook.timeoutSeconds) <= 30);
    }
    assert.equal(mutate.reinvocationPolicy, "Never");
    assert.equal(validateHook.reinvocationPolicy, undefined, "only mutating webhooks reinvoke");
  });

  it("send the operations each route acts on", () => {
    // mutateKey only changes CREATE; validateKey checks CREATE, UPDATE and (ownership) DELETE.
    assert.ok(matches(mutate, ours("CREATE")));
    assert.ok(!matches(mutate, ours("UPDATE")));
    for (const op of ["CREATE", "UPDATE", "DELETE"]) assert.ok(matches(validateHook, ours(op)), op);
    for (const [what, hook] of both) assert.ok(!matches(hook, ours("CONNECT")), what);
  });

  it("cover only management.loft.sh/v1 ownedaccesskeys, cluster-scoped, not its subresources", () => {
    for (const [what, hook] of both) {
      assert.ok(matches(hook, ours("CREATE")), what);
      // vgate answers 400 for a subresource; status writes must not reach it.
      assert.ok(!matches(hook, ours("UPDATE", "status")), `${what}: status`);
      assert.ok(!matches(hook, { ...ours("CREATE"), group: "management.example.com" }), what);
      assert.ok(!matches(hook, { ...ours("CREATE"), version: "v2" }), what);
      assert.ok(!matches(hook, { ...ours("CREATE"), resource: "accesskeys" }), what);
      assert.ok(!matches(hook, { ...ours("CREATE"), namespaced: true }), what);
    }
  });

  it("use the group of the CRD", () => {
    for (const [what, hook] of both) {
      for (const rule of list(hook.rules).map(obj)) {
        assert.deepEqual(rule.apiGroups, [crdSpec.group], what);
        assert.deepEqual(rule.resources, [obj(crdSpec.names).plural], what);
        assert.deepEqual(
          rule.apiVersions,
          crdVersions.map((v) => v.name),
          what,
        );
      }
    }
  });

  describe("against a running vgate serve", function () {
    this.timeout(30_000);
    let api: TestApiServer;
    let vgate: StartedServe;

    before(async () => {
      api = await startApiServer();
      vgate = await startServe(
        {
          port: 0,
          bindAddress: "127.0.0.1",
          kubeconfig: api.kubeconfigPath,
          groupDomain: "loft.sh",
          adminGroups: ["system:masters"],
          logLevel: "silent",
          dev: true,
        },
        createLogger("silent"),
      );
    });

    after(async () => {
      await vgate?.stop();
      await api?.close();
    });

    it("answers an AdmissionReview on each configured path, and 404 elsewhere", async () => {
      const base = `https://127.0.0.1:${vgate.server.port}`;
      for (const [what, hook] of both) {
        const path = String(obj(obj(hook.clientConfig).service).path);
        const body = review({ name: "k1", uid: `uid-${what}` });
        const res = await postJson(`${base}${path}`, body);
        assert.equal(res.status, 200, `${what}: ${res.text}`);
        const answer = res.json<{ kind: string; response: { uid: string } }>();
        assert.equal(answer.kind, "AdmissionReview");
        assert.equal(answer.response.uid, `uid-${what}`);
      }
      const wrong = await postJson(`${base}/validate/ownedaccesskey`, review({}));
      assert.equal(wrong.status, 404);
    });
  });
});

// --- manifests/README.md's recipes ---------------------------------------------------------------

describe("manifests/README.md recipes", () => {
  const readme = repoFile("manifests/README.md");

  it("changing the group domain with sed keeps the CRD and the webhooks consistent", () => {
    // The README's expression: sed 's/management\.loft\.sh/management.example.com/g'.
    assert.ok(readme.includes("sed 's/management\\.loft\\.sh/management.example.com/g'"));
    const target = resourceIdentity("example.com");
    const sed = (name: string): Json[] =>
      parseManifests(
        manifestText(name).replace(/management\.loft\.sh/g, "management.example.com"),
        name,
      );
    const [movedCrd] = sed("crd-ownedaccesskeys.yaml");
    assert.equal(obj(movedCrd?.metadata).name, `${PLURAL}.${target.group}`);
    assert.equal(obj(movedCrd?.spec).group, target.group);
    for (const config of sed("webhook-configurations.yaml")) {
      for (const hook of list(config.webhooks).map(obj)) {
        assert.ok(String(hook.name).endsWith(`.${PLURAL}.${target.group}`), String(hook.name));
        for (const rule of list(hook.rules).map(obj))
          assert.deepEqual(rule.apiGroups, [target.group]);
      }
    }
  });

  it("filling caBundle with sed sets it on both webhooks", () => {
    assert.ok(readme.includes(`sed "s|caBundle: \\"\\"|caBundle: \\"$CA\\"|"`));
    const ca = Buffer.from("-----BEGIN CERTIFICATE-----\n...").toString("base64");
    const text = manifestText("webhook-configurations.yaml").replace(
      /caBundle: ""/g,
      `caBundle: "${ca}"`,
    );
    const hooks = parseManifests(text, "filled").flatMap((d) => list(d.webhooks).map(obj));
    assert.equal(hooks.length, 2);
    for (const hook of hooks) assert.equal(obj(hook.clientConfig).caBundle, ca);
  });
});
