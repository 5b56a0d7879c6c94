// Takes one node rig apart from what its state file records, whatever state the rig is in: every
// process in its network namespace or its cgroup is killed, every mount under its directory is
// unmounted, the pod network namespaces its containerd made, its veth pair, its network namespace
// and its host routes are deleted, and the host paths it made are removed. Idempotent: each step
// does nothing when its part is already gone. Used by NodeRig.stop() and by the keeper
// (rig-keeper.ts) when the test run that started the rig dies.

import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { rigProcesses } from "./host-state.js";

const run = promisify(execFile);

/** What a rig changed on the host, written to <dir>/rig.json before each change is made. */
export interface RigState {
  dir: string;
  netns: string;
  /** The namespace's inode (`ip netns` names can be reused; the inode cannot while it lives). */
  netnsInode: number;
  vethHost: string;
  /** Host routes added ("10.244.0.0/20 via 10.201.0.2"). */
  routes: string[];
  /** The cgroup (v1: in every hierarchy) the kubelet puts pods under. */
  cgroup: string;
  /** Host paths that did not exist before the rig started. */
  madePaths: string[];
  /** Whether the rig made /run/netns a mount point (ip netns add does on first use). */
  madeNetnsMount: boolean;
  /** `ip netns` names that existed before the rig started (pod namespaces are those made since). */
  netnsBefore: string[];
  /** The kubelet's host sysctls (KUBELET_SYSCTLS) as they were, put back at teardown. */
  sysctlsBefore: Record<string, string>;
  /** Set once teardown finished. */
  down?: boolean;
}

export function stateFile(dir: string): string {
  return join(dir, "rig.json");
}

export function saveState(state: RigState): void {
  writeFileSync(stateFile(state.dir), JSON.stringify(state, null, 2), { mode: 0o600 });
}

export function loadState(dir: string): RigState | undefined {
  try {
    return JSON.parse(readFileSync(stateFile(dir), "utf8")) as RigState;
  } catch {
    return undefined;
  }
}

async function quiet(cmd: string, args: readonly string[]): Promise<void> {
  await run(cmd, args).catch(() => undefined);
}

/** The rig's processes but the keeper, which must outlive them to finish the teardown. */
function pidsOf(state: RigState): number[] {
  return rigProcesses(state)
    .filter((l) => !l.includes("rig-keeper.js"))
    .map((l) => Number(l.split(" ")[0]))
    .filter((pid) => pid !== process.pid);
}

function signal(pids: readonly number[], sig: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, sig);
    } catch {
      // already gone
    }
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** SIGTERM to every rig process, SIGKILL to those left after `graceMs`; until none is left. */
async function killAll(state: RigState, graceMs: number): Promise<void> {
  signal(pidsOf(state), "SIGTERM");
  const deadline = Date.now() + graceMs;
  while (pidsOf(state).length > 0 && Date.now() < deadline) await sleep(100);
  for (let i = 0; i < 50; i++) {
    const left = pidsOf(state);
    if (left.length === 0) return;
    signal(left, "SIGKILL");
    await sleep(100);
  }
  throw new Error(`node rig teardown: processes left after SIGKILL: ${pidsOf(state).join(", ")}`);
}

/** Mount points under `dir`, deepest first. */
function mountsUnder(dir: string): string[] {
  return readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .map((l) => l.split(" ")[4] ?? "")
    .filter((m) => m === dir || m.startsWith(`${dir}/`))
    .sort((a, b) => b.length - a.length);
}

async function unmountAll(dir: string): Promise<void> {
  for (let i = 0; i < 5; i++) {
    const ms = mountsUnder(dir);
    if (ms.length === 0) return;
    for (const m of ms) await quiet("umount", ["-l", m]);
  }
}

/** Empty cgroup directories, deepest first, in every hierarchy. */
function removeCgroup(cgroup: string): void {
  for (const h of readdirSync("/sys/fs/cgroup")) {
    const top = join("/sys/fs/cgroup", h, cgroup);
    if (!existsSync(top)) continue;
    const dirs: string[] = [];
    const walk = (d: string) => {
      dirs.push(d);
      for (const e of readdirSync(d, { withFileTypes: true })) {
        if (e.isDirectory()) walk(join(d, e.name));
      }
    };
    walk(top);
    for (const d of dirs.reverse()) {
      try {
        rmdirSync(d);
      } catch {
        // still has processes (reported by the process check) or already gone
      }
    }
  }
}

async function netnsNames(): Promise<string[]> {
  const { stdout } = await run("ip", ["netns", "list"]).catch(() => ({ stdout: "" }));
  return stdout
    .split("\n")
    .map((l) => l.split(" ")[0] ?? "")
    .filter(Boolean);
}

/** Takes the rig in `dir` apart; `graceMs` is how long processes get after SIGTERM. */
export async function teardown(dir: string, graceMs = 5000): Promise<void> {
  const state = loadState(dir);
  if (!state || state.down) return;
  // Every step runs whatever an earlier one did; the first failure is thrown at the end, and the
  // state stays "up" so that a second teardown tries again.
  let failure: unknown;
  await killAll(state, graceMs).catch((err: unknown) => (failure ??= err));
  await unmountAll(state.dir);
  removeCgroup(state.cgroup);
  // Pod network namespaces: containerd names them cni-<uuid> under /var/run/netns.
  for (const name of await netnsNames()) {
    if (name.startsWith("cni-") && !state.netnsBefore.includes(name)) {
      await quiet("ip", ["netns", "del", name]);
    }
  }
  for (const r of state.routes) await quiet("ip", ["route", "del", ...r.split(" ")]);
  await quiet("ip", ["link", "del", state.vethHost]);
  await quiet("ip", ["netns", "del", state.netns]);
  if (state.madeNetnsMount && (await netnsNames()).length === 0) {
    await quiet("umount", ["/run/netns"]);
  }
  for (const [key, value] of Object.entries(state.sysctlsBefore)) {
    try {
      writeFileSync(join("/proc/sys", key), value);
    } catch {
      // read-only here: then the kubelet could not change it either
    }
  }
  for (const p of state.madePaths) {
    // Another rig may hold network namespaces there: the folder goes only when empty.
    if (p === "/var/run/netns") {
      try {
        rmdirSync(p);
      } catch {
        // not empty, or gone
      }
    } else rmSync(p, { recursive: true, force: true });
  }
  await unmountAll(state.dir);
  if (failure !== undefined) throw failure;
  state.down = true;
  saveState(state);
}
