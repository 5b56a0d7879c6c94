// Which of a config's patch sets a dry run applies to an object (docs/decisions.md KND-4): the one
// whose kind is the object's apiVersion group and kind, for the direction asked. A custom resource
// entry is named `<resource>.<group>`, and the plural resource cannot be known from an object
// alone: `--resource` names it, or the only entry of the object's group is taken.

import type { PatchSet } from "../config/loaded-vcluster.js";
import { PATCH_KINDS, patchesPath, type PatchKind } from "../config/patch-kinds.js";
import type { Direction } from "../patches/types.js";
import { CliError } from "./errors.js";

/** The group and kind an object names; apiVersion "v1" is the core group. */
export interface ObjectKind {
  group: string;
  version: string;
  kind: string;
}

const ENDPOINTS = PATCH_KINDS.find((k) => k.section === "toHost" && k.key === "endpoints")!;

const WAYS: Record<Direction, string> = {
  toHost: "virtual → host",
  toVirtual: "host → virtual",
};

/** The group, version and kind of `object`, or null when it names neither apiVersion nor kind. */
export function objectKind(object: Record<string, unknown>): ObjectKind | null {
  const apiVersion = object["apiVersion"];
  const kind = object["kind"];
  if (apiVersion === undefined && kind === undefined) return null;
  if (typeof apiVersion !== "string" || apiVersion === "" || typeof kind !== "string" || !kind) {
    throw new CliError(
      `the object must have a string apiVersion and kind (got ${JSON.stringify(apiVersion ?? null)} and ${JSON.stringify(kind ?? null)}): they say which patches apply`,
    );
  }
  const slash = apiVersion.indexOf("/");
  return slash < 0
    ? { group: "", version: apiVersion, kind }
    : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1), kind };
}

function describeKind(kind: PatchKind): string {
  const name = kind.kind === "" ? kind.key.slice("customResources.".length) : kind.kind;
  return `${name} (${patchesPath(kind)})`;
}

function shown(what: ObjectKind): string {
  const apiVersion = what.group === "" ? what.version : `${what.group}/${what.version}`;
  return `${what.kind} in ${apiVersion}`;
}

function isCustomResource(kind: PatchKind): boolean {
  return kind.key.startsWith("customResources.");
}

/** The custom resource entry for an object of `what`: by --resource, or the group's only one. */
function customResourceSet(
  sets: readonly PatchSet[],
  what: ObjectKind,
  resource: string | undefined,
): PatchSet | undefined {
  const ofGroup = sets.filter((s) => isCustomResource(s.kind) && s.kind.group === what.group);
  if (resource !== undefined) return ofGroup.find((s) => s.kind.resource === resource);
  if (ofGroup.length <= 1) return ofGroup[0];
  const names = ofGroup.map((s) => s.kind.resource).join(", ");
  throw new CliError(
    `the config has patches for several custom resources of group ${what.group} (${names}), and the plural of ${what.kind} cannot be known from the object: pass --resource with one of them`,
  );
}

/**
 * The patch set a dry run applies to an object of `what` going `direction`, with a message
 * naming the kinds that have patches when there is none. An object naming no kind is taken as
 * Endpoints, the only kind vgate patched before (and Endpoints without patches run none).
 */
export function patchSetFor(
  sets: readonly PatchSet[],
  what: ObjectKind | null,
  direction: Direction,
  opts: { resource?: string; section?: string } = {},
): { kind: PatchKind; set: PatchSet | undefined } {
  if (what === null) return { kind: ENDPOINTS, set: sets.find((s) => s.kind === ENDPOINTS) };
  const matches = (k: PatchKind) =>
    !isCustomResource(k) &&
    k.group === what.group &&
    k.kind === what.kind &&
    (opts.section === undefined || k.section === opts.section);
  let candidates = sets.filter((s) => matches(s.kind));
  if (candidates.length === 0 && opts.resource === undefined) {
    const builtIn = PATCH_KINDS.find(matches);
    if (builtIn === ENDPOINTS) return { kind: ENDPOINTS, set: undefined };
  }
  if (candidates.length === 0) {
    const custom = customResourceSet(sets, what, opts.resource);
    candidates = custom === undefined ? [] : [custom];
  }
  if (candidates.length > 1) {
    const runs = candidates.filter((s) => s.kind[direction] !== null);
    if (runs.length === 1) candidates = runs;
    else {
      throw new CliError(
        `both ${candidates.map((s) => patchesPath(s.kind)).join(" and ")} patch ${shown(what)}: pass --section toHost or --section fromHost`,
      );
    }
  }
  const set = candidates[0];
  if (set === undefined) {
    const have = sets.map((s) => describeKind(s.kind));
    throw new CliError(
      `the config has no patches for ${shown(what)}${opts.resource === undefined ? "" : ` (--resource ${opts.resource})`}; ${
        have.length === 0 ? "it has no patches at all" : `it has patches for: ${have.join(", ")}`
      }`,
    );
  }
  if (set.kind[direction] === null) {
    const other: Direction = direction === "toHost" ? "toVirtual" : "toHost";
    throw new CliError(
      `${patchesPath(set.kind)} run ${WAYS[other]} only (vCluster syncs ${set.kind.kind || set.kind.key} one way): use --direction ${other}`,
    );
  }
  return { kind: set.kind, set };
}
