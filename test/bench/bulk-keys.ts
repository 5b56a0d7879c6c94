// Many OwnedAccessKeys made fast through a real kube-apiserver, for test/bench/auth.ts: the test
// rig's keep-alive client with a fixed number of creates in flight, acting as the admin. Keys are
// what vgate generates (43 URL-safe characters), chosen here so the benchmark knows every token.

import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import type { KubeTestClient } from "../support/kube/kube-client.js";

/** A token as vgate generates one: 32 random bytes, base64url (43 characters). */
export function randomKey(): string {
  return randomBytes(32).toString("base64url");
}

export interface BulkKeys {
  /** The tokens, in creation order (name `<prefix>-<index>`). */
  tokens: string[];
  seconds: number;
}

/**
 * Creates `count` keys named `<prefix>-<000000>` owned by `user-<i % 1000>` in `group`, with
 * `inFlight` creates at a time; prints progress every 10,000. Any answer but 201 stops it.
 */
export async function createKeys(
  client: KubeTestClient,
  group: string,
  prefix: string,
  count: number,
  inFlight: number,
  progress: (line: string) => void,
): Promise<BulkKeys> {
  const tokens = Array.from({ length: count }, () => randomKey());
  const path = `/apis/${group}/v1/ownedaccesskeys`;
  const started = performance.now();
  let next = 0;
  let done = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < count; i = next++) {
      const res = await client.request("POST", path, {
        apiVersion: `${group}/v1`,
        kind: "OwnedAccessKey",
        metadata: { name: `${prefix}-${String(i).padStart(6, "0")}` },
        spec: { user: `user-${i % 1000}`, key: tokens[i] },
      });
      if (res.status !== 201) {
        throw new Error(
          `creating ${prefix}-${i}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`,
        );
      }
      if (++done % 10_000 === 0) {
        const s = (performance.now() - started) / 1000;
        progress(`  ${done}/${count} keys in ${s.toFixed(0)} s (${(done / s).toFixed(0)}/s)`);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, count) }, worker));
  return { tokens, seconds: (performance.now() - started) / 1000 };
}
