// A small, faithful, in-process Kubernetes API server for tests. It speaks HTTPS with a fresh
// self-signed certificate, authenticates bearer tokens, authorizes through a replaceable hook, and
// serves discovery, SubjectAccessReview and in-memory objects with kube-shaped errors. Clients use
// it exactly as a real cluster: through the kubeconfig file it writes.

import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_GROUP_DOMAIN } from "../../../webhook/src/api/ownedaccesskey.js";
import { MASTERS, union, type AsyncAuthorizer, type UserIdentity } from "./authorizer.js";
import { webhookAuthorizerFromFile, webhookRuleResolver } from "./authz-webhook.js";
import { clientCa, clientCert, type CertAndKey } from "./client-certs.js";
import { rbacAuthorizer, storeSource } from "./rbac.js";
import { bootstrapRbac } from "./rbac-bootstrap.js";
import { writeKubeconfig } from "../kube/kubeconfig-file.js";
import { CrdController, loadCrdFiles, manifestCrdFiles } from "./crds.js";
import { ResourceRegistry, defaultResources, type ResourceType } from "./resources.js";
import { validateAndPrune } from "./schema.js";
import { ApiServerCore, type RequestRecord } from "./server.js";
import { DEFAULT_HISTORY, ObjectStore, type KubeObject } from "./store.js";
import { servingCert } from "./tls.js";

export type {
  AsyncAuthorizer,
  AuthorizationAttributes,
  Authorizer,
  AuthorizerDecision,
  UserIdentity,
} from "./authorizer.js";
export type { RequestRecord } from "./server.js";
export type { KubeObject } from "./store.js";
export { resourceType, type ResourceType } from "./resources.js";

export interface StartApiServerOptions {
  /** `loft.sh` unless set: the management.<domain> and storage.<domain> groups. */
  groupDomain?: string;
  /** How many requests `requests` keeps (the newest); 10000 unless set. */
  maxRecordedRequests?: number;
  /**
   * How many changes the store keeps for watches resuming from a resourceVersion (1000 unless
   * set); a watch from an older one gets 410 Expired. Make it tiny to provoke that.
   */
  watchHistory?: number;
  /** How often a watch with allowWatchBookmarks gets a BOOKMARK event; 1000 ms unless set. */
  bookmarkIntervalMs?: number;
  /**
   * CRDs to install at start: YAML files, or "manifests" for the repository's manifests/ CRDs
   * (which also turns builtinOwnedAccessKeys off).
   */
  crds?: "manifests" | string[];
  /**
   * Serve ownedaccesskeys as a schemaless built-in type (true unless `crds` is "manifests"); turn
   * it off to install the real CRD, through `crds` or the API.
   */
  builtinOwnedAccessKeys?: boolean;
  /**
   * "rbac": kube's RBAC authorizer over the stored Roles and bindings, with kube's bootstrap roles
   * (cluster-admin for system:masters, discovery for everyone authenticated). Otherwise the
   * replaceable `authorize` hook decides (system:masters only, unless a test sets it).
   */
  authorization?: "rbac";
  /** --authorization-webhook-config-file: a webhook asked before RBAC (union authorizer). */
  authorizationWebhookConfigFile?: string;
  /** --authentication-token-webhook-config-file: tokens not in the static map go to this webhook. */
  tokenWebhookConfigFile?: string;
  /** Accept client certificates signed by a fresh CA (see `clientCertKubeconfig`). */
  clientCertificates?: boolean;
  /** Listen on this port instead of a free one. */
  port?: number;
}

/** The identity behind `token`: like kind's admin user, a member of system:masters. */
export const ADMIN_USER: UserIdentity = {
  user: "kubernetes-admin",
  groups: [MASTERS, "system:authenticated"],
};

