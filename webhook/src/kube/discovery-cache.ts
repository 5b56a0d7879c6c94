// Discovery answers change rarely (a CRD is installed or removed), and owner kinds repeat, so each
// group/version's APIResourceList is kept for a while. A kind that is missing triggers one refresh,
// so a freshly installed CRD is found without waiting for the TTL; that refresh is rate-limited
// because the apiVersion/kind come from untrusted ownerReferences.

import type { ResourceMapping } from "./ports.js";
import type { GroupVersion } from "./discovery.js";

/** A group/version's kinds, or null when the API server does not serve that group/version. */
export type KindTable = Map<string, ResourceMapping> | null;

export interface DiscoveryCacheOptions {
  /** How long an answer is used without asking again. */
  ttlMs: number;
  /** A missing kind re-asks only when the answer is at least this old. */
  missRefreshMs: number;
  /** Bound on cached group/versions (untrusted input chooses them). */
  maxEntries: number;
  now?: () => number;
}

interface Entry {
  at: number;
  kinds: KindTable;
}

export class DiscoveryCache {
  private readonly entries = new Map<string, Entry>();
  private readonly loading = new Map<string, Promise<Entry>>();
  private readonly now: () => number;

  constructor(
    private readonly fetchKinds: (gv: GroupVersion) => Promise<KindTable>,
    private readonly options: DiscoveryCacheOptions,
  ) {
    this.now = options.now ?? Date.now;
  }

  async lookup(gv: GroupVersion, kind: string): Promise<ResourceMapping | null> {
    const key = `${gv.group}/${gv.version}`;
    let entry = this.fresh(key) ?? (await this.load(key, gv));
    const hit = entry.kinds?.get(kind);
    if (hit) return hit;
    if (this.now() - entry.at < this.options.missRefreshMs) return null;
    entry = await this.load(key, gv);
    return entry.kinds?.get(kind) ?? null;
  }

  /** Forgets everything (e.g. after a CRD change is known). */
  clear(): void {
    this.entries.clear();
  }

  private fresh(key: string): Entry | undefined {
    const entry = this.entries.get(key);
    return entry && this.now() - entry.at < this.options.ttlMs ? entry : undefined;
  }

  /** One request per group/version at a time; concurrent callers share it. */
  private load(key: string, gv: GroupVersion): Promise<Entry> {
    const pending = this.loading.get(key);
    if (pending) return pending;
    const started = this.fetchKinds(gv)
      .then((kinds) => this.store(key, { at: this.now(), kinds }))
      .finally(() => this.loading.delete(key));
    this.loading.set(key, started);
    return started;
  }

  private store(key: string, entry: Entry): Entry {
    this.entries.delete(key);
    this.entries.set(key, entry);
    // Map keeps insertion order, so the first key is the least recently loaded one.
    while (this.entries.size > this.options.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.entries.delete(oldest.value);
    }
    return entry;
  }
}
