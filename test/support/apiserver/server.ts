// The emulated kube-apiserver: HTTPS, kube's filter chain and REST storage. Each request goes
// through one pipeline: record -> (delay) -> (down?) -> authenticate (client certificate, tokens,
// token webhook) -> authorize (system:masters, then the authorizer: RBAC and/or a webhook) ->
// route -> JSON answer, metav1.Status or a watch stream. Writes then run mutating admission,
// schema validation, validating admission and storage (objects.ts).

import https from "node:https";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { KubeError, asKubeError } from "../../../webhook/src/api/status.js";
import { AdmissionWebhookError, AdmissionWebhooks } from "./admission-webhooks.js";
import { createAuthenticator, type RequestAuthenticator } from "./authn.js";
import { impersonationOf } from "./impersonation.js";
import {
  authorizeRequest,
  mastersOnly,
  type AsyncAuthorizer,
  type RequestAttributes,
  type UserIdentity,
} from "./authorizer.js";
import * as discovery from "./discovery.js";
import { pathNotFound, serviceUnavailable } from "./errors.js";
import type { AdmissionHook } from "./admission-types.js";
import { acceptAll, handleObjects, type ObjectValidator, type Reply } from "./objects.js";
import { JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH, mediaType } from "./patch.js";
import { openApiV3Document, openApiV3Root } from "./openapi.js";
import { parseRequestInfo, type RequestInfo } from "./request-info.js";
import { ResourceRegistry, type ResourceType } from "./resources.js";
import { reviewRoutes, type RuleResolver } from "./reviews.js";
import { Router } from "./router.js";
import { asTable, wantsTable } from "./table.js";
import type { ObjectStore } from "./store.js";
import { Watch, isWatch, parseWatchParams } from "./watch.js";

export interface RequestRecord {
  method: string;
  /** The URL path without the query. */
  path: string;
  query: string;
  /** The authenticated user, or "" when authentication failed. */
  user: string;
  /** The parsed JSON body, when there was one. */
  body?: unknown;
  /** The HTTP status answered (for a watch: 200 once the stream started); unset until then. */
  status?: number;
}

interface Context {
  method: string;
  path: string;
  query: URLSearchParams;
  identity: UserIdentity;
  body: unknown;
  /** The Content-Type header ("" when absent). */
  contentType: string;
}

// kube-apiserver's default request body limit (3 MiB).
const MAX_BODY_BYTES = 3 * 1024 * 1024;

export class ApiServerCore {
  /** After the system:masters bypass: RBAC, a webhook, or a test's hook. */
  authorize: AsyncAuthorizer = mastersOnly;
  /** For SelfSubjectRulesReview, in authorizer order (e.g. RBAC's rulesFor). */
  ruleResolvers: RuleResolver[] = [];
  readonly requests: RequestRecord[] = [];
  /** Static bearer tokens (--token-auth-file); a live map. */
  readonly tokens = new Map<string, UserIdentity>();
  /** The authenticator chain; listen() rebuilds it with the client CA. */
  authenticator: RequestAuthenticator = createAuthenticator({ tokens: this.tokens });
  down = false;
  delayMs = 0;
  /** The request log keeps this many newest records (a benchmark must not grow it forever). */
  maxRecords = 10_000;
  /** How often a watch with allowWatchBookmarks gets a BOOKMARK event. */
  bookmarkIntervalMs = 1_000;
  /** Mutating and validating admission webhooks, as configured by the stored configurations. */
  admission: AdmissionHook;
  /** Schema validation and pruning, between mutating and validating admission; identity unless replaced. */
  validateObject: ObjectValidator = acceptAll;
  private readonly watches = new Set<Watch>();
  private readonly router = new Router<Context>();
  private server: https.Server | undefined;

  constructor(
    readonly registry: ResourceRegistry,
    readonly store: ObjectStore,
  ) {
    this.admission = new AdmissionWebhooks(store, registry);
    this.router
      .add("GET", "/version", () => ok(discovery.SERVER_VERSION))
      .add("GET", "/api", () => ok(discovery.apiVersions(this.address())))
      .add("GET", "/apis", () => ok(discovery.apiGroupList(this.registry)))
      .add("GET", "/apis/:group", (_c, p) =>
        found(discovery.apiGroupDocument(this.registry, p["group"]!)),
      )
      .add("GET", "/api/:version", (_c, p) =>
        found(discovery.apiResourceList(this.registry, "", p["version"]!)),
      )
      .add("GET", "/apis/:group/:version", (_c, p) =>
        found(discovery.apiResourceList(this.registry, p["group"]!, p["version"]!)),
      )
      .add("GET", "/openapi/v3", () => ok(openApiV3Root(this.registry)))
      .add("GET", "/openapi/v3/api/:version", (_c, p) =>
        found(openApiV3Document(this.registry, "", p["version"]!)),
      )
      .add("GET", "/openapi/v3/apis/:group/:version", (_c, p) =>
        found(openApiV3Document(this.registry, p["group"]!, p["version"]!)),
      );
    this.addReviewRoutes();
  }