export interface TestApiServer {
  /** `https://127.0.0.1:<port>` */
  url: string;
  caPem: string;
  /** A kubeconfig for ADMIN_USER with the CA inline and `token`. */
  kubeconfigPath: string;
  token: string;
  groupDomain: string;
  /** Decides SubjectAccessReviews and requests of users outside system:masters. Replaceable. */
  authorize: AsyncAuthorizer;
  /** The requests received, oldest first (the newest maxRecordedRequests of them). */
  requests: RequestRecord[];
  /** The served resource types; add one to simulate installing a CRD. */
  registry: ResourceRegistry;
  /** Stores an object as is (server-owned metadata filled in); returns the stored copy. */
  put(obj: KubeObject): KubeObject;
  get(
    apiVersion: string,
    kindOrResource: string,
    name: string,
    namespace?: string,
  ): KubeObject | undefined;
  /** Installs a CustomResourceDefinition (validated, served and Established at once). */
  installCrd(crd: KubeObject): KubeObject;
  /** Deletes an object; false when there was none. */
  remove(apiVersion: string, kindOrResource: string, name: string, namespace?: string): boolean;
  /** Makes `token` authenticate as `identity`. */
  addToken(token: string, identity: UserIdentity): void;
  /** Writes another kubeconfig (same server and CA) for `token`; returns its path. */
  writeKubeconfig(token: string, name?: string): Promise<string>;
  /**
   * With `clientCertificates`: writes a kubeconfig whose user is a client certificate for `user`
   * in `groups` (CN and O), signed by the server's client CA; returns its path.
   */
  clientCertKubeconfig(user: string, groups?: string[]): Promise<string>;
  /** While down, every request is answered 503 ServiceUnavailable and open watches are ended. */
  setDown(down: boolean): void;
  /** Ends every open watch stream cleanly (as an API server restart would); returns how many. */
  endWatches(): number;
  /** The requests whose watch streams are open now. */
  openWatches(): RequestRecord[];
  /** Delays every answer, to make clients hit their deadlines. */
  setDelay(ms: number): void;
  close(): Promise<void>;
}

export async function startApiServer(opts: StartApiServerOptions = {}): Promise<TestApiServer> {
  const groupDomain = opts.groupDomain ?? DEFAULT_GROUP_DOMAIN;
  const registry = new ResourceRegistry();
  const builtinOwnedAccessKeys = opts.builtinOwnedAccessKeys ?? opts.crds !== "manifests";
  for (const type of defaultResources(groupDomain, { builtinOwnedAccessKeys })) registry.add(type);
  const core = new ApiServerCore(registry, new ObjectStore(opts.watchHistory ?? DEFAULT_HISTORY));
  // Schema validation and pruning of custom resources, and CRD validation, on every write.
  core.validateObject = (type, obj) => validateAndPrune(registry, type, obj);
  const crds = new CrdController(registry, core.store);
  const crdFiles = opts.crds === "manifests" ? manifestCrdFiles() : (opts.crds ?? []);
  for (const crd of loadCrdFiles(crdFiles)) crds.install(crd);
  if (opts.maxRecordedRequests !== undefined) core.maxRecords = opts.maxRecordedRequests;
  if (opts.bookmarkIntervalMs !== undefined) core.bookmarkIntervalMs = opts.bookmarkIntervalMs;
  configureAuthorization(core, opts);
  const tls = await servingCert();
  const ca = opts.clientCertificates ? await clientCa() : null;
  await core.listen(tls, {
    ...(ca ? { clientCaPem: ca.cert } : {}),
    ...(opts.tokenWebhookConfigFile ? { tokenWebhookConfigFile: opts.tokenWebhookConfigFile } : {}),
    ...(opts.port ? { port: opts.port } : {}),
  });
  const dir = await mkdtemp(join(tmpdir(), "vgate-apiserver-"));
  const token = randomBytes(32).toString("hex");
  core.tokens.set(token, ADMIN_USER);
  const url = `https://${core.address()}`;
  const kubeconfigFor = (t: string, name: string) =>
    writeKubeconfig(join(dir, `${name}.kubeconfig`), {
      server: url,
      caPem: tls.cert,
      token: t,
      name,
    });
  const kubeconfigPath = await kubeconfigFor(token, "vgate-test");
  return new Handle(
    core,
    { url, caPem: tls.cert, kubeconfigPath, token, groupDomain },
    dir,
    kubeconfigFor,
    crds,
    ca,
  );
}

