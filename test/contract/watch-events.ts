// A client-node Watch on one key, collecting its events so a test can wait for them in order.

import { Watch, type KubeConfig } from "@kubernetes/client-node";
import { PLURAL, type StoredKey } from "./keys.js";

export interface WatchEvent {
  type: string;
  object: StoredKey;
}

export interface KeyWatch {
  events: WatchEvent[];
  /** Resolves once `count` events arrived; rejects after `timeoutMs` or when the watch ends. */
  waitFor(count: number, timeoutMs?: number): Promise<WatchEvent[]>;
  stop(): void;
}

/** Watches the key `name` from `resourceVersion` (events after it only). */
export async function watchKey(
  kc: KubeConfig,
  group: string,
  name: string,
  resourceVersion: string,
): Promise<KeyWatch> {
  const events: WatchEvent[] = [];
  let ended: unknown = null;
  let wake: () => void = () => {};
  const controller = await new Watch(kc).watch(
    `/apis/${group}/v1/${PLURAL}`,
    { resourceVersion, fieldSelector: `metadata.name=${name}` },
    (type, object: StoredKey) => {
      events.push({ type, object });
      wake();
    },
    (err) => {
      ended = err ?? new Error("the watch ended");
      wake();
    },
  );
  const waitFor = async (count: number, timeoutMs = 10_000): Promise<WatchEvent[]> => {
    const deadline = Date.now() + timeoutMs;
    while (events.length < count) {
      if (ended) throw new Error(`watch ended after ${events.length} events: ${String(ended)}`);
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(`watch: ${events.length} of ${count} events in ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    return events.slice(0, count);
  };
  return { events, waitFor, stop: () => controller.abort() };
}
