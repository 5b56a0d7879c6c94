// Requests to the API server for the plugin: OwnedAccessKeys of management.<group-domain>/v1,
// SelfSubjectReviews and the Events about a key. Error answers become KubeErrors (their Status),
// no answer becomes a ConnectionError, and every `Warning` header of an answer is passed to `warn`.

import {
  KubeTransport,
  TransportError,
  type KubeResponse,
} from "../../../webhook/src/shared/transport.js";
import {
  resourceIdentity,
  type ResourceIdentity,
} from "../../../webhook/src/shared/ownedaccesskey.js";
import { KubeError } from "../../../webhook/src/shared/status.js";
import { statusError } from "../../../webhook/src/shared/answer-error.js";
import { goDuration } from "./go-duration.js";
import { kubeconfigFix, systemErrorIn, systemErrorSentence } from "../os/system-errors.js";
import { ConnectionError, KubeconfigError, ResourceTypeError } from "./errors.js";
import type { Connection } from "./connect.js";

/** The query of a list or watch: labelSelector and fieldSelector, where given. */
function listParams(opts: ListOptions): URLSearchParams {
  const query = new URLSearchParams();
  if (opts.labelSelector) query.set("labelSelector", opts.labelSelector);
  if (opts.fieldSelector) query.set("fieldSelector", opts.fieldSelector);
  return query;
}

/** A field selector's value as apimachinery's fields.EscapeValue writes it: `\\`, `,` and `=` escaped. */
const escapeFieldValue = (value: string): string => value.replace(/[\\,=]/g, (c) => `\\${c}`);

/** An object as the API returns it. */
export type KubeObject = Record<string, unknown> & {
  metadata?: { name?: string; resourceVersion?: string; [k: string]: unknown };
};

export interface ListOptions {
  labelSelector?: string | undefined;
  fieldSelector?: string | undefined;
}

export interface DeleteOptions {
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun?: boolean;
}

export interface JsonPatchOp {
  op: "add" | "remove" | "replace" | "test";
  path: string;
  value?: unknown;
}

export interface UserInfo {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

// Requests without --request-timeout wait as long as kubectl's would (forever); a cap keeps a dead
// TCP peer from hanging the plugin for ever.
const NO_TIMEOUT_MS = 24 * 3_600_000;
// client-go's transport (transport/cache.go): net.Dialer{Timeout: 30s} and TLSHandshakeTimeout 10s,
// whatever --request-timeout says.
const CONNECT_TIMEOUT_MS = 30_000;
const TLS_HANDSHAKE_TIMEOUT_MS = 10_000;

export class AccessKeyApi {
  readonly identity: ResourceIdentity;
  private readonly transport: KubeTransport;

  constructor(
    private readonly connection: Connection,
    opts: { groupDomain: string; timeoutMs: number; warn: (message: string) => void },
  ) {
    this.identity = resourceIdentity(opts.groupDomain);
    this.timeoutMs = opts.timeoutMs;
    this.transport = new KubeTransport(connection.config, {
      timeoutMs: opts.timeoutMs > 0 ? opts.timeoutMs : NO_TIMEOUT_MS,
      connectTimeoutMs: CONNECT_TIMEOUT_MS,
      tlsHandshakeTimeoutMs: TLS_HANDSHAKE_TIMEOUT_MS,
      maxBodyBytes: 256 * 1024 * 1024,
    });
    this.warn = opts.warn;
  }

  private readonly warn: (message: string) => void;
  /** --request-timeout; 0: none. */
  private readonly timeoutMs: number;

  /** `ownedaccesskeys.management.loft.sh`, as kubectl names the resource in messages. */
  get resource(): string {
    return `${this.identity.resource}.${this.identity.group}`;
  }

  /** `ownedaccesskey.management.loft.sh`, as `-o name` and kubectl's confirmations print it. */
  get kindGroup(): string {
    return `${this.identity.kind.toLowerCase()}.${this.identity.group}`;
  }

  private collection(): string {
    return `/apis/${this.identity.group}/${this.identity.version}/${this.identity.resource}`;
  }

  private item(name: string): string {
    return `${this.collection()}/${encodeURIComponent(name)}`;
  }

  async get(name: string): Promise<KubeObject> {
    return (await this.call("GET", this.item(name))) as KubeObject;
  }

  async list(opts: ListOptions = {}): Promise<KubeObject[]> {
    return (await this.listWithVersion(opts)).items;
  }

