// Waiting until deleted keys are gone (delete --wait, prune --wait), which is after their
// finalizers are removed, for at most --timeout.

import { CliError, KubeError } from "./errors.js";
import { parseDurationFlag } from "./durations.js";
import type { FlagHelp } from "./flags.js";
import { goDuration } from "../kube/go-duration.js";
import type { AccessKeyApi } from "../kube/api.js";

export const WAIT_OPTIONS = {
  wait: { type: "boolean" },
  timeout: { type: "string" },
} as const;

export const WAIT_HELP: FlagHelp[] = [
  { flag: "--wait=false", text: "Wait until the keys are gone (finalizers done)" },
  {
    flag: "--timeout=0s",
    text: "How long --wait waits (e.g. 30s, 5m); 0: a week, as kubectl delete",
  },
];

const WEEK_MS = 168 * 3_600_000;

/**
 * --timeout in ms. kubectl delete: "if we requested to wait forever, set it to a week" (--timeout
 * 0, its default).
 */
export function waitTimeoutMs(value: string | undefined): number {
  return parseDurationFlag("--timeout", value) || WEEK_MS;
}

/** Returns once `name` is gone; throws kubectl's timeout error, and why, after `timeoutMs`. */
export async function waitGone(api: AccessKeyApi, name: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let delay = 100; ; delay = Math.min(delay * 2, 1000)) {
    let current;
    try {
      current = await api.get(name);
    } catch (err) {
      if (err instanceof KubeError && err.code === 404) return;
      throw err;
    }
    const left = deadline - Date.now();
    if (left <= 0) {
      // kubectl's words ("timed out waiting for the condition on ownedaccesskeys/NAME"), and why.
      const finalizers = current.metadata?.["finalizers"];
      const held = Array.isArray(finalizers) && finalizers.length > 0;
      throw new CliError(
        `timed out waiting for the condition on ${api.identity.resource}/${name}: ` +
          `still there after ${goDuration(timeoutMs)}` +
          (held ? `, waiting for its finalizers (${finalizers.join(", ")})` : ""),
      );
    }
    await new Promise((r) => setTimeout(r, Math.min(delay, left)));
  }
}
