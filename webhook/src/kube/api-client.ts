// The production KubeApi: the few reads and reviews OwnedAccessKey admission needs, asked of
// kube-apiserver with the webhook's own credentials. Every failure to ask is a 503 (fail closed).

import type { ClientConfig as KubeConfig } from "../shared/client-config.js";
import type { KubeError } from "../shared/status.js";
import type { OwnedAccessKey, ResourceIdentity } from "../shared/ownedaccesskey.js";
import type { UserInfo } from "../api/user-info.js";
import type { AccessDecision, KubeApi, ResourceAttributes, ResourceMapping } from "./ports.js";
import type { KeysByName, NamespaceLabels } from "./ports.js";
import { AccessKeyCache } from "./access-key-cache.js";
import { NamespaceCache } from "./namespace-cache.js";
import type { ChangeType } from "./controller/watch-cache.js";
import { DiscoveryCache, type KindTable } from "./discovery-cache.js";
import { discoveryPath, parseApiVersion, resourcesByKind, type GroupVersion } from "./discovery.js";
import { KubeTransport } from "../shared/transport.js";
import { describeAnswer, describeError, unavailable } from "./fail-closed.js";
import { isObject } from "../shared/json.js";

export interface ApiClientOptions {
  /** Deadline for one API call. */
  timeoutMs?: number;
  /** How long a discovery answer is reused. */
  discoveryTtlMs?: number;
  /** A kind missing from discovery re-asks once when the answer is at least this old. */
  discoveryMissRefreshMs?: number;
  /** How long a positive ready() answer is reused. */
  readyTtlMs?: number;
  /**
   * Answer getAccessKey from a list+watch cache of OwnedAccessKeys while it is synced, instead of
   * a GET per call (default true).
   */
  cacheAccessKeys?: boolean;
  /** Told about every change of the OwnedAccessKey cache (the token webhook's key index). */
  onAccessKeyChange?: (type: ChangeType, name: string) => void;
  /** Also list and watch Namespaces (their labels), for the authorization webhook's scopes. */
  watchNamespaces?: boolean;
  /** Told why a cache went unsynced (no credentials, no object contents). */
  onCacheError?: (cache: "ownedaccesskeys" | "namespaces", message: string) => void;
}

const DEFAULTS = {
  timeoutMs: 5_000,
  discoveryTtlMs: 60_000,
  discoveryMissRefreshMs: 1_000,
  readyTtlMs: 10_000,
  cacheAccessKeys: true,
  watchNamespaces: false,
};
const MAX_DISCOVERY_ENTRIES = 256;
const SAR_PATH = "/apis/authorization.k8s.io/v1/subjectaccessreviews";

export class ApiClient implements KubeApi {
  private readonly transport: KubeTransport;
  private readonly discovery: DiscoveryCache;
  private readonly accessKeys: AccessKeyCache | undefined;
  private readonly namespaces: NamespaceCache | undefined;
  private readonly options: typeof DEFAULTS & ApiClientOptions;
  private readyAt = -Infinity;
  private readyCheck: Promise<boolean> | undefined;

  constructor(
    kc: KubeConfig,
    private readonly identity: ResourceIdentity,
    options: ApiClientOptions = {},
  ) {
    this.options = { ...DEFAULTS, ...definedOnly(options) };
    this.transport = new KubeTransport(kc, { timeoutMs: this.options.timeoutMs });
    this.discovery = new DiscoveryCache((gv) => this.fetchKinds(gv), {
      ttlMs: this.options.discoveryTtlMs,
      missRefreshMs: this.options.discoveryMissRefreshMs,
      maxEntries: MAX_DISCOVERY_ENTRIES,
    });
    const onError = options.onCacheError;
    if (this.options.cacheAccessKeys) {
      this.accessKeys = new AccessKeyCache(this.transport, identity, {
        onChange: options.onAccessKeyChange,
        onError: onError && ((m) => onError("ownedaccesskeys", m)),
      });
      this.accessKeys.start();
    }
    if (this.options.watchNamespaces) {
      this.namespaces = new NamespaceCache(this.transport, {
        onError: onError && ((m) => onError("namespaces", m)),
      });
      this.namespaces.start();
    }
  }

