// Carries out a reconciler's plan (contracts.ts SyncPlan) against the two API servers. Every action
// of the plan first passes the write guard (write-guard.ts: host namespaces the vCluster owns,
// Secret types on the allow-list), so a plan that would write anywhere it must not writes nothing
// at all. Then one action after the other, stopping at the first failure:
// - create: POST. 409 AlreadyExists: when the object there is vgate's for the same source, the cache
//   was behind and the key is retried; otherwise it is not ours and is never touched (SyncError).
// - update: PUT with the object's resourceVersion, so a write based on a stale read is a 409
//   Conflict and the key is retried.
// - delete: DELETE with preconditions.uid, so only the object that was read is deleted; 404 is done.
// - ensure: POST, or on 409 AlreadyExists, a PUT over the live object when it carries vgate's (or
//   vCluster's) bookkeeping for the same source; otherwise SyncError.
// Creates and updates name vgate sync as their field manager (FIELD_MANAGER), so an object's
// managedFields tell its writes apart from those of vCluster's syncer ("vcluster") or a user's.
// Failures that concern the one object (400, 403, 422: the object is invalid after patches, or
// forbidden; 404 on a create: its namespace does not exist) become SyncErrors, recorded as Events;
// 409s are retried quietly; anything else (5xx, 429, no answer) is retried without an Event.

import { KubeError } from "../../shared/status.js";
import { answerError } from "../../shared/answer-error.js";
import type { KubeResponse } from "../../shared/transport.js";
import type { JsonObject } from "../../patches/types.js";
import { BOOKKEEPING_ANNOTATIONS } from "../translate-endpoints.js";
import { MarkerLabel } from "../../patches/labels.js";
import {
  SyncError,
  type ObjectRef,
  type Side,
  type SyncAction,
  type SyncPlan,
} from "./contracts.js";
import type { RequestTransport, ResourcePaths } from "./resource-paths.js";
import type { WriteGuard } from "./write-guard.js";

/** The field manager of every create and update (kube-apiserver's `fieldManager` parameter). */
export const FIELD_MANAGER = "vgate-sync";
const AS_MANAGER = `?fieldManager=${FIELD_MANAGER}`;

/** A write lost a race (409 Conflict, or an object gone or there already): retry, no Event. */
export class RetryConflict extends Error {
  override readonly name = "RetryConflict";
}

/** One side's API server: how to reach it and how to name its paths. */
export interface SideAccess {
  transport: RequestTransport;
  paths: ResourcePaths;
}

export type Sides = Record<Side, SideAccess>;

/** What happened to one action, for the log and the metrics (never the object's contents). */
export interface WriteOutcome {
  side: Side;
  type: SyncAction["type"];
  /** Which write ensure turned into. */
  did: "created" | "updated" | "deleted" | "unchanged";
  ref: ObjectRef;
  reason: string;
}

/** The bookkeeping that says which source object a synced object was made from. */
const SOURCE_ANNOTATIONS = [
  BOOKKEEPING_ANNOTATIONS.name,
  BOOKKEEPING_ANNOTATIONS.namespace,
  BOOKKEEPING_ANNOTATIONS.kind,
  BOOKKEEPING_ANNOTATIONS.hostName,
  BOOKKEEPING_ANNOTATIONS.hostNamespace,
];

/** Statuses that concern the object itself: the Event on the virtual object says why. */
const OBJECT_STATUSES = new Set([400, 403, 413, 422]);

export async function applyPlan(
  plan: SyncPlan,
  sides: Sides,
  guard: WriteGuard,
  onWrite: (outcome: WriteOutcome) => void = () => undefined,
): Promise<void> {
  for (const action of plan.actions) guard(action);
  for (const action of plan.actions) onWrite(await applyAction(action, sides, guard));
}

/** One action, after the guard (applyPlan has checked them all before its first write). */
export async function applyAction(
  action: SyncAction,
  sides: Sides,
  guard: WriteGuard,
): Promise<WriteOutcome> {
  guard(action);
  const side = sides[action.side];
  const ref = action.type === "delete" ? action.ref : refOf(action.object);
  const base = { side: action.side, type: action.type, ref, reason: action.reason };
  switch (action.type) {
    case "create":
      await create(side, action.side, action.object, ref);
      return { ...base, did: "created" };
    case "update":
      await update(side, action.side, action.object, ref);
      return { ...base, did: "updated" };
    case "delete":
      return {
        ...base,
        did: (await remove(side, action.side, ref, action.uid)) ? "deleted" : "unchanged",
      };
    case "ensure":
      return { ...base, did: await ensure(side, action.side, action.object, ref) };
  }
}

async function create(
  access: SideAccess,
  side: Side,
  object: JsonObject,
  ref: ObjectRef,
): Promise<void> {
  const res = await post(access, object, ref);
  if (res.status === 201 || res.status === 200) return;
  if (!isAlreadyExists(res)) throw failure("create", side, ref, res);
  const live = await read(access, side, ref);
  if (live && sameSource(object, live)) {
    throw new RetryConflict(`${describe(side, ref)} exists already: the cache was behind`);
  }
  throw notManaged(side, ref);
}

async function update(
  access: SideAccess,
  side: Side,
  object: JsonObject,
  ref: ObjectRef,
): Promise<void> {
  if (!resourceVersionOf(object)) {
    throw new Error(`update of ${describe(side, ref)} without metadata.resourceVersion`);
  }
  const path = (await access.paths.object(ref)) + AS_MANAGER;
  const res = await access.transport.request("PUT", path, object);
  if (res.status === 200) return;
  if (res.status === 409 || res.status === 404) {
    throw new RetryConflict(`update of ${describe(side, ref)}: ${answerError(res).message}`);
  }
  throw failure("update", side, ref, res);
}

