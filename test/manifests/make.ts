// Running this checkout's make targets (and other commands) from tests.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { repoFile, repoRoot } from "../support/fixtures.js";

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** `cmd args` in this checkout, with `env` over the test's environment; never rejects. */
export function runIn(
  cmd: string,
  args: readonly string[],
  env = {},
  timeoutMs = 60_000,
): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      cmd,
      args,
      { cwd: repoRoot, env: { ...process.env, ...env }, timeout: timeoutMs, maxBuffer: 16 << 20 },
      (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

/** The absolute path of `cmd` on the test's PATH, so it can run with a PATH that lacks it. */
export async function which(cmd: string): Promise<string> {
  const r = await runIn("bash", ["-c", `command -v ${cmd}`]);
  assert.equal(r.code, 0, `${cmd} is not on PATH`);
  return r.stdout.trim();
}

/** package.json's version. */
export const packageVersion = (): string =>
  (JSON.parse(repoFile("package.json")) as { version: string }).version;