  /** The OwnedAccessKey watch cache (never synced when caching is off). */
  accessKeyView(): KeysByName {
    const cache = this.accessKeys;
    return { synced: () => cache?.synced() ?? false, get: (name) => cache?.get(name) };
  }

  /** Namespace labels from the namespace watch cache (never synced unless watchNamespaces). */
  namespaceView(): NamespaceLabels {
    const cache = this.namespaces;
    return { synced: () => cache?.synced() ?? false, labels: (name) => cache?.labels(name) };
  }

  /**
   * Sets status.lastActivity, status.weakKey and/or status.previousKey of the key `name` through the status
   * subresource: a merge patch, so nothing else in the object changes, that carries
   * `resourceVersion` as a precondition (kube-apiserver refuses it with 409 Conflict when the object
   * changed since). "gone" when the key no longer exists, "conflict" on 409; throws a KubeError
   * (503) when the API server cannot be asked or refuses otherwise.
   */
  async patchAccessKeyStatus(
    name: string,
    status: {
      lastActivity?: string;
      weakKey?: boolean;
      previousKey?: { until: string; lastActivity: string };
    },
    resourceVersion?: string,
  ): Promise<"written" | "gone" | "conflict"> {
    const { group, version, resource } = this.identity;
    const check = `record the last activity of ${resource}.${group} ${JSON.stringify(name)}`;
    const path = `/apis/${group}/${version}/${resource}/${encodeURIComponent(name)}/status`;
    const body = resourceVersion ? { metadata: { resourceVersion }, status } : { status };
    let res;
    try {
      res = await this.transport.request("PATCH", path, body, {
        contentType: "application/merge-patch+json",
      });
    } catch (err) {
      throw this.failed(check, describeError(err));
    }
    if (res.status === 404) return "gone";
    if (res.status === 409) return "conflict";
    if (res.status !== 200) throw this.failed(check, describeAnswer(res));
    return "written";
  }

  async getAccessKey(name: string): Promise<OwnedAccessKey | null> {
    // path.ValidatePathSegmentName: a name may not be "." or ".." nor contain "/" or "%", so no
    // stored object can have such a name (and it must not change the URL we ask).
    if (name === "" || name === "." || name === ".." || /[/%]/.test(name)) return null;
    // A key created in the last moments may not have reached the cache yet, so we may answer
    // "absent" for a name that was just taken. That is safe: kube-apiserver's storage still
    // refuses a duplicate name with 409 AlreadyExists after admission; the cache only makes our
    // early answer faster, never less safe. While unsynced we ask the API server as before.
    if (this.accessKeys?.synced()) {
      // The cache's packed store parses each get anew: the caller's copy is its own already.
      return this.accessKeys.get(name) ?? null;
    }
    const { group, version, resource } = this.identity;
    const check = `check whether ${resource}.${group} ${JSON.stringify(name)} exists`;
    const path = `/apis/${group}/${version}/${resource}/${encodeURIComponent(name)}`;
    const res = await this.call(check, "GET", path);
    if (res.status === 404) return null;
    if (res.status !== 200 || !isObject(res.body)) throw this.failed(check, describeAnswer(res));
    return res.body as OwnedAccessKey;
  }

  async resourceFor(apiVersion: string, kind: string): Promise<ResourceMapping | null> {
    const gv = parseApiVersion(apiVersion);
    if (!gv) return null;
    return this.discovery.lookup(gv, kind);
  }

  async subjectAccessReview(
    user: UserInfo,
    attributes: ResourceAttributes,
  ): Promise<AccessDecision> {
    const check = `check whether ${JSON.stringify(user.username)} may ${describeAttributes(attributes)}`;
    const res = await this.call(check, "POST", SAR_PATH, subjectAccessReviewBody(user, attributes));
    const status = res.status === 200 || res.status === 201 ? reviewStatus(res.body) : null;
    if (!status) throw this.failed(check, describeAnswer(res));
    return status;
  }

  /** Whether discovery answers; a yes is trusted for readyTtlMs, a no is re-asked every time. */
  async ready(): Promise<boolean> {
    if (Date.now() - this.readyAt < this.options.readyTtlMs) return true;
    this.readyCheck ??= this.askReady().finally(() => (this.readyCheck = undefined));
    return this.readyCheck;
  }

  /** Whether getAccessKey answers from the watch cache (not from a GET) right now. */
  accessKeysCached(): boolean {
    return this.accessKeys?.synced() ?? false;
  }

