// Temp dirs for tests, each removed when its owner is done, also when a test fails: a test's own
// dir after that test (mocha-root.ts's root afterEach hook), a suite's by the suite's `after` hook,
// a module's shared one when the process exits. Whatever is still there at exit (a run without
// mocha-root.ts, a hook that never ran) is removed then.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const made = new Set<string>();
const ofTest = new Set<string>();
let exitHook = false;

function make(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.add(dir);
  if (!exitHook) {
    exitHook = true;
    process.once("exit", () => {
      for (const d of made) rmSync(d, { recursive: true, force: true });
    });
  }
  return dir;
}

/** Removes `dir` and all it holds, now. */
export function removeTempDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  made.delete(dir);
  ofTest.delete(dir);
}

/** A dir for the running test (call it in an `it` body): removed once the test ends. */
export function testTempDir(prefix: string): string {
  const dir = make(prefix);
  ofTest.add(dir);
  return dir;
}

/** Removes the dirs of the test that just ended (mocha-root.ts's root afterEach hook). */
export function removeTestTempDirs(): void {
  for (const dir of ofTest) removeTempDir(dir);
}

/**
 * A dir for the suite whose body (or test file's top level) calls this: removed by an `after`
 * hook of that suite.
 */
export function suiteTempDir(prefix: string): string {
  const dir = make(prefix);
  after(() => removeTempDir(dir));
  return dir;
}

/** A dir shared by a module's users for the whole process: removed when the process exits. */
export function processTempDir(prefix: string): string {
  return make(prefix);
}
