// Read-modify-write with kubectl's answer to a resourceVersion conflict: read again and re-apply the
// change (client-go's retry.RetryOnConflict, 5 tries with a short backoff).

import { KubeError } from "../cli/errors.js";
import type { AccessKeyApi, KubeObject } from "../kube/api.js";

const ATTEMPTS = 5;

/**
 * GETs `name`, lets `change` edit a copy (returning false: nothing to change), PUTs it with the
 * read resourceVersion, and starts over on 409 Conflict. Returns the stored object and whether it
 * changed.
 */
export async function updateWithRetry(
  api: AccessKeyApi,
  name: string,
  change: (obj: KubeObject) => boolean,
): Promise<{ object: KubeObject; changed: boolean }> {
  for (let attempt = 1; ; attempt++) {
    const current = await api.get(name);
    const copy = structuredClone(current);
    if (!change(copy)) return { object: current, changed: false };
    try {
      return { object: await api.replace(copy), changed: true };
    } catch (err) {
      if (!(err instanceof KubeError) || err.code !== 409 || attempt >= ATTEMPTS) throw err;
      await new Promise((r) => setTimeout(r, 10 * 2 ** attempt));
    }
  }
}

/** The spec of an object, made when missing. */
export function specOf(obj: KubeObject): Record<string, unknown> {
  const spec = obj["spec"];
  if (spec && typeof spec === "object" && !Array.isArray(spec))
    return spec as Record<string, unknown>;
  const made: Record<string, unknown> = {};
  obj["spec"] = made;
  return made;
}