/** True when it deleted the object, false when it was already gone. */
async function remove(
  access: SideAccess,
  side: Side,
  ref: ObjectRef,
  uid: string,
): Promise<boolean> {
  const options = { apiVersion: "v1", kind: "DeleteOptions", preconditions: { uid } };
  const res = await access.transport.request("DELETE", await access.paths.object(ref), options);
  if (res.status === 200 || res.status === 202) return true;
  if (res.status === 404) return false;
  // 409: the uid precondition failed, the object was replaced since it was read.
  if (res.status === 409) {
    throw new RetryConflict(`delete of ${describe(side, ref)}: ${answerError(res).message}`);
  }
  throw failure("delete", side, ref, res);
}

async function ensure(
  access: SideAccess,
  side: Side,
  object: JsonObject,
  ref: ObjectRef,
): Promise<"created" | "updated"> {
  const res = await post(access, object, ref);
  if (res.status === 201 || res.status === 200) return "created";
  if (!isAlreadyExists(res)) throw failure("create", side, ref, res);
  const live = await read(access, side, ref);
  if (!live) throw new RetryConflict(`${describe(side, ref)} was deleted while being ensured`);
  if (!sameSource(object, live)) throw notManaged(side, ref);
  const meta = { ...(object["metadata"] as JsonObject), resourceVersion: resourceVersionOf(live) };
  await update(access, side, { ...object, metadata: meta }, ref);
  return "updated";
}

async function post(access: SideAccess, object: JsonObject, ref: ObjectRef): Promise<KubeResponse> {
  const collection = await access.paths.collection(ref.apiVersion, ref.kind, ref.namespace);
  return access.transport.request("POST", collection + AS_MANAGER, object);
}

async function read(access: SideAccess, side: Side, ref: ObjectRef): Promise<JsonObject | null> {
  const res = await access.transport.request("GET", await access.paths.object(ref));
  if (res.status === 404) return null;
  if (res.status !== 200) throw failure("read", side, ref, res);
  return res.body as JsonObject;
}

/**
 * The live object carries the bookkeeping the desired one does, with the same values: it was made
 * from the same source object by vgate (or by vCluster, which writes the same annotations). An
 * object without any of them is someone else's.
 */
export function sameSource(desired: JsonObject, live: JsonObject): boolean {
  const want = annotationsOf(desired);
  const have = annotationsOf(live);
  const keys = SOURCE_ANNOTATIONS.filter((k) => typeof want[k] === "string");
  if (keys.length === 0 || !keys.every((k) => have[k] === want[k])) return false;
  const marker = labelsOf(desired)[MarkerLabel];
  return marker === undefined || labelsOf(live)[MarkerLabel] === marker;
}

function notManaged(side: Side, ref: ObjectRef): SyncError {
  return new SyncError(`${describe(side, ref)} exists and is not managed by vgate`);
}

/** A failed write as an error of the right class: SyncError when it concerns the object. */
function failure(verb: string, side: Side, ref: ObjectRef, res: KubeResponse): Error {
  const err = answerError(res);
  const message = `cannot ${verb} ${describe(side, ref)}: ${err.code} ${err.reason}: ${err.message}`;
  if (res.status === 409) return new RetryConflict(message);
  // A create into a namespace that does not exist: the object's trouble (say so on its Event), as
  // vgate sync never creates namespaces (vCluster makes the host namespaces it maps to).
  if (res.status === 404 && verb === "create" && err.details?.kind === "namespaces") {
    return new SyncError(
      `${message} (vgate sync does not create namespaces: create namespace ${JSON.stringify(ref.namespace)} on the ${side === "host" ? "host" : "virtual cluster"}, or map this namespace elsewhere)`,
    );
  }
  if (OBJECT_STATUSES.has(res.status)) return new SyncError(message);
  return new KubeError(err.code, err.reason, message);
}

function isAlreadyExists(res: KubeResponse): boolean {
  return res.status === 409 && answerError(res).reason === "AlreadyExists";
}

/** `host Endpoints "ns/name"`, `virtual Secret "ns/name"`: never the contents. */
export function describe(side: Side, ref: ObjectRef): string {
  const name = ref.namespace ? `${ref.namespace}/${ref.name}` : ref.name;
  return `${side} ${ref.kind} ${JSON.stringify(name)}`;
}

export function refOf(object: JsonObject): ObjectRef {
  const meta = (object["metadata"] ?? {}) as JsonObject;
  const str = (v: unknown) => (typeof v === "string" ? v : "");
  return {
    apiVersion: str(object["apiVersion"]),
    kind: str(object["kind"]),
    namespace: str(meta["namespace"]),
    name: str(meta["name"]),
  };
}

function resourceVersionOf(object: JsonObject): string {
  const meta = object["metadata"];
  const rv =
    meta && typeof meta === "object" && !Array.isArray(meta) ? meta["resourceVersion"] : "";
  return typeof rv === "string" ? rv : "";
}

function stringMapAt(object: JsonObject, field: "annotations" | "labels"): Record<string, string> {
  const meta = object["metadata"];
  if (!meta || typeof meta !== "object" || Array.isArray(meta)) return {};
  const map = meta[field];
  if (!map || typeof map !== "object" || Array.isArray(map)) return {};
  return Object.fromEntries(Object.entries(map).filter(([, v]) => typeof v === "string")) as Record<
    string,
    string
  >;
}

const annotationsOf = (o: JsonObject) => stringMapAt(o, "annotations");
const labelsOf = (o: JsonObject) => stringMapAt(o, "labels");
