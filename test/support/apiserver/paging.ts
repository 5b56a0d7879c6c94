// limit/continue paging of lists, as kube-apiserver's etcd3 storage does it. A continue token is
// opaque to clients: unpadded base64url of `{"v":"meta.k8s.io/v1","rv":N,"start":"<key>\u0000"}`,
// the revision the first page was read at and the key to resume after. Later pages are read at that
// same revision (a consistent snapshot); once it has left the history the list answers 410 Expired
// with a fresh token (rv -1) that continues at the newest revision.

import { KubeError, newBadRequest } from "../../../webhook/src/api/status.js";
import type { ResourceType } from "./resources.js";
import type { KubeObject, ObjectStore } from "./store.js";

interface ContinueToken {
  v: string;
  rv: number;
  start: string;
}

export interface Page {
  items: KubeObject[];
  /** The revision the list reflects. */
  revision: number;
  /** The token for the next page; "" on the last one. */
  continue: string;
  /** How many objects follow this page (only for lists without selectors). */
  remainingItemCount?: number;
}

export interface PageRequest {
  limit: number;
  continueToken: string;
  /** false when a label or field selector filters the list (then no remainingItemCount). */
  countRemaining: boolean;
}

// The message of etcd3's inconsistentContinue (the answer carries a token to carry on anyway).
const CONTINUE_EXPIRED =
  "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.";

/** 410 Expired whose Status carries `metadata.continue`, as kube's handleCompactedErrorForPaging. */
export class ContinueExpiredError extends KubeError {
  constructor(readonly continueToken: string) {
    super(410, "Expired", CONTINUE_EXPIRED);
  }

  override toStatus(): ReturnType<KubeError["toStatus"]> {
    const status = super.toStatus();
    return {
      ...status,
      metadata: { continue: this.continueToken } as unknown as Record<string, never>,
    };
  }
}

export function encodeContinue(start: string, rv: number): string {
  const token: ContinueToken = { v: "meta.k8s.io/v1", rv, start };
  return Buffer.from(JSON.stringify(token)).toString("base64url");
}

/** storage.DecodeContinue, with its error texts; a bad token is 400 BadRequest. */
export function decodeContinue(value: string): { start: string; rv: number } {
  let token: ContinueToken;
  try {
    if (!/^[A-Za-z0-9_-]*$/.test(value)) throw new Error("illegal base64 data");
    token = JSON.parse(Buffer.from(value, "base64url").toString()) as ContinueToken;
    if (typeof token !== "object" || token === null) throw new Error("not an object");
  } catch (err) {
    throw newBadRequest(`continue key is not valid: ${(err as Error).message}`);
  }
  if (token.v !== "meta.k8s.io/v1") {
    throw newBadRequest(
      `continue key is not valid: server does not recognize this encoded version ${String(token.v)}`,
    );
  }
  if (!token.rv) {
    throw newBadRequest(
      "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)",
    );
  }
  if (!token.start) {
    throw newBadRequest(
      "continue key is not valid: encoded start key empty (version meta.k8s.io/v1)",
    );
  }
  // Like kube, refuse a start key that path-cleaning would change (no escaping the collection).
  const start = String(token.start);
  if (start.split("/").some((p) => p === ".." || p === ".") || start.includes("//")) {
    throw newBadRequest(`continue key is not valid: ${start}`);
  }
  return { start, rv: Number(token.rv) };
}

/** Parses `limit` (0 or absent: everything) as kube's ListOptions decoding does. */
export function parseLimit(query: URLSearchParams): number {
  const raw = query.get("limit");
  if (raw === null || raw === "") return 0;
  if (!/^-?\d+$/.test(raw)) {
    throw newBadRequest(`strconv.ParseInt: parsing ${JSON.stringify(raw)}: invalid syntax`);
  }
  return Math.max(0, Number(raw));
}

/**
 * One page of the collection: the objects `keep` accepts, at the continue token's revision (or the
 * newest), after its start key, at most `limit` of them.
 */
export function readPage(
  store: ObjectStore,
  type: ResourceType,
  namespace: string,
  req: PageRequest,
  keep: (obj: KubeObject) => boolean,
): Page {
  let revision = store.revisionNow();
  let after = "";
  if (req.continueToken) {
    const token = decodeContinue(req.continueToken);
    after = token.start;
    if (token.rv > 0) revision = token.rv;
  }
  const snapshot = store.snapshot(type, namespace, revision);
  if (snapshot === null) throw new ContinueExpiredError(encodeContinue(after, -1));
  const rest = snapshot.filter((e) => e.key >= after && keep(e.object));
  if (req.limit <= 0 || rest.length <= req.limit) {
    return { items: rest.map((e) => e.object), revision, continue: "" };
  }
  const page = rest.slice(0, req.limit);
  const page0: Page = {
    items: page.map((e) => e.object),
    revision,
    continue: encodeContinue(`${page[page.length - 1]!.key}\u0000`, revision),
  };
  if (req.countRemaining) page0.remainingItemCount = rest.length - req.limit;
  return page0;
}