  /** Token, self-subject and access reviews; creating one needs `create` on its resource. */
  private addReviewRoutes(): void {
    const deps = {
      authorizer: () => this.authorize,
      authenticateToken: (token: string) => this.authenticator.token(token),
      ruleResolvers: this.ruleResolvers,
    };
    for (const r of reviewRoutes(deps)) {
      this.router.add(r.method, r.pattern, async (ctx, params) => {
        const namespace = params["namespace"] ?? "";
        await this.authorizeRequest(ctx.identity, { ...r.attributes, namespace });
        return r.handle(ctx.identity, ctx.body, namespace);
      });
    }
  }

  /**
   * Serves HTTPS on 127.0.0.1. With `clientCaPem`, client certificates signed by it authenticate
   * (CN the user, O the groups); the server names that CA in its certificate request, as Go clients
   * such as kubectl only send a certificate whose issuer is listed.
   */
  async listen(
    tls: { cert: string; key: string },
    opts: { clientCaPem?: string; tokenWebhookConfigFile?: string; port?: number } = {},
  ): Promise<void> {
    if (opts.clientCaPem || opts.tokenWebhookConfigFile) {
      this.authenticator = createAuthenticator({
        tokens: this.tokens,
        ...(opts.clientCaPem ? { clientCaPem: opts.clientCaPem } : {}),
        ...(opts.tokenWebhookConfigFile ? { webhookConfigFile: opts.tokenWebhookConfigFile } : {}),
      });
    }
    const options: https.ServerOptions = {
      cert: tls.cert,
      key: tls.key,
      requestCert: true,
      rejectUnauthorized: false,
      ...(opts.clientCaPem ? { ca: opts.clientCaPem } : {}),
    };
    const server = https.createServer(options, (req, res) => {
      void this.serve(req, res);
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(opts.port ?? 0, "127.0.0.1", () => resolve());
    });
    this.server = server;
  }

