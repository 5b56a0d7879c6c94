// A kubernetes.io/tls Secret (tls.crt, tls.key and ca.crt, as cert-manager writes them): read,
// created or replaced through the kube transport. Its contents never reach an error message.

import { KubeError } from "../shared/status.js";
import { answerError } from "../shared/answer-error.js";
import type { KubeTransport } from "../shared/transport.js";

export const TLS_SECRET_TYPE = "kubernetes.io/tls";
const LABELS = { "app.kubernetes.io/name": "vgate", "app.kubernetes.io/managed-by": "vgate-certs" };

export interface TlsSecretData {
  cert: string;
  key: string;
  caCert: string;
}

export interface StoredTlsSecret {
  type: string;
  data: Partial<TlsSecretData>;
  /** The object as read: a replacement keeps its other labels, annotations and keys. */
  object: SecretObject;
}

interface SecretObject {
  type?: string;
  metadata?: { resourceVersion?: string; labels?: Record<string, string> } & Record<
    string,
    unknown
  >;
  data?: Record<string, string>;
}

const secretPath = (namespace: string, name: string) =>
  `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets${name ? `/${encodeURIComponent(name)}` : ""}`;

/** The Secret, or null when there is none; any other error answer is thrown as a KubeError. */
export async function readTlsSecret(
  transport: KubeTransport,
  namespace: string,
  name: string,
): Promise<StoredTlsSecret | null> {
  const res = await transport.request("GET", secretPath(namespace, name));
  if (res.status === 404) return null;
  if (res.status !== 200) throw answerError(res);
  const body = res.body as SecretObject;
  const field = (key: string) => {
    const value = body.data?.[key];
    return value === undefined ? undefined : Buffer.from(value, "base64").toString("utf8");
  };
  return {
    type: body.type ?? "Opaque",
    data: { cert: field("tls.crt"), key: field("tls.key"), caCert: field("ca.crt") },
    object: body,
  };
}

/**
 * Creates the Secret, or replaces `existing` at the resourceVersion it was read at (a concurrent
 * change is a Conflict, never overwritten), keeping its other labels, annotations and keys.
 */
export async function writeTlsSecret(
  transport: KubeTransport,
  namespace: string,
  name: string,
  data: TlsSecretData,
  existing?: StoredTlsSecret,
): Promise<void> {
  const old = existing?.object ?? {};
  const secret = {
    ...old,
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      ...old.metadata,
      name,
      namespace,
      labels: { ...old.metadata?.labels, ...LABELS },
    },
    type: TLS_SECRET_TYPE,
    data: {
      ...old.data,
      "tls.crt": Buffer.from(data.cert).toString("base64"),
      "tls.key": Buffer.from(data.key).toString("base64"),
      "ca.crt": Buffer.from(data.caCert).toString("base64"),
    },
  };
  const res = existing
    ? await transport.request("PUT", secretPath(namespace, name), secret)
    : await transport.request("POST", secretPath(namespace, ""), secret);
  if (res.status !== 200 && res.status !== 201) throw answerError(res);
}

/** A Secret of another type cannot become a TLS Secret in place: the type field is immutable. */
export function wrongTypeError(namespace: string, name: string, type: string): KubeError {
  return new KubeError(
    422,
    "Invalid",
    `secret ${JSON.stringify(name)} in namespace ${JSON.stringify(namespace)} has type ${JSON.stringify(type)}, not ${TLS_SECRET_TYPE}; delete it or choose another --secret`,
  );
}
