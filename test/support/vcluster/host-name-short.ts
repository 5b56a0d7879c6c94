// A reference's host name in single-namespace mode, computed from the formula of
// docs/decisions.md EPS-1 (vCluster's HostNameShort), not with vgate's code: the oracle the
// cluster tests compare vgate's reference patches with.

import { createHash } from "node:crypto";

export function hostNameShort(name: string, namespace: string, vcluster: string): string {
  const digest = createHash("sha256").update(`${name}-x-${namespace}-x-${vcluster}`).digest();
  let zeros = 0;
  while (zeros < digest.length && digest[zeros] === 0) zeros++;
  const base36 = BigInt(`0x${digest.toString("hex")}`).toString(36);
  return `v${`${"0".repeat(zeros)}${base36}`.slice(0, 13)}`;
}
