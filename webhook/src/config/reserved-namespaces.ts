// Host namespaces that no mapping may reach (docs/decisions.md EPS-20): Kubernetes' own
// namespaces, `default`, and the namespace vgate itself runs in (its Secrets, its service
// account). A sync.toHost.namespaces mapping whose host side is one of them, or a pattern that can
// produce one, is refused when the config is loaded, by every command that loads it.
import { patternCanProduce } from "../patches/host-names.js";

/** Never written to by vgate, whatever the config says. */
export const FIXED_RESERVED_NAMESPACES: readonly string[] = Object.freeze([
  "kube-system",
  "kube-public",
  "kube-node-lease",
  "default",
]);

/** The fixed list, plus vgate's own namespace when it is known. */
export function reservedNamespaces(selfNamespace?: string): string[] {
  const all = [...FIXED_RESERVED_NAMESPACES];
  if (selfNamespace && !all.includes(selfNamespace)) all.push(selfNamespace);
  return all;
}

/** How the reserved list reads in a message: `kube-system, ..., default and "vgate-system" (vgate's own)`. */
export function describeReserved(selfNamespace?: string): string {
  const fixed = FIXED_RESERVED_NAMESPACES.join(", ");
  return selfNamespace && !FIXED_RESERVED_NAMESPACES.includes(selfNamespace)
    ? `${fixed} and ${JSON.stringify(selfNamespace)} (the namespace vgate runs in)`
    : `${fixed}${selfNamespace ? "" : " and the namespace vgate runs in"}`;
}

/**
 * The problem with one mapping `where` whose host side is `to`, or null: an exact name that is
 * reserved, or a pattern that can produce a reserved name (its `*` matches one or more characters,
 * so "kube-*" produces "kube-system" and "*" produces all of them).
 */
export function reservedMappingProblem(
  where: string,
  to: string,
  selfNamespace?: string,
): string | null {
  const hit = reservedNamespaces(selfNamespace).find((ns) => patternCanProduce(to, ns));
  if (hit === undefined) return null;
  const what = to.includes("*")
    ? `host namespace pattern ${JSON.stringify(to)} can produce ${JSON.stringify(hit)}`
    : `host namespace ${JSON.stringify(to)}`;
  return `${where}: ${what}, a reserved namespace: vgate never writes to ${describeReserved(selfNamespace)}`;
}
