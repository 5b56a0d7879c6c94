// The config the controller reconciles with, swapped on reload without stopping work: a reconcile
// takes the current generation (config and sandbox) for its whole run, a reload starts a new
// sandbox and makes it current, and the old sandbox is closed once the reconciles that took it are
// done.

import type { LoadedVCluster } from "../../config/loaded-vcluster.js";
import type { PatchRunner } from "../guarded-patch.js";
import type { StartedPatchRunner, VClusterRunner } from "../patch-runner.js";

export interface ConfigLease {
  loaded: LoadedVCluster;
  run: PatchRunner;
  /** The patches of one kind (patch-runner.ts runFor). */
  runFor: VClusterRunner["runFor"];
  release(): void;
}

interface Generation {
  loaded: LoadedVCluster;
  runner: StartedPatchRunner;
  users: number;
  retired: boolean;
  closed?: Promise<void>;
}

export class LiveConfig {
  private current: Generation;
  /** Every generation whose sandbox is not closed yet. */
  private readonly open = new Set<Generation>();

  constructor(loaded: LoadedVCluster, runner: StartedPatchRunner) {
    this.current = this.add(loaded, runner);
  }

  get loaded(): LoadedVCluster {
    return this.current.loaded;
  }

  /** The current generation, held until release(). */
  acquire(): ConfigLease {
    const gen = this.current;
    gen.users += 1;
    let released = false;
    return {
      loaded: gen.loaded,
      run: gen.runner.run,
      runFor: (kind) => gen.runner.runFor(kind),
      release: () => {
        if (released) return;
        released = true;
        gen.users -= 1;
        this.closeIfDone(gen);
      },
    };
  }

  /** Makes `loaded` with its started sandbox current; the old one closes when no longer used. */
  swap(loaded: LoadedVCluster, runner: StartedPatchRunner): void {
    const old = this.current;
    this.current = this.add(loaded, runner);
    old.retired = true;
    this.closeIfDone(old);
  }

  /** Closes every sandbox: the current one and old ones still draining. */
  async close(): Promise<void> {
    const all = [...this.open];
    for (const gen of all) {
      gen.retired = true;
      this.closeIfDone(gen, true);
    }
    await Promise.all(all.map((gen) => gen.closed));
  }

  private add(loaded: LoadedVCluster, runner: StartedPatchRunner): Generation {
    const gen: Generation = { loaded, runner, users: 0, retired: false };
    this.open.add(gen);
    return gen;
  }

  private closeIfDone(gen: Generation, force = false): void {
    if (!gen.retired || gen.closed || (gen.users > 0 && !force)) return;
    gen.closed = gen.runner.close().catch(() => undefined);
    void gen.closed.then(() => this.open.delete(gen));
  }
}
