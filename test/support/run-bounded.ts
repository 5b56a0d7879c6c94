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

/** Runs `bin` with `args` and `input` on standard input; kills it after `timeout` ms. */
export function runAsync(
  bin: string,
  args: string[],
  input?: string,
  timeout = 60_000,
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { stdio: ["pipe", "pipe", "pipe"], timeout });
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

/** A runner of `bin` that keeps at most `limit` (default: the cores, at least 2) running. */
export function boundedRunner(
  bin: string,
  limit = Math.max(2, availableParallelism()),
): (args: string[], input?: string) => Promise<RunResult> {
  const bounded = limiter(limit);
  return (args, input) => bounded(() => runAsync(bin, args, input));
}
