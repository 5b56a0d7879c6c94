// vCluster's name translation, bit-exact (docs/reference.md#host-names,
// docs/reference.md#label-keys and docs/reference.md#virtual-to-host-dns). Every length is in UTF-8
// bytes, as in Go. Kubernetes names are ASCII, where we match vCluster byte for byte; a non-ASCII
// name (a Pod targetRef's, which the API server does not validate) comes out as vCluster's does on
// the wire (see goBytePrefix).
import { createHash } from "node:crypto";

/** Kubernetes names and label-key segments are at most 63 bytes. */
const MAX_NAME_BYTES = 63;
/** SafeConcatName keeps this many bytes before "-" + 10 hex digits of the digest. */
const KEEP_BYTES = 52;
const HASH_HEX_DIGITS = 10;
const SHORT_NAME_DIGITS = 13;

function sha256(text: string): Buffer {
  return createHash("sha256").update(text, "utf8").digest();
}

/** Lower-case hex sha256 of `text`, truncated to `digits`. */
function sha256Hex(text: string, digits: number): string {
  return sha256(text).toString("hex").slice(0, digits);
}

/**
 * Go's `s[0:max]` as the JSON of Go's API clients and servers carries it: the first `max` bytes of
 * `bytes`, where the bytes of a character the cut splits are invalid UTF-8, each of which Go's
 * encoding/json writes as U+FFFD. (A plain `toString("utf8")` would make one U+FFFD of them all.)
 * The result can then exceed `max` bytes in UTF-8, as vCluster's does once it is on the wire.
 */
function goBytePrefix(bytes: Buffer, max: number): string {
  const end = Math.min(max, bytes.length);
  // 0b10xxxxxx is a continuation byte: back up to the start of the cut character.
  let start = end;
  while (start > 0 && ((bytes[start - 1] ?? 0) & 0xc0) === 0x80) start--;
  const lead = start > 0 ? (bytes[start - 1] ?? 0) : 0;
  if (lead >= 0xc0 && end - (start - 1) < utf8SequenceLength(lead)) {
    const whole = start - 1;
    return `${bytes.subarray(0, whole).toString("utf8")}${"\uFFFD".repeat(end - whole)}`;
  }
  return bytes.subarray(0, end).toString("utf8");
}

function utf8SequenceLength(lead: number): number {
  if (lead >= 0xf0) return 4;
  if (lead >= 0xe0) return 3;
  return 2;
}

/**
 * translate.SafeConcatName: parts joined with "-"; when longer than 63 bytes, the first 52 bytes
 * + "-" + the first 10 hex digits of sha256(joined), with every ".-" then collapsed to "-".
 */
export function safeConcatName(...parts: string[]): string {
  const joined = parts.join("-");
  const bytes = Buffer.from(joined, "utf8");
  if (bytes.length <= MAX_NAME_BYTES) return joined;
  const shortened = `${goBytePrefix(bytes, KEEP_BYTES)}-${sha256Hex(joined, HASH_HEX_DIGITS)}`;
  // Go's strings.ReplaceAll: one left-to-right pass, non-overlapping.
  return shortened.split(".-").join("-");
}

/** The host name of a namespaced object in single-namespace mode: `name-x-ns-x-vc`. */
export function hostName(name: string, ns: string, vc: string): string {
  if (name === "") return "";
  return safeConcatName(name, "x", ns, "x", vc);
}

/**
 * base36.EncodeBytes: the bytes as one big-endian unsigned integer in digits 0-9a-z, plus one
 * extra leading "0" per leading zero byte (so `BigInt.toString(36)` alone is wrong).
 */
export function base36EncodeBytes(buf: Uint8Array): string {
  let value = 0n;
  for (const byte of buf) value = (value << 8n) | BigInt(byte);
  const digits = value === 0n ? "" : value.toString(36);
  let zeros = 0;
  while (zeros < buf.length && buf[zeros] === 0) zeros++;
  return "0".repeat(zeros) + digits;
}

/** singleNamespace.HostNameShort: `"v"` + 13 base36 digits of sha256(`name-x-ns-x-vc`). */
export function hostNameShort(name: string, ns: string, vc: string): string {
  if (name === "") return "";
  const digest = sha256([name, "x", ns, "x", vc].join("-"));
  return `v${base36EncodeBytes(digest).slice(0, SHORT_NAME_DIGITS)}`;
}

