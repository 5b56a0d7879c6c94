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

/**
 * Reads `get` until `ok` holds of its value, and returns that value; fails with `what` and the last
 * value read after `ms`. Polls every 250 ms: what it reads goes through an API server.
 */
export async function untilValue<T>(
  what: string,
  get: () => Promise<T>,
  ok: (value: T) => boolean,
  ms = 90_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  let last = await get();
  while (!ok(last)) {
    if (Date.now() > deadline) {
      assert.fail(`${what}: not within ${ms} ms; last: ${JSON.stringify(last)}`);
    }
    await new Promise((r) => setTimeout(r, 250));
    last = await get();
  }
  return last;
}