  address(): string {
    const addr = this.server?.address() as AddressInfo | null | undefined;
    return addr ? `127.0.0.1:${addr.port}` : "";
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    this.endWatches();
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "https://localhost");
    const method = req.method ?? "GET";
    const record: RequestRecord = { method, path: url.pathname, query: url.search, user: "" };
    this.requests.push(record);
    if (this.requests.length > this.maxRecords)
      this.requests.splice(0, this.requests.length - this.maxRecords);
    let reply: Reply | Watch;
    try {
      const contentType = req.headers["content-type"] ?? "";
      const body = await readBody(req, method, contentType);
      if (body !== undefined) record.body = body;
      if (this.delayMs > 0) await sleep(this.delayMs);
      if (this.down) throw serviceUnavailable();
      const identity = await this.identify(req);
      record.user = identity.user;
      reply = await this.route({
        method,
        path: url.pathname,
        query: url.searchParams,
        identity,
        body,
        contentType,
      });
    } catch (err) {
      reply = errorReply(err);
    }
    if (res.destroyed) {
      if (reply instanceof Watch) reply.end();
      return;
    }
    record.status = reply.status;
    if (reply instanceof Watch) return reply.start(res, record);
    const headers: Record<string, string | string[]> = { "Content-Type": "application/json" };
    if (reply.warnings?.length) headers["Warning"] = reply.warnings.map(warningHeader);
    res.writeHead(reply.status, headers);
    // Server-side printing for `kubectl get` (Accept: ...;as=Table;v=v1;g=meta.k8s.io).
    const body = wantsTable(req.headers.accept)
      ? asTable(this.registry, reply.body, url.searchParams.get("includeObject") ?? undefined)
      : reply.body;
    res.end(JSON.stringify(body));
  }

  /** The requests whose watch streams are open now. */
  openWatches(): RequestRecord[] {
    return [...this.watches].flatMap((w) => (w.record ? [w.record] : []));
  }

  /** Ends every open watch stream cleanly, as a restarting kube-apiserver drops its watches. */
  endWatches(): number {
    const open = [...this.watches];
    for (const w of open) w.end();
    return open.length;
  }

  /** Authentication, then impersonation (allowed per header by the `impersonate` verb). */
  private async identify(req: IncomingMessage): Promise<UserIdentity> {
    const requester = await this.authenticator(req);
    const impersonation = impersonationOf(req);
    if (!impersonation) return requester;
    for (const check of impersonation.checks) await this.authorizeRequest(requester, check);
    return impersonation.identity;
  }

  private async route(ctx: Context): Promise<Reply | Watch> {
    const route = this.router.match(ctx.method, ctx.path);
    if (route) {
      // Discovery, OpenAPI and /version are non-resource URLs; kube authorizes them too
      // (system:discovery and system:public-info-viewer grant them to everyone authenticated).
      if (ctx.method === "GET") await this.authorizeRequest(ctx.identity, nonResource(ctx.path));
      return route.handle(ctx, route.params);
    }
    const parsed = parseRequestInfo(ctx.method, ctx.path);
    const type = parsed && this.registry.byResource(parsed.group, parsed.version, parsed.resource);
    if (!parsed || !type) throw pathNotFound();
    const watching = isWatch(ctx.query) && (parsed.verb === "list" || parsed.verb === "get");
    // kube's RequestInfo: a GET with watch=true is the "watch" verb, also on a single object.
    const info = watching ? { ...parsed, verb: "watch" } : parsed;
    if (!inScope(type, info)) throw pathNotFound();
    await this.authorizeRequest(ctx.identity, info);
    if (watching) return this.watch(type, info, ctx.query);
    return handleObjects({
      store: this.store,
      type,
      info,
      query: ctx.query,
      body: ctx.body,
      contentType: ctx.contentType,
      user: ctx.identity,
      admission: this.admission,
      validateObject: this.validateObject,
    });
  }

  private watch(type: ResourceType, info: RequestInfo, query: URLSearchParams): Watch {
    if (info.subresource) throw pathNotFound();
    const options = { bookmarkIntervalMs: this.bookmarkIntervalMs };
    const params = parseWatchParams(query, type);
    const watch = new Watch(this.store, type, info, params, options, (w) => this.watches.delete(w));
    this.watches.add(watch);
    return watch;
  }

  /** kube: members of system:masters bypass authorization; everyone else asks the authorizer. */
  private authorizeRequest(identity: UserIdentity, request: RequestAttributes): Promise<void> {
    return authorizeRequest(this.authorize, identity, request);
  }
}

function nonResource(path: string): RequestAttributes {
  return { verb: "get", group: "", resource: "", subresource: "", name: "", namespace: "", path };
}

/**
 * A failure as kube answers it: the metav1.Status (kube omits an empty reason), with the warnings
 * admission webhooks gave before a denial as Warning headers.
 */
function errorReply(err: unknown): Reply {
  const kerr = asKubeError(err);
  const body = kerr.toStatus() as unknown as Record<string, unknown>;
  if (body["reason"] === "") delete body["reason"];
  const warnings = err instanceof AdmissionWebhookError ? err.warnings : [];
  return { status: kerr.code, body, ...(warnings.length ? { warnings } : {}) };
}

/** Namespaced objects are only addressed inside a namespace (lists may span all of them). */
function inScope(type: ResourceType, info: RequestInfo): boolean {
  if (!type.namespaced) return info.namespace === "";
  return info.namespace !== "" || ((info.verb === "list" || info.verb === "watch") && !info.name);
}

const ok = (body: unknown): Reply => ({ status: 200, body });

function found(body: object | null): Reply {
  if (!body) throw pathNotFound();
  return ok(body);
}

/** RFC 7234 warn-code 299 with the agent "-", as kube's warning recorder writes it. */
export function warningHeader(text: string): string {
  return `299 - "${text.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

// PATCH bodies of these media types are JSON; any other one is kept as text (the patch handler
// answers 415 for it before reading it).
const JSON_PATCH_TYPES = new Set([
  "application/json",
  JSON_PATCH,
  MERGE_PATCH,
  STRATEGIC_MERGE_PATCH,
]);

async function readBody(
  req: IncomingMessage,
  method: string,
  contentType: string,
): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) {
      throw new KubeError(
        413,
        "RequestEntityTooLarge",
        "Request entity too large: limit is 3145728",
      );
    }
    chunks.push(chunk);
  }
  if (chunks.length === 0) return undefined;
  const text = Buffer.concat(chunks).toString();
  if (method === "PATCH" && !JSON_PATCH_TYPES.has(mediaType(contentType))) return text;
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new KubeError(
      400,
      "BadRequest",
      `json: ${err instanceof Error ? err.message : "invalid"}`,
    );
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
