// What the node rig could change on the host, read in one go so that a test can compare the host
// before a rig started with the host after it stopped: network interfaces, routes, iptables rules,
// mounts, network sysctls, network namespaces, cgroups, the host paths kubelet and the container
// runtime write whatever their flags say, and processes that run a rig binary.

import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** Host paths kubelet 1.36, libcni and the containerd 1.6 shim use whatever their flags say. */
export const HOST_PATHS_WRITTEN = [
  "/var/lib/kubelet",
  "/var/log/containers",
  "/var/log/pods",
  "/var/lib/cni",
  "/run/containerd",
  "/var/run/netns",
  "/etc/cni",
  "/opt/cni",
] as const;

/**
 * Kernel settings the kubelet sets on the host (its setupKernelTunables, unless
 * protectKernelDefaults), which are not per network namespace: the rig puts them back.
 */
export const KUBELET_SYSCTLS = [
  "vm/overcommit_memory",
  "vm/panic_on_oom",
  "kernel/panic",
  "kernel/panic_on_oops",
  "kernel/keys/root_maxkeys",
  "kernel/keys/root_maxbytes",
] as const;

/** Network sysctls a CNI plugin, kube-proxy or a careless rig sets on whatever namespace it is in. */
const SYSCTLS = [
  ...KUBELET_SYSCTLS,
  "net/ipv4/ip_forward",
  "net/ipv4/conf/all/forwarding",
  "net/ipv4/conf/all/route_localnet",
  "net/ipv6/conf/all/forwarding",
  "net/bridge/bridge-nf-call-iptables",
  "net/bridge/bridge-nf-call-ip6tables",
  "net/netfilter/nf_conntrack_max",
  "net/ipv4/vs/conntrack",
] as const;

export interface HostState {
  links: string[];
  routes: string[];
  iptables: string[];
  mounts: string[];
  sysctls: string[];
  netns: string[];
  cgroups: string[];
  paths: string[];
}

/** Lines of `cmd args`, or one line saying why it could not be read (so a diff still shows). */
async function lines(cmd: string, args: readonly string[]): Promise<string[]> {
  try {
    const { stdout } = await run(cmd, args, { maxBuffer: 64 * 1024 * 1024 });
    return stdout.split("\n").filter((l) => l.trim() !== "");
  } catch (err) {
    return [`(${cmd} ${args.join(" ")} failed: ${(err as Error).message.split("\n")[0]})`];
  }
}

/** Rule lines of every iptables table, without counters (which change on their own). */
async function iptablesRules(): Promise<string[]> {
  const out: string[] = [];
  for (const tool of ["iptables-save", "ip6tables-save"]) {
    for (const l of await lines(tool, [])) {
      if (l.startsWith("#")) continue;
      out.push(`${tool}: ${l.replace(/\[\d+:\d+\]/g, "")}`);
    }
  }
  return out;
}

function sysctls(): string[] {
  return SYSCTLS.map((key) => {
    const path = join("/proc/sys", key);
    try {
      return `${key}=${readFileSync(path, "utf8").trim()}`;
    } catch {
      return `${key} absent`;
    }
  });
}

/** Mount points (field 5 of mountinfo) with their file system type. */
function mounts(): string[] {
  return readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => {
      const fields = l.split(" ");
      const sep = fields.indexOf("-");
      return `${fields[4]} ${fields[sep + 1] ?? "?"}`;
    })
    .sort();
}

/** cgroup directories two levels deep in every v1 hierarchy (and the unified one). */
function cgroups(): string[] {
  const root = "/sys/fs/cgroup";
  const out: string[] = [];
  const dirs = (p: string) => {
    try {
      return readdirSync(p, { withFileTypes: true })
        .filter((d) => d.isDirectory())
        .map((d) => d.name);
    } catch {
      return [];
    }
  };
  for (const h of dirs(root)) {
    for (const c of dirs(join(root, h))) {
      out.push(`${h}/${c}`);
      for (const c2 of dirs(join(root, h, c))) out.push(`${h}/${c}/${c2}`);
    }
  }
  return out.sort();
}

/**
 * Processes of one rig: those in its network namespace (by the namespace's inode, which outlives
 * its name), those in its cgroup, and those whose command line names its directory.
 */
export function rigProcesses(rig: { dir: string; netnsInode: number; cgroup: string }): string[] {
  const out: string[] = [];
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const ns = readlinkSync(`/proc/${pid}/ns/net`);
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
      const cg = readFileSync(`/proc/${pid}/cgroup`, "utf8");
      if (
        ns === `net:[${rig.netnsInode}]` ||
        cmd.includes(rig.dir) ||
        cg.includes(`:${rig.cgroup}/`) ||
        cg.includes(`:${rig.cgroup}\n`)
      ) {
        out.push(`${pid} ${cmd.slice(0, 200)}`);
      }
    } catch {
      // gone, or a kernel thread
    }
  }
  return out.sort();
}

export async function hostState(): Promise<HostState> {
  const [links, routes4, routes6, iptables, netns] = await Promise.all([
    lines("ip", ["-o", "link", "show"]).then((ls) =>
      // Interface statistics and queue lengths are not state the rig sets.
      ls.map((l) => l.replace(/\\\s+link\/.*$/, "").replace(/ qlen \d+/, "")),
    ),
    lines("ip", ["-4", "route", "show", "table", "all"]),
    lines("ip", ["-6", "route", "show", "table", "all"]),
    iptablesRules(),
    lines("ip", ["netns", "list"]),
  ]);
  return {
    links,
    routes: [...routes4, ...routes6].sort(),
    iptables,
    mounts: mounts(),
    sysctls: sysctls(),
    netns: netns.sort(),
    cgroups: cgroups(),
    paths: HOST_PATHS_WRITTEN.filter((p) => existsSync(p)),
  };
}

/** What differs, as readable lines ("+ added" / "- removed" per aspect); empty when equal. */
export function diffHostState(before: HostState, after: HostState): string[] {
  const out: string[] = [];
  for (const key of Object.keys(before) as (keyof HostState)[]) {
    const a = new Set(before[key]);
    const b = new Set(after[key]);
    for (const l of after[key]) if (!a.has(l)) out.push(`${key}: + ${l}`);
    for (const l of before[key]) if (!b.has(l)) out.push(`${key}: - ${l}`);
  }
  return out;
}
