// Subprocesses run a few at a time. A test that runs the real CLI once per case spends most of its
// time starting Node; independent runs started together, with a bound so that a 2-core machine is
// not swamped, finish in a fraction of the time one after another takes. Each run is still its own
// process, with its own arguments and standard input, exactly as a user would type it.

import { spawn } from "node:child_process";
import { availableParallelism } from "node:os";

/** What spawnSync gives, for the fields the tests read. */
export interface RunResult {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Calls `task`s with at most `limit` of them running at once. */
export function limiter(limit: number): <T>(task: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async (task) => {
    if (running >= limit) await new Promise<void>((r) => waiting.push(r));
    else running++;
    try {
      return await task();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  };
}

export interface RunOptions {
  /** Written to standard input, which is then closed (empty when not given). */
  input?: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  uid?: number;
  gid?: number;
  /** Killed (SIGTERM) after this many ms; default 60 s. */
  timeout?: number;
}

/** Runs `bin` with `args` as spawnSync would, without blocking the event loop. */
export function runAsync(bin: string, args: string[], opts: RunOptions = {}): Promise<RunResult> {
  const { input, timeout = 60_000, ...spawnOptions } = opts;
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { ...spawnOptions, stdio: ["pipe", "pipe", "pipe"], timeout });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.on("error", reject);
    child.on("close", (status, signal) => resolve({ status, signal, stdout, stderr }));
    // A child that exits before reading its input closes the pipe: that is its answer, not ours.
    child.stdin.on("error", () => undefined);
    child.stdin.end(input ?? "");
  });
}

/**
 * A runner of `bin` that keeps at most `limit` (default: the cores, at least 2) running; `opts`
 * is a RunOptions or just the standard input.
 */
export function boundedRunner(
  bin: string,
  defaults: RunOptions = {},
  limit = Math.max(2, availableParallelism()),
): (args: string[], opts?: RunOptions | string) => Promise<RunResult> {
  const bounded = limiter(limit);
  return (args, opts = {}) =>
    bounded(() =>
      runAsync(bin, args, { ...defaults, ...(typeof opts === "string" ? { input: opts } : opts) }),
    );
}
