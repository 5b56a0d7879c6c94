// Every vCluster on the host, from the config Secrets vCluster's chart writes
// (config/vcluster-secret.ts; docs/decisions.md KND-20): one watch of the Secrets labelled
// app=vcluster in every namespace (kube/controller/watch-cache.ts), and for each `vc-config-<name>`
// Secret its vcluster.yaml parsed and validated as `vgate serve --config` does, and its patches
// compiled into the one shared sandbox pool under keys of its own (sync/patch-runner.ts).
//
// A tenant controls its own vcluster.yaml, so a config is untrusted input:
// - a config that is too large, invalid or fails to compile keeps that vCluster's last good config
//   (or none), and a Warning Event on the Secret says why (reason, message as Kubernetes writes
//   them); other vClusters are not touched;
// - each namespace may hold at most `maxPerNamespace` vClusters, so one tenant creating Secrets
//   cannot crowd out the others, and the whole host at most `maxVClusters`;
// - only the `config.yaml` key of those Secrets is kept in memory, never any other data.
// A deleted Secret drops its vCluster and unloads its patches; a config refused for want of room
// is tried again then.

import { createHash } from "node:crypto";
import type { ChangeType, CacheTransport } from "../kube/controller/watch-cache.js";
import { WatchCache } from "../kube/controller/watch-cache.js";
import type { EventRecorder } from "../kube/controller/event-recorder.js";
import { loadVClusterConfig, VClusterConfigError } from "../config/load-config.js";
import { loadedVCluster } from "../config/loaded-vcluster.js";
import {
  CONFIG_SECRET_KEY,
  CONFIG_SECRET_PREFIX,
  CONFIG_SECRET_SELECTOR,
  configSecretOwner,
  readConfigSecret,
  type VClusterRef,
} from "../config/vcluster-secret.js";
import { redactCredentials } from "../server/redact.js";
import { isObject } from "../shared/json.js";
import type { SharedPatchRunner } from "./patch-runner.js";
import {
  clusterMarker,
  type DiscoveredVCluster,
  type VClusterRegistry,
} from "./vcluster-lookup.js";

export const DEFAULT_MAX_VCLUSTERS = 1000;
export const DEFAULT_MAX_PER_NAMESPACE = 16;
/** The Event reasons, for `kubectl get events --field-selector reason=...`. */
export const REASONS = {
  invalid: "InvalidVClusterConfig",
  tooMany: "TooManyVClusters",
} as const;
const ACTION = "LoadVClusterConfig";

export interface DiscoveryLog {
  info(fields: object, msg: string): void;
  warn(fields: object, msg: string): void;
}

export interface VClusterDiscoveryOptions {
  transport: CacheTransport;
  runner: SharedPatchRunner;
  /** Warning Events on the Secrets whose config is not used; none when absent. */
  events?: Pick<EventRecorder, "warning">;
  log: DiscoveryLog;
  /** vgate's own namespace (--namespace): no mapping may target it (as with --config). */
  selfNamespace?: string;
  maxVClusters?: number;
  maxPerNamespace?: number;
  /** Told after each change was handled (tests, metrics). */
  onSettled?: (key: string) => void;
}

/** What the watch cache keeps of a Secret: its identity and the config text, nothing else. */
type KeptSecret = Record<string, unknown>;

function keepConfigOnly(object: Record<string, unknown>): KeptSecret {
  const meta = isObject(object.metadata) ? object.metadata : {};
  const kept: KeptSecret = {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name: meta.name,
      namespace: meta.namespace,
      uid: meta.uid,
      resourceVersion: meta.resourceVersion,
      labels: meta.labels,
    },
  };
  if (configSecretOwner(kept) === null) return kept;
  const data = isObject(object.data) ? object.data : {};
  const config = Object.hasOwn(data, CONFIG_SECRET_KEY) ? data[CONFIG_SECRET_KEY] : undefined;
  if (config !== undefined) kept.data = { [CONFIG_SECRET_KEY]: config };
  return kept;
}

interface Entry extends DiscoveredVCluster {
  /** sha256 of the config text it was loaded from: an unchanged config is not compiled again. */
  digest: string;
}

export class VClusterDiscovery implements VClusterRegistry {
  private readonly cache: WatchCache<KeptSecret>;
  private readonly entries = new Map<string, Entry>();
  /** The digest last refused per vCluster, so a bad config is reported once, not per resync. */
  private readonly refused = new Map<string, string>();
  private readonly running = new Map<string, Promise<void>>();
  private readonly again = new Set<string>();
  private initialDone = false;
  private readonly maxVClusters: number;
  private readonly maxPerNamespace: number;

  constructor(private readonly opts: VClusterDiscoveryOptions) {
    this.maxVClusters = opts.maxVClusters ?? DEFAULT_MAX_VCLUSTERS;
    this.maxPerNamespace = opts.maxPerNamespace ?? DEFAULT_MAX_PER_NAMESPACE;
    this.cache = new WatchCache(opts.transport, "/api/v1/secrets", keepConfigOnly, {
      labelSelector: CONFIG_SECRET_SELECTOR,
      onChange: (type, key) => this.changed(type, key),
      onError: (message) => opts.log.warn({ err: message }, "vCluster config watch unsynced"),
    });
  }

  /** Lists and watches; resolves once every Secret of the first list was handled. */
  async start(signal?: AbortSignal): Promise<void> {
    this.cache.start();
    await this.cache.waitForSync(signal);
    await this.idle();
    this.initialDone = true;
  }

  stop(): void {
    this.cache.stop();
  }

  synced(): boolean {
    return this.initialDone && this.cache.synced();
  }

  get(namespace: string, name: string): DiscoveredVCluster | undefined {
    return this.entries.get(`${namespace}/${name}`);
  }

