// Shared fixtures for the sandbox tests: a small Endpoints-like object and one-patch configs.
import type { SandboxConfig } from "../../../../webhook/src/patches/sandbox/pool.js";
import type { PatchSpec, VClusterInfo } from "../../../../webhook/src/patches/types.js";

export const VCLUSTER: VClusterInfo = { name: "vc", namespace: "vc-ns", config: { sync: {} } };

export const OBJECT = {
  metadata: { name: "db", namespace: "default", annotations: { a: "hello", b: "world" } },
  subsets: [{ addresses: [{ ip: "10.0.0.1" }, { ip: "10.0.0.2" }] }],
};
export const OBJECT_JSON = JSON.stringify(OBJECT);

export function config(...patches: PatchSpec[]): SandboxConfig {
  return { patches, vcluster: VCLUSTER };
}

/** A config with one expression on metadata.annotations.a. */
export function annotation(expression: string, path = "metadata.annotations.a"): SandboxConfig {
  return config({ path, expression });
}

export function annotationsOf(objectJson: string): Record<string, unknown> {
  const object = JSON.parse(objectJson) as { metadata: { annotations?: Record<string, unknown> } };
  return object.metadata.annotations ?? {};
}

export const toHost = { objectJson: OBJECT_JSON, direction: "toHost" as const };
