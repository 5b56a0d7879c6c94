// CPU time of the processes a benchmark talks to (kube-apiserver, etcd, vgate), read from /proc, so
// a report can say where the time of one request went. Linux only; elsewhere nothing is found.

import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

let ticksPerSecond: number | undefined;

function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" })) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** The first process whose command line contains every one of `parts`, and none of `not`. */
export function findProcess(parts: readonly string[], not: readonly string[] = []): number | null {
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((d) => /^\d+$/.test(d));
  } catch {
    return null;
  }
  for (const pid of pids) {
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
    } catch {
      continue; // gone meanwhile
    }
    if (parts.every((p) => cmdline.includes(p)) && !not.some((p) => cmdline.includes(p))) {
      return Number(pid);
    }
  }
  return null;
}

/** User plus system CPU milliseconds `pid` has used so far; NaN when it cannot be read. */
export function cpuMs(pid: number | null): number {
  if (pid === null) return NaN;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the parenthesised command name, which may itself hold spaces: utime and stime
    // are fields 14 and 15 of the line, so 12 and 13 of what follows ") ".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks();
  } catch {
    return NaN;
  }
}

/** This process's own CPU milliseconds so far. */
export function ownCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}
