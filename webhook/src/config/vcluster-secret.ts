// Where vCluster keeps each virtual cluster's config on the host, and how vgate reads it
// (docs/reference.md#vcluster-config-secret). vCluster's chart (chart/templates/config-secret.yaml)
// writes the merged Helm values of each release into a Secret
//
//   name: vc-config-<release>      namespace: the vCluster's host namespace
//   labels: app=vcluster, release=<release>, chart=vcluster-<version>, heritage=Helm
//   type: Opaque                   data["config.yaml"]: base64 of the values as YAML
//
// and mounts it into the syncer at /var/lib/vcluster/config.yaml; the syncer, the CLI and the
// lifecycle code all read it by that name (pkg/setup/config, pkg/cli/find, pkg/lifecycle). The
// vCluster's name is the release's, which is also what the syncer writes into the
// `vcluster.loft.sh/managed-by` label of the namespaced host objects it syncs.
//
// Pure: a Secret as JSON in, the vCluster and its config text (or why not) out.

import { isObject } from "../shared/json.js";

export const CONFIG_SECRET_PREFIX = "vc-config-";
export const CONFIG_SECRET_KEY = "config.yaml";
/** The label selector vgate lists and watches Secrets with: only vCluster's chart's Secrets. */
export const CONFIG_SECRET_SELECTOR = "app=vcluster";
const RELEASE_LABEL = "release";

/**
 * The largest config.yaml vgate reads from a Secret, decoded. The chart's values with every default
 * are about 40 KiB of YAML; a tenant controls its vcluster.yaml, and every loaded config lives in
 * every sandbox child, so a config past this is refused rather than loaded.
 */
export const MAX_DISCOVERED_CONFIG_BYTES = 256 * 1024;

/** A vCluster on the host, as its config Secret names it. */
export interface VClusterRef {
  name: string;
  namespace: string;
}

export type ConfigSecret =
  | { kind: "config"; vcluster: VClusterRef; text: string; fileName: string }
  /** Not a vCluster's config Secret at all (another Secret of the chart): ignored silently. */
  | { kind: "other" }
  /** A config Secret that cannot be read: the reason (CamelCase) and a message for its Event. */
  | { kind: "unreadable"; vcluster: VClusterRef; reason: string; message: string };

/** The vCluster a Secret's name says it holds the config of, or null when it is no config Secret. */
export function configSecretOwner(secret: Record<string, unknown>): VClusterRef | null {
  const meta = secret.metadata;
  if (!isObject(meta)) return null;
  const { name, namespace } = meta;
  if (typeof name !== "string" || typeof namespace !== "string") return null;
  if (!name.startsWith(CONFIG_SECRET_PREFIX) || name.length === CONFIG_SECRET_PREFIX.length) {
    return null;
  }
  const vcluster = { name: name.slice(CONFIG_SECRET_PREFIX.length), namespace };
  // The chart sets release to the release name; a Secret whose label names another release is not
  // the config of the vCluster its name says.
  const labels = isObject(meta.labels) ? meta.labels : {};
  const release = Object.hasOwn(labels, RELEASE_LABEL) ? labels[RELEASE_LABEL] : undefined;
  if (release !== undefined && release !== vcluster.name) return null;
  return vcluster;
}

/** Reads a listed or watched Secret: a vCluster's config text, or why it cannot be used. */
export function readConfigSecret(secret: Record<string, unknown>): ConfigSecret {
  const vcluster = configSecretOwner(secret);
  if (vcluster === null) return { kind: "other" };
  const fileName = `secret ${vcluster.namespace}/${CONFIG_SECRET_PREFIX}${vcluster.name} ${CONFIG_SECRET_KEY}`;
  const data = isObject(secret.data) ? secret.data : {};
  const encoded = Object.hasOwn(data, CONFIG_SECRET_KEY) ? data[CONFIG_SECRET_KEY] : undefined;
  if (typeof encoded !== "string") {
    return {
      kind: "unreadable",
      vcluster,
      reason: "MissingConfig",
      message: `data[${JSON.stringify(CONFIG_SECRET_KEY)}] is missing: vCluster's chart writes the config there`,
    };
  }
  // base64 decodes to 3 bytes per 4 characters: refuse before decoding what cannot fit.
  if (Math.floor((encoded.length * 3) / 4) > MAX_DISCOVERED_CONFIG_BYTES + 2) {
    return tooLarge(vcluster, Math.floor((encoded.length * 3) / 4));
  }
  const bytes = Buffer.from(encoded, "base64");
  if (bytes.length > MAX_DISCOVERED_CONFIG_BYTES) return tooLarge(vcluster, bytes.length);
  const text = new TextDecoder("utf-8", { fatal: false }).decode(bytes);
  return { kind: "config", vcluster, text, fileName };
}

function tooLarge(vcluster: VClusterRef, bytes: number): ConfigSecret {
  return {
    kind: "unreadable",
    vcluster,
    reason: "ConfigTooLarge",
    message: `data[${JSON.stringify(CONFIG_SECRET_KEY)}] is about ${bytes} bytes; vgate reads at most ${MAX_DISCOVERED_CONFIG_BYTES}`,
  };
}
