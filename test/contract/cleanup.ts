// What a test created is removed after it, whatever happened: real clusters are shared.

import { ApiException } from "@kubernetes/client-node";
import type { KeyClient } from "./keys.js";

type Step = () => Promise<unknown>;

export class Cleanup {
  private steps: Step[] = [];

  add(step: Step): void {
    this.steps.push(step);
  }

  /** Removes a key as `keys`' user may (its owner): finalizers first, then the key. */
  key(keys: KeyClient, name: string): void {
    this.add(() => removeKey(keys, name));
  }

  /** Runs the steps newest first; 404s are fine, other failures are reported after all ran. */
  async run(): Promise<void> {
    const steps = this.steps.reverse();
    this.steps = [];
    const failures: unknown[] = [];
    for (const step of steps) {
      try {
        await step();
      } catch (err) {
        if (!(err instanceof ApiException && err.code === 404)) failures.push(err);
      }
    }
    if (failures.length > 0) {
      throw new AggregateError(failures, `cleanup: ${failures.length} step(s) failed`);
    }
  }
}

async function removeKey(keys: KeyClient, name: string): Promise<void> {
  const key = await keys.find(name);
  if (!key) return;
  if ((key.metadata.finalizers ?? []).length > 0) {
    await keys.jsonPatch(name, [{ op: "remove", path: "/metadata/finalizers" }]);
  }
  await keys.delete(name);
}
