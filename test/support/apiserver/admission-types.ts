// The seam between the emulator's write path (objects.ts) and its admission-webhook dispatcher
// (admission-webhooks.ts). kube-apiserver's order for a write is: authentication, authorization,
// mutating admission, schema validation (and pruning), validating admission, storage.

import type { UserIdentity } from "./authorizer.js";
import type { ResourceType } from "./resources.js";
import type { KubeObject } from "./store.js";

export type AdmissionOperation = "CREATE" | "UPDATE" | "DELETE" | "CONNECT";

/** admission.Attributes: what one write looks like to admission plugins and webhooks. */
export interface AdmissionAttributes {
  type: ResourceType;
  /** "" or e.g. "status". */
  subresource: string;
  operation: AdmissionOperation;
  namespace: string;
  /**
   * The object's name. On a CREATE with generateName, mutating webhooks get "" (kube generates the
   * name after mutating admission) and validating webhooks get the generated name.
   */
  name: string;
  /** The new object (CREATE, UPDATE); null for DELETE. Mutating webhooks may replace it. */
  object: KubeObject | null;
  /** The stored object (UPDATE, DELETE); null for CREATE. */
  oldObject: KubeObject | null;
  user: UserIdentity;
  dryRun: boolean;
  /** CreateOptions / UpdateOptions / DeleteOptions as sent, with apiVersion meta.k8s.io/v1 and kind set. */
  options: Record<string, unknown> | null;
}

export interface AdmissionOutcome {
  /** The object after mutation (same as the input when nothing changed). */
  object: KubeObject | null;
  /** Webhook warnings, in order; the server returns each as a `Warning: 299 - "..."` header. */
  warnings: string[];
}

/**
 * The write path calls `mutate` before schema validation and `validate` after it. Either one
 * rejects with a KubeError (webhook denial or a failed call under failurePolicy Fail), which the
 * server answers as a metav1.Status.
 */
export interface AdmissionHook {
  mutate(attrs: AdmissionAttributes): Promise<AdmissionOutcome>;
  validate(attrs: AdmissionAttributes): Promise<{ warnings: string[] }>;
}

/** The default when no webhooks are configured: admits everything unchanged. */
export const admitAll: AdmissionHook = {
  mutate: (attrs) => Promise.resolve({ object: attrs.object, warnings: [] }),
  validate: () => Promise.resolve({ warnings: [] }),
};