  /**
   * The list with its resourceVersion, where a watch of the same selection starts (kubectl get -w
   * watches from the list's resourceVersion, so no change is missed nor shown twice).
   */
  async listWithVersion(
    opts: ListOptions = {},
  ): Promise<{ items: KubeObject[]; version: string; serverTime: number | undefined }> {
    const qs = listParams(opts).toString();
    const res = await this.exchange("GET", `${this.collection()}${qs ? `?${qs}` : ""}`);
    const list = res.body as { items?: KubeObject[]; metadata?: { resourceVersion?: string } };
    // The answer's Date: the API server's clock, which is vgate's (they share the cluster's time).
    const date = Date.parse(String(res.headers?.["date"] ?? ""));
    return {
      items: list.items ?? [],
      version: list.metadata?.resourceVersion ?? "",
      serverTime: Number.isFinite(date) ? date : undefined,
    };
  }

  /**
   * Watches the keys (`?watch=1`) from `resourceVersion`, calling `onEvent` for each ADDED,
   * MODIFIED or DELETED event. Settles when the server ends the watch (after --request-timeout,
   * or its own limit); an ERROR event or a refused watch is thrown as a KubeError.
   */
  watch(
    opts: ListOptions & { resourceVersion: string },
    onEvent: (type: string, obj: KubeObject) => void,
  ): { done: Promise<void> } {
    const query = listParams(opts);
    query.set("watch", "1");
    query.set("resourceVersion", opts.resourceVersion);
    query.set("allowWatchBookmarks", "false");
    let failure: unknown;
    // --request-timeout is client-go's http.Client timeout: the watch ends then, without an error,
    // as kubectl get -w ends (the server ignores ?timeout= for a watch).
    let timedOut = false;
    const timer =
      this.timeoutMs > 0
        ? setTimeout(() => {
            timedOut = true;
            stream.abort();
          }, this.timeoutMs)
        : undefined;
    const stream = this.transport.stream(
      `${this.collection()}?${query.toString()}`,
      (line) => {
        if (failure !== undefined || line.trim() === "") return;
        const event = JSON.parse(line) as { type?: string; object?: KubeObject };
        if (event.type === "ERROR") {
          const code = (event.object as { code?: unknown } | undefined)?.code;
          failure = statusError(typeof code === "number" ? code : 500, event.object);
          stream.abort();
          return;
        }
        if (event.type && event.type !== "BOOKMARK" && event.object)
          onEvent(event.type, event.object);
      },
      { headers: this.connection.headers },
    );
    const done = (async () => {
      let res: KubeResponse;
      try {
        res = await stream.done;
      } catch (err) {
        if (failure !== undefined) throw failure;
        if (timedOut) return;
        if (err instanceof TransportError) throw connectionError(err, this.connection.server);
        throw err;
      }
      if (failure !== undefined) throw failure;
      for (const warning of warnings(res.headers?.["warning"])) this.warn(warning);
      if (res.status !== 200) throw statusError(res.status, res.body);
    })().finally(() => clearTimeout(timer));
    return { done };
  }

  /** `dryRun`: the server runs admission (webhooks too) and stores nothing (?dryRun=All). */
  async create(obj: KubeObject, opts: { dryRun?: boolean } = {}): Promise<KubeObject> {
    const path = `${this.collection()}${opts.dryRun ? "?dryRun=All" : ""}`;
    return (await this.call("POST", path, obj)) as KubeObject;
  }

  async replace(obj: KubeObject): Promise<KubeObject> {
    return (await this.call("PUT", this.item(obj.metadata?.name ?? ""), obj)) as KubeObject;
  }

  async patch(name: string, ops: readonly JsonPatchOp[]): Promise<KubeObject> {
    return (await this.call(
      "PATCH",
      this.item(name),
      ops,
      "application/json-patch+json",
    )) as KubeObject;
  }

  /**
   * `preconditions`: the server deletes only the object with this uid (and resourceVersion), else
   * answers 409 Conflict. `dryRun`: admission runs, nothing is deleted (dryRun: [All]).
   */
  async delete(name: string, opts: DeleteOptions = {}): Promise<KubeObject> {
    // All in the body: with a body, kube-apiserver reads no DeleteOptions from the query, so a
    // ?dryRun=All next to preconditions would be ignored and the key deleted.
    const body =
      opts.preconditions || opts.dryRun
        ? {
            apiVersion: "v1",
            kind: "DeleteOptions",
            ...(opts.preconditions ? { preconditions: opts.preconditions } : {}),
            ...(opts.dryRun ? { dryRun: ["All"] } : {}),
          }
        : undefined;
    return (await this.call("DELETE", this.item(name), body)) as KubeObject;
  }

