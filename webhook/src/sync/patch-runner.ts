// Starts the sandbox for loaded vcluster.yaml files: the one place the serve, sync and dry-run
// commands make a SandboxPool and load patches into it. The patches then run only through
// sync/guarded-patch.ts's applyGuardedPatches.
//
// One pool can hold the patches of many vClusters (`vgate serve --discover-vclusters`): each
// vCluster's sets are loaded under keys of their own (`<id>#<generation>`, then `/<section>.<key>`
// per kind), and a VClusterRunner only ever applies its own keys. A new config of a vCluster is
// loaded under a new generation and replaces the old one only once every set compiled, so a config
// that fails to compile leaves the previous one running.

import type { LoadedVCluster } from "../config/loaded-vcluster.js";
import type { PatchKind } from "../config/patch-kinds.js";
import type { SandboxPool } from "../patches/sandbox/pool.js";
import type { PatchRunner } from "./guarded-patch.js";

/** The patches of one loaded config. */
export interface VClusterRunner {
  /** sync.toHost.endpoints' patches. */
  run: PatchRunner;
  /** The patches of `kind` (one of loaded.patchSets' kinds), or undefined when it has none. */
  runFor(kind: PatchKind): PatchRunner | undefined;
}

export interface StartedPatchRunner extends VClusterRunner {
  close(): Promise<void>;
}

/** One sandbox pool for the configs of many vClusters. */
export interface SharedPatchRunner {
  /**
   * Compiles `loaded` under `id` (a vCluster's own key, such as "namespace/name"). Resolves with
   * its runner once every set compiled; the runner of the previous config of `id` keeps working
   * until then, and is unloaded after. A compile error rejects and leaves the previous one loaded.
   */
  load(id: string, loaded: LoadedVCluster): Promise<VClusterRunner>;
  /** Forgets the config of `id`; its runner fails from then on. */
  unload(id: string): void;
  /** How many configs are loaded. */
  readonly size: number;
  close(): Promise<void>;
}

const CONFIG_KEY = "vcluster";

function setKey(base: string, kind: PatchKind): string {
  return `${base}/${kind.section}.${kind.key}`;
}

/** Loads `loaded` under `base`: its Endpoints patches, then each kind's; all or none. */
async function loadUnder(
  pool: SandboxPool,
  base: string,
  loaded: LoadedVCluster,
): Promise<{ runner: VClusterRunner; keys: string[] }> {
  const keys: string[] = [];
  const byKind = new Map<string, string>();
  try {
    await pool.loadConfig(base, { patches: loaded.patches, vcluster: loaded.vcluster });
    keys.push(base);
    for (const set of loaded.patchSets) {
      const key = setKey(base, set.kind);
      // The kind's keywords ride with its patches, so the engine runs the one vCluster runs for
      // each direction (docs/decisions.md KND-2) at no cost per object.
      const keywords = { toHost: set.kind.toHost, toVirtual: set.kind.toVirtual };
      await pool.loadConfig(key, { patches: set.patches, vcluster: loaded.vcluster, keywords });
      keys.push(key);
      byKind.set(`${set.kind.section}.${set.kind.key}`, key);
    }
  } catch (err) {
    for (const key of keys) pool.unloadConfig(key);
    throw err;
  }
  return {
    keys,
    runner: {
      run: (job) => pool.apply(base, job),
      runFor(kind) {
        const key = byKind.get(`${kind.section}.${kind.key}`);
        return key === undefined ? undefined : (job) => pool.apply(key, job);
      },
    },
  };
}

async function newPool(opts: { workers?: number; deadlineMs: number }): Promise<SandboxPool> {
  // Loaded on demand: `vgate --help` and check-config never pay for the sandbox.
  const { SandboxPool } = await import("../patches/sandbox/pool.js");
  return new SandboxPool({ size: opts.workers, deadlineMs: opts.deadlineMs });
}

export async function startPatchRunner(
  loaded: LoadedVCluster,
  opts: { workers?: number; deadlineMs: number },
): Promise<StartedPatchRunner> {
  const pool = await newPool(opts);
  try {
    const { runner } = await loadUnder(pool, CONFIG_KEY, loaded);
    return { ...runner, close: () => pool.close() };
  } catch (err) {
    await pool.close();
    throw err;
  }
}

export async function startSharedPatchRunner(opts: {
  workers?: number;
  deadlineMs: number;
}): Promise<SharedPatchRunner> {
  const pool = await newPool(opts);
  const current = new Map<string, string[]>();
  /** Loads of one id run one after the other, so generations replace each other in order. */
  const queues = new Map<string, Promise<unknown>>();
  let generation = 0;
  const load = async (id: string, loaded: LoadedVCluster): Promise<VClusterRunner> => {
    const { runner, keys } = await loadUnder(pool, `${id}#${++generation}`, loaded);
    const previous = current.get(id);
    current.set(id, keys);
    for (const key of previous ?? []) pool.unloadConfig(key);
    return runner;
  };
  /** Runs `step` after every earlier load or unload of `id`. */
  const inTurn = <T>(id: string, step: () => Promise<T>): Promise<T> => {
    const next = (queues.get(id) ?? Promise.resolve()).catch(() => undefined).then(step);
    const tail = next.catch(() => undefined);
    queues.set(id, tail);
    void tail.then(() => {
      if (queues.get(id) === tail) queues.delete(id);
    });
    return next;
  };
  return {
    load: (id, loaded) => inTurn(id, () => load(id, loaded)),
    unload(id) {
      void inTurn(id, () => {
        for (const key of current.get(id) ?? []) pool.unloadConfig(key);
        current.delete(id);
        return Promise.resolve();
      });
    },
    get size() {
      return current.size;
    },
    close: () => pool.close(),
  };
}
