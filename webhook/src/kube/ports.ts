// The few things OwnedAccessKey admission needs from the API server. The production implementation
// (kube/api-client.ts) talks to kube-apiserver through client-node; admission code only sees this
// interface, so the rules stay testable and the server can run without a cluster in --dev.

import type { OwnedAccessKey } from "../shared/ownedaccesskey.js";
import type { UserInfo } from "../api/user-info.js";

/** How an apiVersion/kind maps to a REST resource (discovery's RESTMapping). */
export interface ResourceMapping {
  group: string;
  version: string;
  resource: string;
  namespaced: boolean;
}

/** authorization/v1 ResourceAttributes (the subset we ask about). */
export interface ResourceAttributes {
  group: string;
  version: string;
  resource: string;
  subresource?: string;
  namespace?: string;
  name?: string;
  verb: string;
}

export interface AccessDecision {
  allowed: boolean;
  denied?: boolean;
  reason?: string;
  evaluationError?: string;
}

export interface KubeApi {
  /**
   * The stored OwnedAccessKey called `name`, or null when there is none.
   * Throws a KubeError (503 ServiceUnavailable) when the API server cannot be asked.
   */
  getAccessKey(name: string): Promise<OwnedAccessKey | null>;
  /**
   * Maps apiVersion + kind to its resource through discovery; null when discovery has no such kind.
   * Throws a KubeError (503) when the API server cannot be asked.
   */
  resourceFor(apiVersion: string, kind: string): Promise<ResourceMapping | null>;
  /** A SubjectAccessReview for `user`. Throws a KubeError (503) when it cannot be asked. */
  subjectAccessReview(user: UserInfo, attributes: ResourceAttributes): Promise<AccessDecision>;
  /** Whether the API server answered discovery (for /readyz). */
  ready(): Promise<boolean>;
  /** Releases kept-alive connections. */
  close?(): void;
}

/** Objects by name from a watch cache (OwnedAccessKeys). Only trust answers while synced(). */
export interface KeysByName {
  synced(): boolean;
  get(name: string): OwnedAccessKey | undefined;
}

/** Namespace labels from a namespace watch cache. Only trust answers while synced(). */
export interface NamespaceLabels {
  synced(): boolean;
  /** The labels of namespace `name`; undefined when there is no such namespace. */
  labels(name: string): Readonly<Record<string, string>> | undefined;
}
