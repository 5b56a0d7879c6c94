// OwnedAccessKeys through client-node's CustomObjectsApi, and the errors it throws as a client
// sees them: an ApiException whose code is the HTTP status and whose body is the metav1.Status.

import assert from "node:assert/strict";
import {
  ApiException,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
} from "@kubernetes/client-node";
import type { ObjectMeta, OwnedAccessKey } from "../../webhook/src/shared/ownedaccesskey.js";
import type { Status } from "../../webhook/src/shared/status.js";

/** An OwnedAccessKey as the server returns it. */
export type StoredKey = OwnedAccessKey & { metadata: ObjectMeta & { name: string } };

export interface JsonPatchOperation {
  op: "add" | "remove" | "replace" | "move" | "copy" | "test";
  path: string;
  value?: unknown;
  from?: string;
}

export const PLURAL = "ownedaccesskeys";

/** The manifest of a key: apiVersion, kind, the given metadata and spec. */
export function keyManifest(group: string, metadata: ObjectMeta, spec = {}): OwnedAccessKey {
  return { apiVersion: `${group}/v1`, kind: "OwnedAccessKey", metadata, spec };
}

export class KeyClient {
  private readonly api: CustomObjectsApi;

  constructor(
    kc: KubeConfig,
    private readonly group: string,
  ) {
    this.api = kc.makeApiClient(CustomObjectsApi);
  }

  private get resource() {
    return { group: this.group, version: "v1", plural: PLURAL };
  }

  async create(body: OwnedAccessKey, opts: { dryRun?: boolean } = {}): Promise<StoredKey> {
    const dryRun = opts.dryRun ? { dryRun: "All" } : {};
    return (await this.api.createClusterCustomObject({
      ...this.resource,
      body,
      ...dryRun,
    })) as StoredKey;
  }

  async get(name: string): Promise<StoredKey> {
    return (await this.api.getClusterCustomObject({ ...this.resource, name })) as StoredKey;
  }

  /** PUT of the whole object, addressed by its metadata.name unless `name` is given. */
  async replace(body: OwnedAccessKey, name = body.metadata?.name ?? ""): Promise<StoredKey> {
    return (await this.api.replaceClusterCustomObject({
      ...this.resource,
      name,
      body,
    })) as StoredKey;
  }

  /** PATCH with Content-Type application/json-patch+json. */
  async jsonPatch(name: string, ops: readonly JsonPatchOperation[]): Promise<StoredKey> {
    return (await this.api.patchClusterCustomObject(
      { ...this.resource, name, body: ops },
      setHeaderOptions("Content-Type", PatchStrategy.JsonPatch),
    )) as StoredKey;
  }

  /** DELETE; kube answers the object itself while finalizers keep it, else a Status. */
  async delete(name: string): Promise<unknown> {
    return this.api.deleteClusterCustomObject({ ...this.resource, name });
  }

  /** null when the key does not exist (404), so tests can assert absence. */
  async find(name: string): Promise<StoredKey | null> {
    try {
      return await this.get(name);
    } catch (err) {
      if (err instanceof ApiException && err.code === 404) return null;
      throw err;
    }
  }
}

/**
 * Awaits a request that must fail and returns the metav1.Status the server sent. Asserts what every
 * kube error has: an ApiException whose HTTP code equals status.code, status "Failure".
 */
export async function rejection(request: Promise<unknown>): Promise<Status> {
  let caught: unknown;
  try {
    await request;
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof ApiException, `expected an ApiException, got ${String(caught)}`);
  const status = parseStatus(caught.body);
  assert.equal(status.kind, "Status");
  assert.equal(status.status, "Failure");
  assert.equal(status.code, caught.code, "the HTTP status is the Status code");
  return status;
}

function parseStatus(body: unknown): Status {
  const parsed: unknown = typeof body === "string" ? JSON.parse(body) : body;
  assert.ok(parsed && typeof parsed === "object", `no Status body: ${String(body)}`);
  return parsed as Status;
}
