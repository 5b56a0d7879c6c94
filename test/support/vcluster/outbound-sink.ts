// Proof that nothing in a rig's network namespace tries to reach the world. The namespace has no
// default route, so such a packet is never sent at all, and nothing would show that it was tried.
// The sink gives the namespace a default route into one end of a veth pair whose other end is in
// the namespace too (so nothing can leave through it), and counts and drops, with iptables rules in
// OUTPUT (the namespace's own processes) and FORWARD (its pods), every packet routed there and
// every DNS query (the rig runs no DNS server, so a query means a name outside it). The interfaces
// and the rules live in the namespace and go with it.

import type { NodeRig } from "../node/node-rig.js";

const SINK = "vgsink0";
const PEER = "vgsink1";
const CHAIN = "VGATE-OUTBOUND";

export interface OutboundSink {
  /** Packets sent toward the world, and DNS queries, since the sink was made. */
  counts(): Promise<{ outbound: number; dns: number }>;
}

export async function outboundSink(rig: NodeRig): Promise<OutboundSink> {
  const ns = (cmd: string, ...args: string[]) => rig.inNetns(cmd, args);
  await ns("ip", "link", "add", SINK, "type", "veth", "peer", "name", PEER);
  await ns("ip", "link", "set", SINK, "up");
  await ns("ip", "route", "add", "default", "dev", SINK);
  await ns("iptables", "-N", CHAIN);
  await ns("iptables", "-I", "OUTPUT", "1", "-j", CHAIN);
  await ns("iptables", "-I", "FORWARD", "1", "-j", CHAIN);
  // Counted, then dropped: the caller fails at once instead of waiting for an answer.
  await ns(
    "iptables",
    "-A",
    CHAIN,
    "-o",
    SINK,
    "-m",
    "comment",
    "--comment",
    "outbound",
    "-j",
    "DROP",
  );
  for (const proto of ["udp", "tcp"]) {
    await ns(
      "iptables",
      "-A",
      CHAIN,
      "-p",
      proto,
      "--dport",
      "53",
      "-m",
      "comment",
      "--comment",
      "dns",
      "-j",
      "DROP",
    );
  }
  return {
    counts: async () => {
      const { stdout } = await ns("iptables", "-L", CHAIN, "-v", "-n", "-x");
      let outbound = 0;
      let dns = 0;
      for (const line of stdout.split("\n")) {
        const packets = Number(line.trim().split(/\s+/)[0]);
        if (!Number.isFinite(packets)) continue;
        if (line.includes("/* outbound */")) outbound += packets;
        if (line.includes("/* dns */")) dns += packets;
      }
      return { outbound, dns };
    },
  };
}
