// The `vgate serve` process of a test rig, seen from outside as an operator would: its PID (found
// by its --port flag in /proc), whether it is alive, and its resident memory (VmRSS).

import { readdirSync, readFileSync } from "node:fs";

/**
 * The PID of the `vgate serve --port=PORT` node process (not its supervisor, whose command line
 * names it too). Linux only: /proc.
 */
export function vgatePid(port: number): number {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let args: string[];
    try {
      args = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
    } catch {
      continue; // gone meanwhile
    }
    const isVgate = args.some((a) => a.endsWith("webhook/bin/vgate")) && args.includes("serve");
    if (isVgate && args.includes(`--port=${port}`) && !args.some((a) => a.endsWith("supervise.js")))
      return Number(entry);
  }
  throw new Error(`no vgate serve --port=${port} process in /proc`);
}

/** Whether `pid` still runs (a zombie counts as gone). */
export function isAlive(pid: number): boolean {
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, "utf8"));
  } catch {
    return false;
  }
}

/** VmRSS of `pid` in MB (MiB); undefined once it is gone. */
export function rssMb(pid: number): number | undefined {
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Polls until `pid` is gone; the milliseconds it took, or undefined after `timeoutMs`. */
export async function waitForExit(pid: number, timeoutMs: number): Promise<number | undefined> {
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    if (!isAlive(pid)) return Date.now() - started;
    await new Promise((r) => setTimeout(r, 10));
  }
  return undefined;
}
