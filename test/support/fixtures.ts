// Loads the wire-format samples in test/fixtures/ (see test/fixtures/README.md) and other files of
// the repository.

import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root (tests run from dist/test/..., sources live in test/...). */
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

/** A Kubernetes wire-format sample from test/fixtures/k8s-wire/, parsed. */
export function fixture<T = unknown>(name: string): T {
  return JSON.parse(repoFile(`test/fixtures/k8s-wire/${name}`)) as T;
}

export function repoFile(path: string): string {
  return readFileSync(resolve(repoRoot, path), "utf8");
}
