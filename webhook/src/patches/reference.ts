// Reference patches (docs/reference.md#reference-patches and
// docs/reference.md#reference-patches-reverse; docs/decisions.md EPS-1): the matched value names
// another object, and the name is rewritten to that object's name on the other side. Virtual → host
// uses the short name `"v" + base36(sha256(name-x-ns-x-vc))[0:13]` in single-namespace mode and
// keeps the name in a mapped namespace (multi-namespace mode). Host → virtual asks the injected
// resolver.

import { hostNameShort, mapNamespaceToHost } from "./host-names.js";
import { findMatches, ownValue, readMatch, writeMatch, type Match } from "./traverse.js";
import {
  PatchError,
  type CompiledPatch,
  type Direction,
  type Json,
  type Outcome,
  type PathSegment,
  type ReferenceResolver,
  type VClusterInfo,
} from "./types.js";
import { isObject } from "../shared/json.js";

/** A reference a patch rewrote: the sync controller copies (toHost) or imports (toVirtual) it. */
export interface ResolvedReference {
  patchIndex: number;
  direction: Direction;
  apiVersion: string;
  kind: string;
  virtual: { namespace: string; name: string };
  host: { namespace: string; name: string };
}

export interface ReferenceInput {
  patch: CompiledPatch;
  value: Json;
  /** The canonical matched path, for messages. */
  path: string;
  direction: Direction;
  vcluster: VClusterInfo;
  resolver?: ReferenceResolver;
  hostObject: Json;
  virtualObject: Json;
}

export type ReferenceOutcome = Outcome & { warning?: string; reference?: ResolvedReference };

/** The parts of a reference read from the matched value, before translation. */
interface ReferenceParts {
  name: string;
  /** The namespace at namespacePath, or null when namespacePath is unset or not found. */
  namespace: string | null;
  apiVersion: string;
  kind: string;
  /** Where to write the translated name and namespace; null name = the value itself. */
  nameAt: Match | null;
  namespaceAt: Match | null;
}

type Translated = { name: string; namespace: string; reference: ResolvedReference };

export function applyReferencePatch(input: ReferenceInput): ReferenceOutcome {
  const read = readParts(input);
  if ("skip" in read) return read.skip;
  const translated = input.direction === "toHost" ? toHost(input, read) : toVirtual(input, read);
  if ("skip" in translated) return translated.skip;
  return { ...write(input.value, read, translated), reference: translated.reference };
}

function readParts(input: ReferenceInput): ReferenceParts | { skip: ReferenceOutcome } {
  const { value, patch } = input;
  const spec = patch.spec.reference!;
  const ref = patch.ref ?? {};
  if (ref.nameSegments === undefined) {
    // Simple form: the value is the name.
    const name = nonEmptyString(value);
    if (name === null)
      return { skip: { kind: "keep", note: "the reference name is not a non-empty string" } };
    return {
      name,
      namespace: null,
      apiVersion: spec.apiVersion,
      kind: spec.kind,
      nameAt: null,
      namespaceAt: null,
    };
  }
  if (!isObject(value)) return { skip: { kind: "keep", note: "the reference is not an object" } };
  const nameAt = single(input, value, ref.nameSegments, "namePath");
  const name = nameAt === null ? null : nonEmptyString(readMatch(nameAt));
  if (name === null) return { skip: { kind: "keep", note: "no non-empty string at namePath" } };
  const namespaceAt = single(input, value, ref.namespaceSegments, "namespacePath");
  const namespace = namespaceAt === null ? null : nonEmptyString(readMatch(namespaceAt));
  if (namespaceAt !== null && namespace === null) {
    return {
      skip: { kind: "keep", warning: "the value at namespacePath is not a non-empty string" },
    };
  }
  return {
    name,
    namespace,
    apiVersion: stringAt(input, value, ref.apiVersionSegments, "apiVersionPath") ?? spec.apiVersion,
    kind: stringAt(input, value, ref.kindSegments, "kindPath") ?? spec.kind,
    nameAt,
    namespaceAt,
  };
}

/**
 * The one location a sub-path names; several (through a wildcard) is an error
 * (docs/reference.md#reference-patches).
 */
