// The files in manifests/, loaded as they are: the OwnedAccessKey CRD (structural schema, every
// field in docs/reference.md#ownedaccesskey-fields, printer columns) and vgate's webhook
// configurations (paths vgate serves, rules that reach it). Then on a real kube-apiserver: the CRD validating and pruning
// objects and printing its columns, the configurations accepted and routing requests to vgate.

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { Ajv, type ValidateFunction } from "ajv";
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
  type ResourceIdentity,
  type OwnedAccessKeyStatus,
} from "../../webhook/src/shared/ownedaccesskey.js";
import { REQUEST_TARGETS } from "../../webhook/src/accesskeys/policy-rules.js";
import { escapeRegExp, validatingDenial } from "../contract/messages.js";
import { installAccessKeyCrd, sharedCluster, type VgateCluster } from "../support/cluster.js";
import { repoFile } from "../support/fixtures.js";
import { postJson } from "../support/https-client.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../support/kube/binaries.js";
import type { KubeObject, KubeReply, KubeTestClient } from "../support/kube/kube-client.js";
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

/**
 * The schema as a JSON Schema validator, for the static check that it names every field of the
 * TypeScript types. Whether kube accepts an object is asked of kube itself (below): its validator
 * differs from ajv's in places (formats, nulls, status on create).
 */
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

/**
 * An OwnedAccessKey that sets every field of the TypeScript types (and so every field in
 * docs/reference.md#ownedaccesskey-fields).
 */