  /** Stops the watch caches and closes kept-alive connections. */
  close(): void {
    this.accessKeys?.stop();
    this.namespaces?.stop();
    this.transport.close();
  }

  private async askReady(): Promise<boolean> {
    try {
      const res = await this.transport.request("GET", "/api");
      if (res.status !== 200) return false;
      this.readyAt = Date.now();
      return true;
    } catch {
      return false;
    }
  }

  private async fetchKinds(gv: GroupVersion): Promise<KindTable> {
    const check = `map ${gv.group ? `${gv.group}/` : ""}${gv.version} kinds to resources (discovery)`;
    const res = await this.call(check, "GET", discoveryPath(gv));
    // A group/version that is not served is a 404: no mapping. Anything else unexpected (e.g. a
    // 503 from an aggregated API whose backend is down) fails closed.
    if (res.status === 404) return null;
    if (res.status !== 200 || !isObject(res.body)) throw this.failed(check, describeAnswer(res));
    return resourcesByKind(gv, res.body);
  }

  private async call(check: string, method: string, path: string, body?: unknown) {
    try {
      return await this.transport.request(method, path, body);
    } catch (err) {
      throw this.failed(check, describeError(err));
    }
  }

  private failed(check: string, why: string): KubeError {
    return unavailable(check, why, (text) => this.transport.redact(text));
  }
}

/** authorization.k8s.io/v1 SubjectAccessReview for `user` doing `attributes`. */
export function subjectAccessReviewBody(user: UserInfo, attributes: ResourceAttributes): object {
  const spec: Record<string, unknown> = {
    user: user.username,
    groups: [...user.groups],
    resourceAttributes: resourceAttributes(attributes),
  };
  if (user.uid) spec["uid"] = user.uid;
  if (user.extra) spec["extra"] = extraOf(user.extra);
  return { apiVersion: "authorization.k8s.io/v1", kind: "SubjectAccessReview", spec };
}

function resourceAttributes(a: ResourceAttributes): Record<string, string> {
  const out: Record<string, string> = {
    group: a.group,
    version: a.version,
    resource: a.resource,
    verb: a.verb,
  };
  if (a.subresource) out["subresource"] = a.subresource;
  if (a.namespace) out["namespace"] = a.namespace;
  if (a.name) out["name"] = a.name;
  return out;
}

// Object.fromEntries defines own properties, so a "__proto__" key stays data.
function extraOf(extra: Record<string, string[]>): Record<string, string[]> {
  return Object.fromEntries(
    Object.entries(extra).filter(
      (e): e is [string, string[]] =>
        Array.isArray(e[1]) && e[1].every((v: unknown) => typeof v === "string"),
    ),
  );
}

/** SubjectAccessReviewStatus, or null when the answer has none we can trust. */
export function reviewStatus(body: unknown): AccessDecision | null {
  if (!isObject(body) || !Object.hasOwn(body, "status")) return null;
  const status = body["status"];
  if (!isObject(status) || !Object.hasOwn(status, "allowed")) return null;
  const allowed = status["allowed"];
  if (typeof allowed !== "boolean") return null;
  const decision: AccessDecision = { allowed };
  if (Object.hasOwn(status, "denied") && status["denied"] === true) decision.denied = true;
  const reason = Object.hasOwn(status, "reason") ? status["reason"] : undefined;
  if (typeof reason === "string" && reason) decision.reason = reason;
  const evalErr = Object.hasOwn(status, "evaluationError") ? status["evaluationError"] : undefined;
  if (typeof evalErr === "string" && evalErr) decision.evaluationError = evalErr;
  return decision;
}

/** `update users.storage.loft.sh/finalizers "alice"`, for messages. */
function describeAttributes(a: ResourceAttributes): string {
  const resource = `${a.resource}${a.group ? `.${a.group}` : ""}`;
  const sub = a.subresource ? `/${a.subresource}` : "";
  const name = a.name ? ` ${JSON.stringify(a.name)}` : "";
  const ns = a.namespace ? ` in namespace ${JSON.stringify(a.namespace)}` : "";
  return `${a.verb} ${resource}${sub}${name}${ns}`;
}

function definedOnly(options: ApiClientOptions): Partial<typeof DEFAULTS> {
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined));
}
