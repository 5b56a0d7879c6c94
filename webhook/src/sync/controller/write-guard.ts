// The rules every write of `vgate sync` passes where it happens (apply-plan.ts checks a whole plan
// with them before its first write), whichever path planned it: an Endpoints copy, a reference
// copy, an import, a delete, an ensure (docs/decisions.md EPS-19, EPS-21).
// - A host write goes only to a namespace this vCluster owns (sync/host-ownership.ts); anything
//   else is the key's SyncError, whose Event names the namespace and says why. While the
//   namespace cache is not synced, nothing is written and the key is retried without an Event.
// - An import into the virtual cluster comes only from a host namespace this vCluster owns.
// - A copy (to the host) or an import (to the virtual cluster) is only of a kind the config's
//   reference patches name (`reference.apiVersion`/`kind`): a kind read from the object through
//   kindPath/apiVersionPath, which the tenant writes, never chooses what is created.
// - A Secret is written, on either side, only when its type is on the allow-list.

import { newServiceUnavailable } from "../../shared/status.js";
import {
  OBJECT_NAME_ANNOTATION,
  OBJECT_NAMESPACE_ANNOTATION,
} from "../../patches/reference-resolver.js";
import type { JsonObject } from "../../patches/types.js";
import {
  hostNamespaceOwnership,
  type HostOwner,
  type NamespaceLabelSource,
} from "../host-ownership.js";
import { isSecret, secretType, secretTypeAllowed } from "../secret-types.js";
import { BOOKKEEPING_ANNOTATIONS } from "../translate-endpoints.js";
import { SyncError, type ObjectRef, type SyncAction } from "./contracts.js";
import { field, str } from "./object-fields.js";
import { IMPORTED_ANNOTATION } from "./references.js";

export interface WriteGuardOptions {
  owner: HostOwner;
  /** Labels of the host namespaces (multi-namespace mode); absent: only the own namespaces. */
  namespaces?: NamespaceLabelSource;
  /** --reference-secret-types. */
  secretTypes: ReadonlySet<string>;
  /** The current config's reference kinds, as `apiVersion/kind` (references.ts referenceKinds). */
  copyKinds: () => ReadonlySet<string>;
}

/** Checks one planned write; throws SyncError (or a retryable error) when it must not happen. */
export type WriteGuard = (action: SyncAction) => void;

const refOf = (object: JsonObject): ObjectRef => ({
  apiVersion: str(object.apiVersion),
  kind: str(object.kind),
  namespace: str(field(object, "metadata").namespace),
  name: str(field(object, "metadata").name),
});

const verbOf = (action: SyncAction): string =>
  action.type === "ensure" ? "create or update" : action.type;

const named = (side: string, ref: ObjectRef): string =>
  `${side} ${ref.kind} ${JSON.stringify(ref.namespace ? `${ref.namespace}/${ref.name}` : ref.name)}`;

/** The kinds vgate sync writes as host copies of their own (not reference copies). */
const SYNCED_KINDS = new Set(["v1/Endpoints", "discovery.k8s.io/v1/EndpointSlice"]);

export function writeGuard(opts: WriteGuardOptions): WriteGuard {
  const ownership = (namespace: string, doing: string) => {
    const verdict = hostNamespaceOwnership(namespace, opts.owner, opts.namespaces);
    if (verdict === "unknown") {
      // Not the object's fault: retried with backoff, no Event.
      throw newServiceUnavailable(
        `cannot ${doing} yet: the labels of the host namespaces are not synced`,
      );
    }
    if (!verdict.owned) throw new SyncError(`refused to ${doing}: ${verdict.why}`);
  };
  return (action) => {
    const ref = action.type === "delete" ? action.ref : refOf(action.object);
    if (action.side === "host") ownership(ref.namespace, `${verbOf(action)} ${named("host", ref)}`);
    if (action.type === "delete") return;
    const annotations = field(field(action.object, "metadata"), "annotations");
    const imported = action.side === "virtual" && str(annotations[IMPORTED_ANNOTATION]) === "true";
    if (imported) {
      const from = str(annotations[OBJECT_NAMESPACE_ANNOTATION]);
      ownership(from, `import ${ref.kind} ${from}/${ref.name} from the host`);
    }
    const copied = action.side === "host" && !SYNCED_KINDS.has(`${ref.apiVersion}/${ref.kind}`);
    if ((copied || imported) && !opts.copyKinds().has(`${ref.apiVersion}/${ref.kind}`)) {
      throw new SyncError(
        `refused to ${verbOf(action)} ${named(action.side, ref)}: ${ref.apiVersion} ${ref.kind} is not a kind the config's reference patches name (reference.apiVersion and reference.kind); only those are copied or imported`,
      );
    }
    if (isSecret(action.object)) checkSecret(action, ref, annotations, opts.secretTypes);
  };
}

function checkSecret(
  action: Exclude<SyncAction, { type: "delete" }>,
  ref: ObjectRef,
  annotations: JsonObject,
  allowed: ReadonlySet<string>,
): void {
  const type = secretType(action.object);
  if (secretTypeAllowed(type, allowed)) return;
  const source =
    action.side === "host"
      ? `copy of virtual Secret ${str(annotations[BOOKKEEPING_ANNOTATIONS.namespace])}/${str(annotations[BOOKKEEPING_ANNOTATIONS.name])}`
      : `import of host Secret ${str(annotations[OBJECT_NAMESPACE_ANNOTATION])}/${str(annotations[OBJECT_NAME_ANNOTATION])}`;
  throw new SyncError(
    `refused to ${verbOf(action)} ${named(action.side, ref)} (${source}): its type ${JSON.stringify(type)} is not one vgate sync copies (--reference-secret-types: ${[...allowed].sort().join(", ")}); Secrets that Kubernetes fills with credentials are never copied`,
  );
}