const FULL_SPEC: DeepRequired<OwnedAccessKeySpec> = {
  displayName: "CI pipeline",
  description: "deploys from CI",
  user: "alice",
  team: "platform",
  subject: "loft:metrics-writer:p-default:my-vcluster",
  groups: ["loft:system:metrics-writers"],
  key: "4q6bYp0kVvQy8t1Jm2cZrW3xN5sD7fGhK9LqA0eUoIw",
  previousKey: { key: `sha256:${"ab".repeat(32)}`, until: "2025-01-01T00:00:00Z" },
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
const FULL_STATUS: DeepRequired<OwnedAccessKeyStatus> = {
  lastActivity: "2025-01-02T03:04:05Z",
  weakKey: true,
  previousKey: { until: "2025-01-02T04:00:00Z", lastActivity: "2025-01-02T03:30:00Z" },
};

function fullKey(): Json {
  return {
    apiVersion: IDENTITY.apiVersion,
    kind: KIND,
    metadata: { name: "full" },
    spec: structuredClone(FULL_SPEC),
    status: { ...FULL_STATUS },
  };
}

/**
 * The API reference's example object (docs/reference.md#ownedaccesskey-fields): only metadata.name,
 * spec.displayName, spec.ttl, spec.type, spec.user, an empty status and a null
 * metadata.creationTimestamp.
 */
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
    // mutateKey changes CREATE, and UPDATE in hashed key storage (a rotated key is hashed);
    // validateKey checks CREATE, UPDATE and (ownership) DELETE.
    assert.ok(matches(mutate, ours("CREATE")));
    assert.ok(matches(mutate, ours("UPDATE")));
    assert.ok(!matches(mutate, ours("DELETE")));
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

// --- on kube-apiserver ---------------------------------------------------------------------------
// The manifests as kube-apiserver takes them: the CRD validating and pruning real objects, its
// printer columns as kube serves them, the webhook configurations accepted, and their rules routing
// requests to the vgate installed from them. kube's answers are the truth here.

/**
 * The CRD under a group domain of this file's own, moved as manifests/README.md tells users to: a
 * keyspace no webhook watches, so what kube answers there is the schema's doing alone.
 */
const TEST_DOMAIN = "manifests-test.example.com";
const TEST = resourceIdentity(TEST_DOMAIN);
const RUN = randomBytes(3).toString("hex");
const uniqueName = (what: string): string => `${what}-${RUN}-${randomBytes(2).toString("hex")}`;
const MERGE_PATCH = { "Content-Type": "application/merge-patch+json" };
const TABLE = { Accept: "application/json;as=Table;v=v1;g=meta.k8s.io" };
const CRD_API = "apiextensions.k8s.io/v1";

/** The parts of a metav1.Status the tests read. */
interface Status {
  code?: number;
  reason?: string;
  message?: string;
  details?: { causes?: { field?: string; reason?: string; message?: string }[] };
}
type Answer = Json & Status;

const keysPath = (identity: ResourceIdentity, rest = ""): string =>
  `/apis/${identity.apiVersion}/${PLURAL}${rest}`;

const inGroup = (identity: ResourceIdentity, value: Json): Json => ({
  ...value,
  apiVersion: identity.apiVersion,
});

const keyRef = (identity: ResourceIdentity, name: string): KubeObject => ({
  apiVersion: identity.apiVersion,
  kind: KIND,
  metadata: { name },
});

const crdRef = (name: string): KubeObject => ({
  apiVersion: CRD_API,
  kind: "CustomResourceDefinition",
  metadata: { name },
});

function conditionsOf(live: Json | null): Record<string, string> {
  const status = obj(live?.status ?? {});
  const conditions = list(status.conditions ?? []).map(obj);
  return Object.fromEntries(conditions.map((c) => [String(c.type), String(c.status)]));
}

/** manifests/webhook-configurations.yaml's documents, renamed (the real names are installed). */
function renamedConfigurations(text: string, name: string): KubeObject[] {
  return parseManifests(text, "webhook-configurations.yaml").map((d) => ({
    ...(d as KubeObject),
    metadata: { ...obj(d.metadata), name },
  }));
}

const configurationPath = (kind: unknown, query = ""): string =>
  `/apis/admissionregistration.k8s.io/v1/${String(kind).toLowerCase()}s${query}`;

(HAVE_KUBE ? describe : describe.skip)(
  `manifests/ on kube-apiserver${KUBE_SKIP_REASON}`,
  function () {
    this.timeout(60_000);
    let cluster: VgateCluster;
    let admin: KubeTestClient;
    const made: KubeObject[] = [];

    before(async () => {
      cluster = await sharedCluster();
      admin = cluster.admin;
      await installAccessKeyCrd(admin, TEST_DOMAIN);
    });

    afterEach(async () => {
      for (const o of made.splice(0).reverse()) await admin.delete(o, { force: true });
    });

    after(async () => {
      await admin?.delete(crdRef(`${PLURAL}.${TEST.group}`));
    });

    /** Creates `value` for real (cleaned up after the test); the API server's answer. */
    async function create(identity: ResourceIdentity, value: Json, query = ""): Promise<Answer> {
      const res = await admin.request<Answer>(
        "POST",
        keysPath(identity, query),
        inGroup(identity, value),
      );
      assert.equal(res.status, 201, JSON.stringify(res.body));
      made.push(keyRef(identity, String(obj(res.body.metadata).name)));
      return res.body;
    }

    /** A server-side dry-run create in the test group. */
    const dryRun = (value: Json, query = ""): Promise<KubeReply<Answer>> =>
      admin.request<Answer>("POST", keysPath(TEST, `?dryRun=All${query}`), inGroup(TEST, value));

    async function assertAccepted(value: Json, what: string): Promise<Answer> {
      const res = await dryRun(value, "&fieldValidation=Strict");
      assert.equal(res.status, 201, `${what}: ${JSON.stringify(res.body)}`);
      return res.body;
    }

    const causeFields = (status: Status): string[] =>
      (status.details?.causes ?? []).map((c) => String(c.field));

    /** kube answers 422 Invalid for `value`, with a cause at `field` (e.g. `spec.scope.clusters[0]`). */
    async function assertRejectedAt(value: Json, field: string): Promise<void> {
      const res = await dryRun(value);
      assert.equal(res.status, 422, `${field}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.reason, "Invalid");
      assert.ok(causeFields(res.body).includes(field), `${field}: ${res.body.message}`);
    }

    describe("the CRD", () => {
      const name = String(obj(crd?.metadata).name);

      it("is accepted as it is: Established, and valid under strict field validation", async () => {
        // The shared cluster installed the file unchanged; a dry-run replace has kube validate
        // it again (a 409 only means something else wrote the CRD meanwhile: read it again).
        let res: KubeReply<Answer>;
        for (let attempt = 0; ; attempt++) {
          const live = await admin.get(crdRef(name));
          const conditions = conditionsOf(live);
          assert.equal(conditions.Established, "True");
          assert.equal(conditions.NamesAccepted, "True");
          const again = {
            ...crd,
            metadata: { ...obj(crd?.metadata), resourceVersion: live?.metadata.resourceVersion },
          };
          res = await admin.request<Answer>(
            "PUT",
            `/apis/${CRD_API}/customresourcedefinitions/${name}?dryRun=All&fieldValidation=Strict`,
            again,
          );
          if (res.status !== 409 || attempt >= 3) break;
        }
        assert.equal(res.status, 200, JSON.stringify(res.body));
      });

      it("is served cluster-scoped with its names and the status subresource", async () => {
        const res = await admin.request<{ resources: Json[] }>(
          "GET",
          `/apis/${IDENTITY.apiVersion}`,
        );
        assert.equal(res.status, 200);
        const byName = new Map(res.body.resources.map((r) => [r.name, r]));
        const main = byName.get(PLURAL);
        const names = obj(crdSpec.names);
        assert.deepEqual(
          {
            namespaced: main?.namespaced,
            kind: main?.kind,
            singularName: main?.singularName,
            shortNames: main?.shortNames,
          },
          {
            namespaced: false,
            kind: KIND,
            singularName: names.singular,
            shortNames: names.shortNames,
          },
        );
        assert.ok(byName.has(`${PLURAL}/status`), "the status subresource");
      });

      it("is Established under another group domain, moved with the README's sed", async () => {
        const conditions = conditionsOf(await admin.get(crdRef(`${PLURAL}.${TEST.group}`)));
        assert.equal(conditions.Established, "True");
        assert.equal(conditions.NamesAccepted, "True");
      });
    });

    describe("the CRD's schema", () => {
      it("accepts the API reference's example object (docs/reference.md#ownedaccesskey-fields)", async () => {
        await assertAccepted(PRODUCT_EXAMPLE, "the API reference's example");
      });

      it("accepts the object of webhook/examples/admission-review.json", async () => {
        const example = JSON.parse(repoFile("webhook/examples/admission-review.json")) as Json;
        await assertAccepted(obj(obj(example.request).object), "admission-review.json's object");
      });

      it("accepts the objects the test helpers build", async () => {
        await assertAccepted(accessKey("k1"), "accessKey('k1')");
        await assertAccepted(
          accessKey("k2", { ttl: 0, disabled: true, groups: [] }),
          "a disabled key",
        );
        await assertAccepted(
          accessKey(
            "k3",
            { scope: { roles: [{ role: "loft-cli" }] }, type: "" },
            { labels: { a: "b" } },
          ),
          "a scoped key",
        );
        await assertAccepted(
          obj(review({ name: "k4" }).request).object as Json,
          "review()'s object",
        );
      });

      it("keeps every field of an object that sets them all, as sent", async () => {
        // Strict: an undeclared field would be a 400; a pruned or retyped one would differ below.
        const name = uniqueName("full");
        await create(TEST, { ...fullKey(), metadata: { name } }, "?fieldValidation=Strict");
        const stored = await admin.get(keyRef(TEST, name));
        assert.deepEqual(stored?.spec, FULL_SPEC);
        const res = await admin.request<Answer>(
          "PATCH",
          keysPath(TEST, `/${name}/status?fieldValidation=Strict`),
          { status: FULL_STATUS },
          MERGE_PATCH,
        );
        assert.equal(res.status, 200, JSON.stringify(res.body));
        assert.deepEqual((await admin.get(keyRef(TEST, name)))?.status, FULL_STATUS);
      });

      it("prunes unknown fields, and refuses them under strict field validation", async () => {
        const sent = accessKey("k", { usr: "alice", scope: { project: "p" } });
        const pruned = await dryRun(sent);
        assert.equal(pruned.status, 201, JSON.stringify(pruned.body));
        assert.deepEqual(pruned.body.spec, {
          user: "alice",
          type: "User",
          key: (sent["spec"] as { key: string }).key,
          scope: {},
        });
        const strict = await dryRun(sent, "&fieldValidation=Strict");
        assert.equal(strict.status, 400);
        assert.equal(strict.body.reason, "BadRequest");
        assert.match(
          String(strict.body.message),
          /strict decoding error: .*unknown field "spec\.scope\.project"/,
        );
        assert.match(String(strict.body.message), /unknown field "spec\.usr"/);
      });

      it("rejects ttl as a string, a fraction or a boolean", async () => {
        // The range (non-negative, at most 2^53-1) is the webhook's check, not the schema's.
        await assertRejectedAt(accessKey("k", { ttl: "3600" }), "spec.ttl");
        await assertRejectedAt(accessKey("k", { ttl: 1.5 }), "spec.ttl");
        await assertRejectedAt(accessKey("k", { ttl: true }), "spec.ttl");
      });

      it("rejects a type outside the enum, listing the AccessKeyType values", async () => {
        await assertRejectedAt(accessKey("k", { type: "user" }), "spec.type");
        const res = await dryRun(accessKey("k", { type: "Admin" }));
        assert.equal(res.status, 422);
        const supported = ACCESS_KEY_TYPES.map((t) => JSON.stringify(t)).join(", ");
        assert.deepEqual(res.body.details?.causes, [
          {
            reason: "FieldValueNotSupported",
            message: `Unsupported value: "Admin": supported values: ${supported}`,
            field: "spec.type",
          },
        ]);
      });

      it("rejects scope lists that are not arrays of objects", async () => {
        await assertRejectedAt(
          accessKey("k", { scope: { projects: { project: "p" } } }),
          "spec.scope.projects",
        );
        await assertRejectedAt(
          accessKey("k", { scope: { clusters: ["c1"] } }),
          "spec.scope.clusters[0]",
        );
        await assertRejectedAt(
          accessKey("k", { scope: { roles: [{ role: "vcluster", projects: "default" }] } }),
          "spec.scope.roles[0].projects",
        );
      });

      it("rejects wrong types in the other fields", async () => {
        await assertRejectedAt(accessKey("k", { disabled: "true" }), "spec.disabled");
        await assertRejectedAt(accessKey("k", { groups: "developers" }), "spec.groups");
        await assertRejectedAt(accessKey("k", { key: 42 }), "spec.key");
        await assertRejectedAt(
          accessKey("k", { rules: [{ verbs: "get" }] }),
          "spec.rules[0].verbs",
        );
        await assertRejectedAt(
          accessKey("k", { scope: { rules: [{ resources: [{ resources: "pods" }] }] } }),
          "spec.scope.rules[0].resources[0].resources",
        );
        await assertRejectedAt(
          accessKey("k", { identity: { extraClaims: { n: 1 } } }),
          "spec.identity.extraClaims.n",
        );
        await assertRejectedAt(
          accessKey("k", { identity: { emailVerified: "yes" } }),
          "spec.identity.emailVerified",
        );
        await assertRejectedAt(accessKey("k", { oidcProvider: "kubectl" }), "spec.oidcProvider");
        await assertRejectedAt({ ...accessKey("k"), spec: "x" }, "spec");
      });

      it("rejects timestamps that are not RFC 3339 and []byte fields that are not base64", async () => {
        await assertRejectedAt(
          accessKey("k", { identityRefresh: "2025-01-01" }),
          "spec.identityRefresh",
        );
        await assertRejectedAt(
          accessKey("k", { oidcLogin: { lastRefresh: "2025-01-01 00:00:00Z" } }),
          "spec.oidcLogin.lastRefresh",
        );
        await assertRejectedAt(
          accessKey("k", { identity: { connectorData: "not base64!" } }),
          "spec.identity.connectorData",
        );
        await assertRejectedAt(
          accessKey("k", { oidcLogin: { idToken: "%%%" } }),
          "spec.oidcLogin.idToken",
        );
      });

      it("ignores status on create, and validates it on the status subresource", async () => {
        // With the status subresource, kube resets status on create: a bad one is no error there.
        const name = uniqueName("status");
        const stored = await create(TEST, { ...accessKey(name), status: { lastActivity: 5 } });
        assert.equal(stored.status, undefined);
        for (const lastActivity of [5, "yesterday"]) {
          const res = await admin.request<Answer>(
            "PATCH",
            keysPath(TEST, `/${name}/status?dryRun=All`),
            { status: { lastActivity } },
            MERGE_PATCH,
          );
          assert.equal(res.status, 422, JSON.stringify(res.body));
          assert.deepEqual(
            causeFields(res.body),
            ["status.lastActivity"],
            String(res.body.message),
          );
        }
      });
    });

    describe("printer columns, as kube serves them", () => {
      it("are Name and then the CRD's columns, with the values of the key and no secret", async () => {
        const name = uniqueName("columns");
        await create(TEST, { ...fullKey(), metadata: { name } });
        const status = await admin.request(
          "PATCH",
          keysPath(TEST, `/${name}/status`),
          { status: FULL_STATUS },
          MERGE_PATCH,
        );
        assert.equal(status.status, 200, JSON.stringify(status.body));
        const res = await admin.request<{
          columnDefinitions: Json[];
          rows: { cells: unknown[] }[];
        }>("GET", keysPath(TEST, `/${name}?includeObject=None`), undefined, TABLE);
        assert.equal(res.status, 200, JSON.stringify(res.body));
        assert.deepEqual(
          res.body.columnDefinitions.map((c) => [c.name, c.type, c.priority]),
          [["Name", "string", 0], ...columns.map((c) => [c.name, c.type, c.priority ?? 0])],
        );
        const cells = list(res.body.rows[0]?.cells);
        assert.equal(cells.length, columns.length + 1);
        assert.equal(cells[0], name);
        const full = { spec: FULL_SPEC, status: FULL_STATUS };
        columns.forEach((column, i) => {
          const cell = cells[i + 1];
          if (column.type === "date") {
            // kube prints a date as its age, in kubectl's human durations ("0s", "691d").
            assert.match(String(cell), /^\d+[smhdy]/, String(column.name));
            return;
          }
          const value = String(column.jsonPath)
            .slice(1)
            .split(".")
            .reduce<unknown>((node, step) => obj(node)[step], full);
          assert.deepEqual(cell, value, String(column.name));
        });
        const shown = JSON.stringify(cells);
        for (const secret of [FULL_SPEC.key, ...Object.values(FULL_SPEC.oidcLogin)]) {
          assert.ok(!shown.includes(secret), `a column shows ${secret}`);
        }
      });
    });

    describe("the webhook configurations", () => {
      /** Server-side dry-run creates of each document, strict; kube's answers. */
      async function dryRunCreate(configs: KubeObject[]): Promise<Answer[]> {
        const answers: Answer[] = [];
        for (const config of configs) {
          const res = await admin.request<Answer>(
            "POST",
            configurationPath(config.kind, "?dryRun=All&fieldValidation=Strict"),
            config,
          );
          assert.equal(res.status, 201, `${config.kind}: ${JSON.stringify(res.body)}`);
          answers.push(res.body);
        }
        return answers;
      }

      /** What kube made of each webhook, next to the file's (kube adds defaults, drops nothing). */
      function assertKept(sent: KubeObject[], answers: Answer[]): void {
        sent.forEach((config, i) => {
          const mine = list(config.webhooks).map(obj);
          const theirs = list(answers[i]?.webhooks).map(obj);
          assert.equal(theirs.length, mine.length);
          mine.forEach((hook, j) => {
            const kept = theirs[j]!;
            for (const [field, value] of Object.entries(hook)) {
              if (field === "clientConfig") continue;
              assert.deepEqual(kept[field], value, `${config.kind} ${String(hook.name)}: ${field}`);
            }
            assert.deepEqual(
              obj(kept.clientConfig).service,
              obj(hook.clientConfig).service,
              `${config.kind}: clientConfig.service`,
            );
          });
        });
      }

      it("are accepted as they are, strictly, keeping every field", async () => {
        const sent = renamedConfigurations(
          manifestText("webhook-configurations.yaml"),
          uniqueName("vgate"),
        );
        const answers = await dryRunCreate(sent);
        assertKept(sent, answers);
        // An empty caBundle is no bundle at all: kube drops it ([]byte, omitempty).
        for (const answer of answers) {
          for (const hook of list(answer.webhooks).map(obj)) {
            assert.equal(obj(hook.clientConfig).caBundle, undefined);
          }
        }
      });

      it("are accepted with caBundle filled and the group domain moved by the README's sed", async () => {
        const ca = Buffer.from(cluster.caPem).toString("base64");
        const text = manifestText("webhook-configurations.yaml")
          .replace(/caBundle: ""/g, `caBundle: "${ca}"`)
          .replace(/management\.loft\.sh/g, TEST.group);
        const sent = renamedConfigurations(text, uniqueName("vgate"));
        const answers = await dryRunCreate(sent);
        assertKept(sent, answers);
        for (const answer of answers) {
          for (const hook of list(answer.webhooks).map(obj)) {
            assert.equal(obj(hook.clientConfig).caBundle, ca);
            for (const rule of list(hook.rules).map(obj))
              assert.deepEqual(rule.apiGroups, [TEST.group]);
          }
        }
      });
    });

    describe("route requests to the vgate installed from them", () => {
      // The shared cluster installed manifests/ with each service reference made a URL to vgate.
      const denial = new RegExp(`^${escapeRegExp(validatingDenial(IDENTITY.group))}`);

      it("CREATE: the mutating webhook fills spec.key, the validating one checks the ttl", async () => {
        const name = uniqueName("create");
        const sent = accessKey(name, { user: "alice" });
        delete obj(sent.spec).key;
        const res = await admin.request<Answer>("POST", keysPath(IDENTITY, "?dryRun=All"), sent);
        assert.equal(res.status, 201, JSON.stringify(res.body));
        assert.match(String(obj(res.body.spec).key), /^\S{32,}$/);
        // A negative ttl passes the schema (an int64); only vgate's validating webhook refuses it.
        const bad = await admin.request<Answer>(
          "POST",
          keysPath(IDENTITY, "?dryRun=All"),
          accessKey(name, { ttl: -1 }),
        );
        assert.equal(bad.status, 422, JSON.stringify(bad.body));
        assert.match(String(bad.body.message), denial);
        assert.match(String(bad.body.message), /spec\.ttl/);
      });

      it("UPDATE: the validating webhook checks it", async () => {
        const name = uniqueName("update");
        await create(IDENTITY, accessKey(name, { user: "alice" }));
        const res = await admin.request<Answer>(
          "PATCH",
          keysPath(IDENTITY, `/${name}?dryRun=All`),
          { spec: { ttl: -1 } },
          MERGE_PATCH,
        );
        assert.equal(res.status, 422, JSON.stringify(res.body));
        assert.match(String(res.body.message), denial);
      });

      describe("DELETE", () => {
        const user = `manifests-test-${RUN}`;
        const rbac: KubeObject[] = [
          {
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "ClusterRole",
            metadata: { name: user },
            rules: [{ apiGroups: [IDENTITY.group], resources: [PLURAL], verbs: ["get", "delete"] }],
          },
          {
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "ClusterRoleBinding",
            metadata: { name: user },
            roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: user },
            subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: user }],
          },
        ];
        before(async () => {
          for (const o of rbac) await admin.apply(o);
        });
        after(async () => {
          for (const o of rbac) await admin?.delete(o);
        });

        it("the validating webhook checks whose key it is", async () => {
          const name = uniqueName("delete");
          await create(IDENTITY, accessKey(name, { user: "alice" }));
          const client = await cluster.clientFor(user);
          try {
            // RBAC lets the user delete keys (once kube's authorizer has seen the binding); the
            // key is alice's, so vgate's validating webhook refuses.
            let res: KubeReply<Answer>;
            const deadline = Date.now() + 30_000;
            do {
              res = await client.request<Answer>(
                "DELETE",
                keysPath(IDENTITY, `/${name}?dryRun=All`),
              );
              if (denial.test(String(res.body.message))) break;
              await new Promise((r) => setTimeout(r, 200));
            } while (Date.now() < deadline);
            assert.equal(res.status, 403, JSON.stringify(res.body));
            assert.match(String(res.body.message), denial);
            assert.match(String(res.body.message), /belongs to user "alice"/);
          } finally {
            client.close();
          }
        });
      });

      it("status writes do not reach vgate, which answers 400 for subresources", async () => {
        const name = uniqueName("status");
        await create(IDENTITY, accessKey(name, { user: "alice" }));
        const res = await admin.request<Answer>(
          "PATCH",
          keysPath(IDENTITY, `/${name}/status`),
          { status: FULL_STATUS },
          MERGE_PATCH,
        );
        assert.equal(res.status, 200, JSON.stringify(res.body));
        assert.deepEqual(res.body.status, FULL_STATUS);
      });

      it("vgate answers an AdmissionReview on each configured path, and 404 elsewhere", async () => {
        const hooks = webhookDocs.flatMap((d) => list(d.webhooks).map(obj));
        for (const hook of hooks) {
          const path = String(obj(obj(hook.clientConfig).service).path);
          const body = review({ name: "k1", uid: `uid-${path}` });
          const res = await postJson(`${cluster.vgateUrl}${path}`, body, cluster.caPem);
          assert.equal(res.status, 200, `${path}: ${res.text}`);
          const answer = res.json<{ kind: string; response: { uid: string } }>();
          assert.equal(answer.kind, "AdmissionReview");
          assert.equal(answer.response.uid, `uid-${path}`);
        }
        const wrong = await postJson(
          `${cluster.vgateUrl}/validate/ownedaccesskey`,
          review({}),
          cluster.caPem,
        );
        assert.equal(wrong.status, 404);
      });
    });
  },
);