function single(
  input: ReferenceInput,
  value: Json,
  segments: PathSegment[] | undefined,
  field: string,
): Match | null {
  if (segments === undefined) return null;
  const matches = findMatches(value, segments);
  if (matches.length > 1) {
    const { index } = input.patch;
    const detail = `reference.${field} matches ${matches.length} values, expected one`;
    throw new PatchError(
      `patches[${index}] at ${JSON.stringify(input.path)}: ${detail}`,
      index,
      input.path,
      { detail },
    );
  }
  return matches[0] ?? null;
}

/**
 * kindPath / apiVersionPath: fall back to kind / apiVersion when not found
 * (docs/reference.md#patch-config).
 */
function stringAt(
  input: ReferenceInput,
  value: Json,
  segments: PathSegment[] | undefined,
  field: string,
): string | null {
  const at = single(input, value, segments, field);
  return at === null ? null : nonEmptyString(readMatch(at));
}

/**
 * Where the host copy of referenced virtual object `namespace/name` lives (docs/decisions.md
 * EPS-1): the short name in the vCluster's namespace in single-namespace mode; the same name in the
 * mapped namespace in multi-namespace mode.
 */
export function referenceHostLocation(
  name: string,
  namespace: string,
  vcluster: VClusterInfo,
): { namespace: string; name: string } {
  const mapped = mapNamespaceToHost(namespace, vcluster.namespaceMappings);
  return mapped === null
    ? { namespace: vcluster.namespace, name: hostNameShort(name, namespace, vcluster.name) }
    : { namespace: mapped, name };
}

function toHost(
  input: ReferenceInput,
  parts: ReferenceParts,
): Translated | { skip: ReferenceOutcome } {
  // docs/reference.md#patch-config: without namespacePath, the namespace is the virtual object's
  // own.
  const namespace = parts.namespace ?? metadataNamespace(input.virtualObject);
  if (namespace === null) {
    return { skip: { kind: "keep", warning: "no namespace to translate the reference name with" } };
  }
  const host = referenceHostLocation(parts.name, namespace, input.vcluster);
  const virtual = { namespace, name: parts.name };
  return { ...host, reference: describe(input, parts, virtual, host) };
}

function toVirtual(
  input: ReferenceInput,
  parts: ReferenceParts,
): Translated | { skip: ReferenceOutcome } {
  const hostNamespace = parts.namespace ?? metadataNamespace(input.hostObject);
  if (hostNamespace === null) {
    return { skip: { kind: "keep", warning: "no namespace to resolve the reference with" } };
  }
  if (input.resolver === undefined) {
    return { skip: { kind: "keep", warning: "no reference resolver, the host name is kept" } };
  }
  const ref = { apiVersion: parts.apiVersion, kind: parts.kind };
  const virtual = input.resolver.hostToVirtual(ref, hostNamespace, parts.name);
  if (virtual === null) {
    const what = `${parts.kind} ${hostNamespace}/${parts.name}`;
    return {
      skip: { kind: "keep", warning: `${what} has no known virtual object, the host name is kept` },
    };
  }
  const host = { namespace: hostNamespace, name: parts.name };
  return { ...virtual, reference: describe(input, parts, virtual, host) };
}

function describe(
  input: ReferenceInput,
  parts: ReferenceParts,
  virtual: { namespace: string; name: string },
  host: { namespace: string; name: string },
): ResolvedReference {
  return {
    patchIndex: input.patch.index,
    direction: input.direction,
    apiVersion: parts.apiVersion,
    kind: parts.kind,
    virtual: { namespace: virtual.namespace, name: virtual.name },
    host: { namespace: host.namespace, name: host.name },
  };
}

/**
 * Writes the translated name (and namespace, only where namespacePath found one;
 * docs/reference.md#reference-patches).
 */
function write(value: Json, parts: ReferenceParts, translated: Translated): Outcome {
  const note = `${parts.kind} ${parts.name} → ${translated.name}`;
  if (parts.nameAt === null) return { kind: "set", value: translated.name, note };
  writeMatch(parts.nameAt, translated.name);
  if (parts.namespaceAt !== null) writeMatch(parts.namespaceAt, translated.namespace);
  return { kind: "set", value, note };
}

function metadataNamespace(object: Json): string | null {
  if (!isObject(object)) return null;
  const metadata = ownValue(object, "metadata");
  if (!isObject(metadata)) return null;
  return nonEmptyString(ownValue(metadata, "namespace") ?? null);
}

function nonEmptyString(value: Json): string | null {
  return typeof value === "string" && value !== "" ? value : null;
}
