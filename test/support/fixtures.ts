// Loads wire-format samples from ../shared/fixtures (read-only, never copied into the repo).

import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root (tests run from dist/test/..., sources live in test/...). */
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
export const sharedDir = resolve(repoRoot, "../shared");

export function sharedFixture<T = unknown>(name: string): T {
  return JSON.parse(readFileSync(resolve(sharedDir, "fixtures/k8s-wire", name), "utf8")) as T;
}

export function repoFile(path: string): string {
  return readFileSync(resolve(repoRoot, path), "utf8");
}