/** The authorizer chain kube-apiserver would be started with (--authorization-mode). */
function configureAuthorization(core: ApiServerCore, opts: StartApiServerOptions): void {
  if (opts.authorization !== "rbac" && !opts.authorizationWebhookConfigFile) return;
  const rbac =
    opts.authorization === "rbac" ? rbacAuthorizer(storeSource(core.store, core.registry)) : null;
  const webhook = opts.authorizationWebhookConfigFile
    ? webhookAuthorizerFromFile(opts.authorizationWebhookConfigFile)
    : null;
  const chain = [webhook, rbac].filter((a): a is NonNullable<typeof a> => a !== null);
  core.authorize = chain.length === 1 ? chain[0]! : union(...chain);
  if (webhook) core.ruleResolvers.push(webhookRuleResolver);
  if (rbac) {
    core.ruleResolvers.push(rbac.rulesFor);
    for (const obj of bootstrapRbac()) {
      const type = core.registry.lookup(String(obj.apiVersion), String(obj.kind));
      if (type) core.store.put(type, obj);
    }
  }
}

class Handle implements TestApiServer {
  readonly url: string;
  readonly caPem: string;
  readonly kubeconfigPath: string;
  readonly token: string;
  readonly groupDomain: string;

  constructor(
    private readonly core: ApiServerCore,
    fields: {
      url: string;
      caPem: string;
      kubeconfigPath: string;
      token: string;
      groupDomain: string;
    },
    private readonly dir: string,
    private readonly kubeconfigFor: (token: string, name: string) => Promise<string>,
    private readonly crds: CrdController,
    private readonly clientCa: CertAndKey | null,
  ) {
    this.url = fields.url;
    this.caPem = fields.caPem;
    this.kubeconfigPath = fields.kubeconfigPath;
    this.token = fields.token;
    this.groupDomain = fields.groupDomain;
  }

  get authorize(): AsyncAuthorizer {
    return this.core.authorize;
  }
  set authorize(fn: AsyncAuthorizer) {
    this.core.authorize = fn;
  }
  get requests(): RequestRecord[] {
    return this.core.requests;
  }
  get registry(): ResourceRegistry {
    return this.core.registry;
  }

  put(obj: KubeObject): KubeObject {
    const type = this.typeOf(String(obj.apiVersion ?? ""), String(obj.kind ?? ""));
    return this.core.store.put(type, { ...obj, apiVersion: obj.apiVersion, kind: type.kind });
  }

  get(
    apiVersion: string,
    kindOrResource: string,
    name: string,
    namespace = "",
  ): KubeObject | undefined {
    return this.core.store.get(this.typeOf(apiVersion, kindOrResource), namespace, name);
  }

  installCrd(crd: KubeObject): KubeObject {
    return this.crds.install(crd);
  }

  remove(apiVersion: string, kindOrResource: string, name: string, namespace = ""): boolean {
    return (
      this.core.store.remove(this.typeOf(apiVersion, kindOrResource), namespace, name) !== undefined
    );
  }

  addToken(token: string, identity: UserIdentity): void {
    this.core.tokens.set(token, identity);
  }

  writeKubeconfig(
    token: string,
    name = `user-${this.core.tokens.get(token)?.user ?? "unknown"}`,
  ): Promise<string> {
    return this.kubeconfigFor(token, name.replace(/[^a-zA-Z0-9-]/g, "-"));
  }

  async clientCertKubeconfig(user: string, groups: string[] = []): Promise<string> {
    if (!this.clientCa) throw new Error("test apiserver: started without clientCertificates");
    const client = await clientCert(this.clientCa, user, groups);
    const name = `cert-${user}`.replace(/[^a-zA-Z0-9-]/g, "-");
    return writeKubeconfig(join(this.dir, `${name}.kubeconfig`), {
      server: this.url,
      caPem: this.caPem,
      client,
      name,
    });
  }

  setDown(down: boolean): void {
    this.core.down = down;
    // An API server that fails every request has lost its watches too.
    if (down) this.core.endWatches();
  }

  endWatches(): number {
    return this.core.endWatches();
  }

  openWatches(): RequestRecord[] {
    return this.core.openWatches();
  }

  setDelay(ms: number): void {
    this.core.delayMs = ms;
  }

  async close(): Promise<void> {
    this.crds.stop();
    await this.core.close();
    await rm(this.dir, { recursive: true, force: true });
  }

  private typeOf(apiVersion: string, kindOrResource: string): ResourceType {
    const type = this.core.registry.lookup(apiVersion, kindOrResource);
    if (!type)
      throw new Error(`test apiserver: no resource type for ${apiVersion} ${kindOrResource}`);
    return type;
  }
}
