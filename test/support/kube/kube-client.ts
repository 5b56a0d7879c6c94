// A small JSON client for test setup and assertions against a real API server. It is
// deliberately independent of vgate's own kube client, which is under test.

import type { ClientRequest } from "node:http";
import { Agent, request } from "node:https";
import type { CertAndKey } from "./pki.js";

export type KubeObject = Record<string, unknown> & {
  apiVersion: string;
  kind: string;
  metadata: Record<string, unknown> & { name?: string; namespace?: string };
};

export interface KubeReply<T = Record<string, unknown>> {
  status: number;
  body: T;
}

export interface Credentials {
  /** The CA of the API server. */
  ca: string;
  client?: CertAndKey;
  token?: string;
}

/** Paths of well-known kinds; anything else is found through `resourcePath`'s `plural`. */
const CORE_PLURALS: Record<string, string> = {
  Namespace: "namespaces",
  ServiceAccount: "serviceaccounts",
  Service: "services",
  Endpoints: "endpoints",
  ConfigMap: "configmaps",
  Secret: "secrets",
  ClusterRole: "clusterroles",
  ClusterRoleBinding: "clusterrolebindings",
  Role: "roles",
  RoleBinding: "rolebindings",
  CustomResourceDefinition: "customresourcedefinitions",
  MutatingWebhookConfiguration: "mutatingwebhookconfigurations",
  ValidatingWebhookConfiguration: "validatingwebhookconfigurations",
  OwnedAccessKey: "ownedaccesskeys",
};

/** The collection path of `apiVersion`/`kind` (in `namespace`), e.g. /api/v1/namespaces/x/services. */
export function collectionPath(apiVersion: string, kind: string, namespace?: string): string {
  const plural = CORE_PLURALS[kind] ?? `${kind.toLowerCase()}s`;
  const base = apiVersion.includes("/") ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  return namespace ? `${base}/namespaces/${namespace}/${plural}` : `${base}/${plural}`;
}

export function objectPath(obj: Pick<KubeObject, "apiVersion" | "kind" | "metadata">): string {
  const { name, namespace } = obj.metadata;
  return `${collectionPath(obj.apiVersion, obj.kind, namespace)}/${encodeURIComponent(name ?? "")}`;
}

export class KubeTestClient {
  private readonly agent: Agent;

  constructor(
    readonly server: string,
    private readonly creds: Credentials,
  ) {
    this.agent = new Agent({
      keepAlive: true,
      ca: creds.ca,
      ...(creds.client ? { cert: creds.client.cert, key: creds.client.key } : {}),
    });
  }