  byClusterMarker(marker: string): readonly DiscoveredVCluster[] {
    return [...this.entries.values()].filter((e) => clusterMarker(e.ref) === marker);
  }

  /**
   * How many vClusters have a loaded config, and how many have a config refused now (a refused
   * vCluster may still run on its last good config, and then counts in both).
   */
  counts(): { loaded: number; refused: number } {
    return { loaded: this.entries.size, refused: this.refused.size };
  }

  /** The loaded vClusters, as "namespace/name". */
  names(): string[] {
    return [...this.entries.keys()].sort();
  }

  /** Resolves once no change is being handled. */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.all(this.running.values());
  }

  private changed(_type: ChangeType, key: string): void {
    if (this.running.has(key)) {
      this.again.add(key);
      return;
    }
    const run = this.handle(key)
      .catch((err: unknown) =>
        this.opts.log.warn({ secret: key, err: String(err) }, "vCluster config not handled"),
      )
      .finally(() => {
        this.running.delete(key);
        this.opts.onSettled?.(key);
        if (this.again.delete(key)) this.changed("MODIFIED", key);
      });
    this.running.set(key, run);
  }

  private async handle(key: string): Promise<void> {
    const secret = this.cache.get(key);
    const owner = secret === undefined ? null : configSecretOwner(secret);
    if (secret === undefined || owner === null) {
      this.forgetSecret(key);
      return;
    }
    const id = `${owner.namespace}/${owner.name}`;
    const read = readConfigSecret(secret);
    if (read.kind === "other") return;
    if (read.kind === "unreadable") {
      this.refuse(
        secret,
        id,
        `${read.reason}:${String(secretVersion(secret))}`,
        read.reason,
        read.message,
      );
      return;
    }
    const digest = createHash("sha256").update(read.text).digest("hex");
    if (this.entries.get(id)?.digest === digest) {
      this.refused.delete(id);
      return;
    }
    const room = this.room(owner);
    if (room !== true) {
      this.refuse(secret, id, `${REASONS.tooMany}:${digest}`, REASONS.tooMany, room);
      return;
    }
    let loaded;
    try {
      const config = loadVClusterConfig(read.text, read.fileName, {
        selfNamespace: this.opts.selfNamespace,
      });
      loaded = loadedVCluster(config, owner);
    } catch (err) {
      if (!(err instanceof VClusterConfigError)) throw err;
      this.refuse(secret, id, digest, REASONS.invalid, problemsText(err.problems));
      return;
    }
    let runner;
    try {
      runner = await this.opts.runner.load(id, loaded);
    } catch (err) {
      this.refuse(
        secret,
        id,
        digest,
        REASONS.invalid,
        `the patches do not compile: ${errorText(err)}`,
      );
      return;
    }
    // The Secret may have gone while the patches compiled.
    if (this.cache.get(key) === undefined) {
      this.opts.runner.unload(id);
      return;
    }
    this.entries.set(id, { ref: owner, loaded, runner, digest });
    this.refused.delete(id);
    this.opts.log.info(
      { vcluster: id, patchSets: loaded.patchSets.length, endpointsPatches: loaded.patches.length },
      "vCluster config loaded",
    );
  }

  /** True when `owner` is loaded already or fits; else why not. */
  private room(owner: VClusterRef): true | string {
    if (this.entries.has(`${owner.namespace}/${owner.name}`)) return true;
    if (this.entries.size >= this.maxVClusters) {
      return `vgate already serves ${this.entries.size} vClusters, its limit`;
    }
    let inNamespace = 0;
    for (const e of this.entries.values()) if (e.ref.namespace === owner.namespace) inNamespace++;
    if (inNamespace >= this.maxPerNamespace) {
      return `namespace ${owner.namespace} already has ${inNamespace} vClusters, the most vgate serves in one namespace`;
    }
    return true;
  }

  /** Keeps the last good config of `id` and says why the new one is not used (once per content). */
  private refuse(secret: KeptSecret, id: string, what: string, reason: string, why: string): void {
    if (this.refused.get(id) === what) return;
    this.refused.set(id, what);
    const kept = this.entries.has(id);
    const message = redactCredentials(
      `vgate ${kept ? "keeps the last good config" : "serves no patches"} of vCluster ${id}: ${why}`,
    );
    this.opts.log.warn({ vcluster: id, reason, kept }, "vCluster config not used");
    void this.opts.events?.warning(secret, reason, ACTION, message);
  }

  private forgetSecret(key: string): void {
    const [namespace, name] = key.split("/");
    const owner =
      namespace !== undefined && name !== undefined
        ? configSecretOwner({ metadata: { namespace, name } })
        : null;
    if (owner === null) return;
    const id = `${owner.namespace}/${owner.name}`;
    this.refused.delete(id);
    if (!this.entries.delete(id)) return;
    this.opts.runner.unload(id);
    this.opts.log.info({ vcluster: id }, "vCluster config Secret deleted: patches unloaded");
    // Room was made: the configs refused for want of it are tried again.
    for (const [waiting, what] of this.refused) {
      if (!what.startsWith(`${REASONS.tooMany}:`)) continue;
      const [ns, name] = waiting.split("/");
      this.changed("MODIFIED", `${ns}/${CONFIG_SECRET_PREFIX}${name}`);
    }
  }
}

function secretVersion(secret: KeptSecret): unknown {
  return isObject(secret.metadata) ? secret.metadata.resourceVersion : undefined;
}

/** Problems as one message: the first few, then how many more. */
function problemsText(problems: readonly string[]): string {
  const shown = problems.slice(0, 5).join("; ");
  const more = problems.length > 5 ? ` (and ${problems.length - 5} more)` : "";
  return `invalid config: ${shown}${more}`;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