  /**
   * How vgate stores keys, from the ConfigMap vgate-info it publishes in `namespace` (readable by
   * every authenticated user): "plain", "hashed", or "unknown" when there is none to read, or it
   * is for another group domain.
   */
  async keyStorage(namespace: string): Promise<"plain" | "hashed" | "unknown"> {
    const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/configmaps/vgate-info`;
    let info: { data?: Record<string, unknown> };
    try {
      info = (await this.call("GET", path)) as { data?: Record<string, unknown> };
    } catch (err) {
      if (err instanceof KubeError && (err.code === 403 || err.code === 404)) return "unknown";
      throw err;
    }
    const domain = info.data?.["groupDomain"];
    if (domain !== undefined && domain !== this.identity.group.replace(/^management\./, ""))
      return "unknown";
    const mode = info.data?.["keyStorage"];
    return mode === "plain" || mode === "hashed" ? mode : "unknown";
  }

  /**
   * The core/v1 Events about `key`, as kubectl describe searches them (describe.go searchEvents):
   * the involvedObject's name, namespace (none: the key is cluster-scoped), kind and uid as a field
   * selector, 500 a page, every page. `namespace` undefined lists Events in all namespaces, as
   * kubectl does for a cluster-scoped object. A refused list is thrown as a KubeError.
   */
  async events(key: KubeObject, namespace?: string): Promise<KubeObject[]> {
    const meta = (key.metadata ?? {}) as { name?: unknown; uid?: unknown };
    const terms: [string, unknown][] = [
      ["involvedObject.name", meta.name],
      ["involvedObject.namespace", ""],
      ["involvedObject.kind", this.identity.kind],
      ["involvedObject.uid", meta.uid],
    ];
    const selector = terms
      .filter((t): t is [string, string] => typeof t[1] === "string")
      .map(([field, value]) => `${field}=${escapeFieldValue(value)}`)
      .join(",");
    const base =
      namespace === undefined
        ? "/api/v1/events"
        : `/api/v1/namespaces/${encodeURIComponent(namespace)}/events`;
    const items: KubeObject[] = [];
    let next = "";
    do {
      const query = new URLSearchParams({ fieldSelector: selector, limit: "500" });
      if (next) query.set("continue", next);
      const page = (await this.call("GET", `${base}?${query.toString()}`)) as {
        items?: KubeObject[];
        metadata?: { continue?: string };
      };
      items.push(...(page.items ?? []));
      next = page.metadata?.continue ?? "";
    } while (next);
    return items;
  }

  /** Who the API server says we are (authentication.k8s.io/v1 SelfSubjectReview). */
  async whoAmI(): Promise<{ userInfo: UserInfo; review: KubeObject }> {
    const review = (await this.call("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", {
      apiVersion: "authentication.k8s.io/v1",
      kind: "SelfSubjectReview",
    })) as KubeObject & { status?: { userInfo?: UserInfo } };
    return { userInfo: review.status?.userInfo ?? {}, review };
  }

  /** Removes every credential the transport sent from `text`. */
  redact(text: string): string {
    return this.transport.redact(text);
  }

  close(): void {
    this.transport.close();
  }

  private async call(
    method: string,
    path: string,
    body?: unknown,
    contentType?: string,
  ): Promise<unknown> {
    return (await this.exchange(method, path, body, contentType)).body;
  }

  /** One request; a 2xx answer whole (headers too), any other as a KubeError. */
  private async exchange(
    method: string,
    path: string,
    body?: unknown,
    contentType?: string,
  ): Promise<KubeResponse> {
    let res: KubeResponse;
    if (this.timeoutMs > 0) {
      // client-go sends its deadline along (rest.Request.Timeout): the server gives up too.
      path += `${path.includes("?") ? "&" : "?"}timeout=${goDuration(this.timeoutMs)}`;
    }
    try {
      res = await this.transport.request(method, path, body, {
        headers: this.connection.headers,
        ...(contentType ? { contentType } : {}),
      });
    } catch (err) {
      if (err instanceof TransportError) throw connectionError(err, this.connection.server);
      throw err;
    }
    for (const warning of warnings(res.headers?.["warning"])) this.warn(warning);
    if (res.status >= 200 && res.status < 300) return res;
    if (res.status === 404 && path.startsWith(this.collection()) && !namesAnObject(res.body)) {
      // A 404 that names no object: the path itself may not exist. kubectl finds that out by
      // discovery before it sends anything; the plugin asks only when it matters.
      const missing = await this.missingResourceType();
      if (missing) throw missing;
    }
    throw statusError(res.status, res.body);
  }

  /**
   * Whether discovery serves `ownedaccesskeys` in our group and version; if not, the error that
   * says so, with the management.* groups that do serve them. Undefined when discovery cannot tell.
   */
  private async missingResourceType(): Promise<ResourceTypeError | undefined> {
    const { group, version, resource } = this.identity;
    const served = await this.servesResource(`${group}/${version}`);
    if (served !== false) return undefined;
    return new ResourceTypeError(resource, group, version, await this.groupsServingResource());
  }

  /** true/false from the group version's discovery document; undefined when it cannot be read. */
  private async servesResource(groupVersion: string): Promise<boolean | undefined> {
    let res: KubeResponse;
    try {
      res = await this.transport.request("GET", `/apis/${groupVersion}`, undefined, {
        headers: this.connection.headers,
      });
    } catch {
      return undefined;
    }
    if (res.status === 404) return false;
    if (res.status !== 200) return undefined;
    const resources = (res.body as { resources?: { name?: unknown }[] } | undefined)?.resources;
    return Array.isArray(resources) && resources.some((r) => r.name === this.identity.resource);
  }

  /** The groups management.<domain> whose discovery lists ownedaccesskeys, sorted. */
  private async groupsServingResource(): Promise<string[]> {
    let res: KubeResponse;
    try {
      res = await this.transport.request("GET", "/apis", undefined, {
        headers: this.connection.headers,
      });
    } catch {
      return [];
    }
    const groups = (res.body as { groups?: unknown } | undefined)?.groups;
    if (res.status !== 200 || !Array.isArray(groups)) return [];
    const candidates = (
      groups as { name?: unknown; preferredVersion?: { groupVersion?: unknown } }[]
    )
      .filter((g) => typeof g.name === "string" && g.name.startsWith("management."))
      .filter((g) => g.name !== this.identity.group)
      .map((g) => `${g.name as string}/${this.identity.version}`);
    const found: string[] = [];
    for (const groupVersion of candidates) {
      if (await this.servesResource(groupVersion)) found.push(groupVersion.split("/")[0]!);
    }
    return found.sort();
  }
}

/** Whether an error answer's Status names the object it is about (details.name). */
function namesAnObject(body: unknown): boolean {
  const details = (body as { details?: { name?: unknown } } | undefined)?.details;
  return typeof details?.name === "string" && details.name !== "";
}

/** The plugin's error for a request that got no answer, by the TransportError's `failure`. */
function connectionError(err: TransportError, server: string): Error {
  const message = err.detail;
  if (err.failure === "Kubeconfig") {
    // A file the kubeconfig names (a CA, a client certificate, a credential plugin) in words.
    const system = systemErrorIn(err.cause);
    if (system)
      return new KubeconfigError(
        `cannot use the kubeconfig: ${systemErrorSentence(system)}; ${kubeconfigFix(system)}`,
      );
    return new KubeconfigError(message);
  }
  const words = err.failure === undefined ? undefined : NETWORK_WORDS[err.failure];
  let text = message;
  if (err.failure === "RequestTimeout") text = `${message} (--request-timeout)`;
  else if (words) text = networkSentence(words, err.failure!, server);
  return new ConnectionError(text, server, err.failure === "ECONNREFUSED");
}

// A socket's errno in Go's words, as kubectl prints them after "Unable to connect to the server: ".
const NETWORK_WORDS: Readonly<Record<string, string>> = {
  ECONNRESET: "connection reset by peer",
  EPIPE: "broken pipe",
  ECONNABORTED: "software caused connection abort",
  ENOTFOUND: "no such host",
  EAI_AGAIN: "temporary failure in name resolution",
  EHOSTUNREACH: "no route to host",
  ENETUNREACH: "network is unreachable",
  ETIMEDOUT: "i/o timeout",
  EADDRNOTAVAIL: "cannot assign requested address",
};

function networkSentence(words: string, code: string, server: string): string {
  let url: URL | undefined;
  try {
    url = new URL(server);
  } catch {
    url = undefined;
  }
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") {
    return `dial tcp: lookup ${url?.hostname ?? server}: ${words}`;
  }
  const host = url?.host ?? server;
  return code === "ECONNRESET" || code === "EPIPE" || code === "ECONNABORTED"
    ? `read tcp ${host}: ${words}`
    : `dial tcp ${host}: ${words}`;
}

/**
 * The texts of RFC 7234 warnings (`299 - "text"`), as client-go reads them; node joins repeated
 * headers with ", ".
 */
export function warnings(header: string | string[] | undefined): string[] {
  if (header === undefined) return [];
  // Node reads header bytes as latin1; the warning's text is UTF-8 (kube-apiserver writes it so).
  const all = Buffer.from(Array.isArray(header) ? header.join(", ") : header, "latin1").toString(
    "utf8",
  );
  const out: string[] = [];
  for (const m of all.matchAll(/\d{3} \S+ "((?:[^"\\]|\\.)*)"/g)) {
    out.push(m[1]!.replace(/\\(.)/g, "$1"));
  }
  return out;
}
