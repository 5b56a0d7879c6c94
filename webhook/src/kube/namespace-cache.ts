// The Namespace informer the authorization webhook maps scopes with: projects, spaces and virtual
// clusters are namespaces with labels. It keeps only each namespace's labels.

import type { NamespaceLabels } from "./ports.js";
import {
  WatchCache,
  type WatchCacheOptions,
  type CacheTransport,
} from "./controller/watch-cache.js";

type Labels = Readonly<Record<string, string>>;

const NO_LABELS: Labels = Object.freeze({});

/** metadata.labels as a null-prototype record of strings (anything else is dropped). */
export function labelsOf(object: Record<string, unknown>): Labels {
  const meta = Object.hasOwn(object, "metadata") ? object["metadata"] : undefined;
  if (typeof meta !== "object" || meta === null || !Object.hasOwn(meta, "labels")) return NO_LABELS;
  const labels = (meta as Record<string, unknown>)["labels"];
  if (typeof labels !== "object" || labels === null || Array.isArray(labels)) return NO_LABELS;
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [k, v] of Object.entries(labels)) if (typeof v === "string") out[k] = v;
  return Object.freeze(out);
}

export class NamespaceCache extends WatchCache<Labels> implements NamespaceLabels {
  constructor(transport: CacheTransport, options: WatchCacheOptions = {}) {
    super(transport, "/api/v1/namespaces", labelsOf, options);
  }

  labels(name: string): Labels | undefined {
    return this.get(name);
  }
}