/** singleNamespace.HostNameCluster, for cluster-scoped kinds: `vcluster-name-x-targetNs-x-vc`. */
export function hostNameCluster(name: string, targetNs: string, vc: string): string {
  if (name === "") return "";
  return safeConcatName("vcluster", name, "x", targetNs, "x", vc);
}

/** The host label key for a translated virtual label key `key` (docs/reference.md#label-keys). */
export function convertLabelKeyWithPrefix(prefix: string, key: string, vc: string): string {
  return safeConcatName(prefix, vc, "x", sha256Hex(key, HASH_HEX_DIGITS));
}

// `<name>.<namespace>.svc[.<domain>]`; name and namespace are single DNS labels.
const SERVICE_DNS = /^([^.\s]+)\.([^.\s]+)\.svc(?:\.(\S+))?$/;

/**
 * The `virtualToHostDNS` expression helper: rewrites a virtual Service DNS name to the host
 * Service's, e.g. `nginx.default.svc.cluster.local` in vCluster `vcluster`/`vcluster-ns` becomes
 * `nginx-x-default-x-vcluster.vcluster-ns.svc.cluster.local`. Anything else is returned unchanged.
 */
export function virtualToHostDNS(s: string, vc: { name: string; namespace: string }): string {
  const match = SERVICE_DNS.exec(s);
  if (match === null) return s;
  const [, name = "", ns = "", domain] = match;
  const host = `${hostName(name, ns, vc.name)}.${vc.namespace}.svc`;
  return domain === undefined ? host : `${host}.${domain}`;
}

/** A `*` pattern split around its single wildcard; null when it has none or more than one. */
function splitWildcard(pattern: string): { prefix: string; suffix: string } | null {
  const at = pattern.indexOf("*");
  if (at < 0 || pattern.indexOf("*", at + 1) >= 0) return null;
  return { prefix: pattern.slice(0, at), suffix: pattern.slice(at + 1) };
}

/** What `*` in `pattern` matches in `value` (one or more characters), or null. */
function matchWildcard(pattern: { prefix: string; suffix: string }, value: string): string | null {
  const { prefix, suffix } = pattern;
  if (value.length <= prefix.length + suffix.length) return null;
  if (!value.startsWith(prefix) || !value.endsWith(suffix)) return null;
  return value.slice(prefix.length, value.length - suffix.length);
}

/**
 * Maps `name` through `pairs` ([from, to]): an exact `from` wins; otherwise the first pair where
 * both sides have exactly one `*` and `from` matches, with the matched text put into `to`.
 */
function mapByPatterns(name: string, pairs: [string, string][]): string | null {
  for (const [from, to] of pairs) {
    if (!from.includes("*") && from === name) return to;
  }
  for (const [from, to] of pairs) {
    const source = splitWildcard(from);
    const target = splitWildcard(to);
    if (source === null || target === null) continue;
    const matched = matchWildcard(source, name);
    if (matched !== null) return target.prefix + matched + target.suffix;
  }
  return null;
}

/**
 * Whether the mapping pattern `pattern` (exact, or one `*` matching one or more characters, as
 * mapNamespaceToHost reads it) can name `namespace`.
 */
export function patternCanProduce(pattern: string, namespace: string): boolean {
  if (!pattern.includes("*")) return pattern === namespace;
  const split = splitWildcard(pattern);
  return split !== null && matchWildcard(split, namespace) !== null;
}

function mappingPairs(mappings: Record<string, string> | undefined): [string, string][] {
  if (mappings === undefined) return [];
  return Object.entries(mappings).filter(
    (pair): pair is [string, string] => typeof pair[1] === "string",
  );
}

/**
 * sync.toHost.namespaces.mappings.byName, virtual → host: exact keys, or one `*` on both sides
 * (`"team-a-*": "h-team-a-*"`). Null when no mapping applies.
 */
export function mapNamespaceToHost(
  virtualNs: string,
  mappings: Record<string, string> | undefined,
): string | null {
  return mapByPatterns(virtualNs, mappingPairs(mappings));
}

/** The reverse of mapNamespaceToHost: host namespace → virtual namespace, or null. */
export function mapNamespaceToVirtual(
  hostNs: string,
  mappings: Record<string, string> | undefined,
): string | null {
  const reversed = mappingPairs(mappings).map(([from, to]): [string, string] => [to, from]);
  return mapByPatterns(hostNs, reversed);
}
