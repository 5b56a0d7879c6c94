// Polling for what a real API server does a moment later (a watch event, a relist). The deadlines
// are generous: the machines that run these tests are shared and slow.

import assert from "node:assert/strict";

/** Waits until `check` is true, failing with `what` after `ms`. */
export async function until(
  check: () => boolean | Promise<boolean>,
  what: string,
  ms = 20_000,
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