  request<T = Record<string, unknown>>(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<KubeReply<T>> {
    const data = body === undefined ? undefined : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = request(
        new URL(path, this.server),
        {
          method,
          agent: this.agent,
          timeout: 30_000,
          headers: {
            Accept: "application/json",
            ...(data !== undefined ? { "Content-Type": "application/json" } : {}),
            ...(this.creds.token ? { Authorization: `Bearer ${this.creds.token}` } : {}),
            ...headers,
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8");
            let parsed: unknown = text;
            try {
              parsed = text ? JSON.parse(text) : {};
            } catch {
              // not JSON: the text is the body
            }
            resolve({ status: res.statusCode ?? 0, body: parsed as T });
          });
          res.on("error", reject);
        },
      );
      req.on("timeout", () => req.destroy(new Error(`${method} ${path} timed out`)));
      req.on("error", reject);
      req.end(data);
    });
  }

  /** Creates `obj`; throws unless the API server answers 201. */
  async create<T extends KubeObject>(obj: T, query = ""): Promise<T> {
    const res = await this.request<T>(
      "POST",
      collectionPath(obj.apiVersion, obj.kind, obj.metadata.namespace) + query,
      obj,
    );
    if (res.status !== 201 && res.status !== 200) throw replyError("create", obj, res);
    return res.body;
  }

  /** Creates `obj`, or replaces what is there under its name. */
  async apply<T extends KubeObject>(obj: T): Promise<T> {
    const created = await this.request<T>(
      "POST",
      collectionPath(obj.apiVersion, obj.kind, obj.metadata.namespace),
      obj,
    );
    if (created.status === 201) return created.body;
    if (created.status !== 409) throw replyError("create", obj, created);
    for (let attempt = 0; ; attempt++) {
      const live = await this.get<T>(obj);
      const next = {
        ...obj,
        metadata: { ...obj.metadata, resourceVersion: live?.metadata.resourceVersion },
      };
      const res = await this.request<T>("PUT", objectPath(obj), next);
      if (res.status === 200) return res.body;
      if (res.status !== 409 || attempt > 5) throw replyError("replace", obj, res);
    }
  }

  async get<T extends KubeObject>(
    obj: Pick<KubeObject, "apiVersion" | "kind" | "metadata">,
  ): Promise<T | null> {
    const res = await this.request<T>("GET", objectPath(obj));
    if (res.status === 404) return null;
    if (res.status !== 200) throw replyError("get", obj, res);
    return res.body;
  }

  /** Deletes `obj` (finalizers removed first when `force`); true when it was there. */
  async delete(
    obj: Pick<KubeObject, "apiVersion" | "kind" | "metadata">,
    opts: { force?: boolean } = {},
  ): Promise<boolean> {
    if (opts.force) {
      const res = await this.request(
        "PATCH",
        objectPath(obj),
        { metadata: { finalizers: null } },
        { "Content-Type": "application/merge-patch+json" },
      );
      if (res.status === 404) return false;
    }
    const res = await this.request("DELETE", objectPath(obj));
    if (res.status === 404) return false;
    if (res.status !== 200 && res.status !== 202) throw replyError("delete", obj, res);
    return true;
  }

  /**
   * Opens a watch (`path` with `?watch=true…`) and calls `onEvent` with each event as it arrives.
   * `done` resolves when the stream ends (the server's timeoutSeconds, or stop()) and rejects when
   * it cannot be opened (an answer other than 200, or no answer).
   */
  watch(path: string, onEvent: (event: WatchEvent) => void): OpenWatch {
    let req: ClientRequest | undefined;
    let stopped = false;
    const done = new Promise<void>((resolve, reject) => {
      req = request(
        new URL(path, this.server),
        {
          method: "GET",
          agent: this.agent,
          headers: {
            Accept: "application/json",
            ...(this.creds.token ? { Authorization: `Bearer ${this.creds.token}` } : {}),
          },
        },
        (res) => {
          if (res.statusCode !== 200) {
            res.resume();
            return reject(new Error(`watch ${path}: ${res.statusCode}`));
          }
          let buffered = "";
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => {
            buffered += chunk;
            let nl: number;
            while ((nl = buffered.indexOf("\n")) >= 0) {
              const line = buffered.slice(0, nl).trim();
              buffered = buffered.slice(nl + 1);
              if (line) onEvent(JSON.parse(line) as WatchEvent);
            }
          });
          res.on("end", () => resolve());
          res.on("close", () => resolve());
          res.on("error", (err) => (stopped ? resolve() : reject(err)));
        },
      );
      req.on("error", (err) => (stopped ? resolve() : reject(err)));
      req.end();
    });
    return {
      done,
      stop: () => {
        stopped = true;
        req?.destroy();
      },
    };
  }

  close(): void {
    this.agent.destroy();
  }
}

export interface WatchEvent {
  type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";
  object: Record<string, unknown>;
}

export interface OpenWatch {
  done: Promise<void>;
  stop(): void;
}

function replyError(
  verb: string,
  obj: Pick<KubeObject, "kind" | "metadata">,
  res: KubeReply<unknown>,
): Error {
  const message =
    typeof res.body === "object" && res.body && "message" in res.body
      ? String((res.body as { message: unknown }).message)
      : JSON.stringify(res.body);
  return new Error(`${verb} ${obj.kind} ${obj.metadata.name ?? ""}: ${res.status} ${message}`);
}
