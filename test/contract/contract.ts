// What every contract test needs: the cluster (started once for the suite), unique names, clients
// for the admin and for impersonated users, and the cleanup of what the test created.

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AuthenticationV1Api } from "@kubernetes/client-node";
import type { ObjectMeta, OwnedAccessKey } from "../../webhook/src/shared/ownedaccesskey.js";
import { Cleanup } from "./cleanup.js";
import { startContractCluster, type ContractCluster } from "./cluster.js";
import { KeyClient, keyManifest, type StoredKey } from "./keys.js";
import {
  HAVE_ANY_KUBECTL,
  ANY_KUBECTL_SKIP_REASON,
  kubectlFor,
  type Kubectl,
} from "../support/kubectl.js";

export class Contract {
  readonly cleanup = new Cleanup();
  private current: ContractCluster | undefined;
  private cacheDir = "";
  private counter = 0;
  private adminKeys: KeyClient | undefined;
  /** The admin's username, as SelfSubjectReview reports it. */
  adminUser = "";
  kubectl: Kubectl = () => Promise.reject(new Error("the contract cluster is not started"));

  get cluster(): ContractCluster {
    if (!this.current) throw new Error("the contract cluster is not started");
    return this.current;
  }

  get group(): string {
    return this.cluster.group;
  }

  /** `<prefix>-<run id>-<n>`: unique in this run, and across runs on a shared cluster. */
  name(prefix: string): string {
    this.counter += 1;
    return `${prefix}-${this.cluster.runId}-${this.counter}`;
  }

  /** A username for this run (impersonated; it needs no account anywhere). */
  user(prefix: string): string {
    return `${prefix}-${this.cluster.runId}`;
  }

  /** client-node as the admin. */
  keys(): KeyClient {
    this.adminKeys ??= new KeyClient(this.cluster.admin(), this.group);
    return this.adminKeys;
  }

  /** client-node as an impersonated user. */
  keysAs(user: string, groups: readonly string[] = []): KeyClient {
    return new KeyClient(this.cluster.as(user, groups), this.group);
  }

  manifest(metadata: ObjectMeta, spec: Record<string, unknown> = {}): OwnedAccessKey {
    return keyManifest(this.group, metadata, spec);
  }

  /** Creates a key as `keys`' user and removes it after the test. */
  async createKey(
    metadata: ObjectMeta,
    spec: Record<string, unknown> = {},
    keys: KeyClient = this.keys(),
  ): Promise<StoredKey> {
    const created = await keys.create(this.manifest(metadata, spec));
    this.cleanup.key(keys, created.metadata.name);
    return created;
  }

  async start(): Promise<void> {
    this.current = await startContractCluster();
    this.cacheDir = await mkdtemp(join(tmpdir(), "vgate-contract-kubectl-"));
    this.kubectl = kubectlFor(this.current.kubeconfigPath, this.cacheDir);
    const review = await this.current
      .admin()
      .makeApiClient(AuthenticationV1Api)
      .createSelfSubjectReview({
        body: { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" },
      });
    this.adminUser = review.status?.userInfo?.username ?? "";
  }

  async stop(): Promise<void> {
    await this.current?.stop();
    if (this.cacheDir) await rm(this.cacheDir, { recursive: true, force: true });
  }
}

/** A kubectl test, skipped with the reason in its name when kubectl is not on PATH. */
export function itKubectl(title: string, fn: () => Promise<void>): void {
  (HAVE_ANY_KUBECTL ? it : it.skip)(`kubectl: ${title}${ANY_KUBECTL_SKIP_REASON}`, fn);
}

/** A client-node test. */
export function itClient(title: string, fn: () => Promise<void>): void {
  it(`client-node: ${title}`, fn);
}
