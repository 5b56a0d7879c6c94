// Who may call the review routes (docs/decisions.md OAK-21). /authenticate and /authorize answer
// "is this token a key, and whose?" and "may this key do that?": only kube-apiserver should ask,
// or anyone who can reach vgate could try keys unseen. kube-apiserver presents a client certificate
// through the webhooks' kubeconfigs (users[].user.client-certificate); vgate checks it was signed by
// --client-ca-file and, with --client-allowed-names, that its common name is one of them (as
// kube-apiserver's own --requestheader-allowed-names does for front proxies). Admission routes stay
// open unless --require-admission-client-cert, since kube-apiserver presents a certificate to
// admission webhooks only when its admission configuration names one.

import { X509Certificate } from "node:crypto";
import { readFile } from "node:fs/promises";
import type { TLSSocket } from "node:tls";

export type ClientCertRefusal = "not-configured" | "no-certificate" | "untrusted" | "name";

export interface ClientCertPolicy {
  /** Whether --client-ca-file was given; without it the review routes are closed. */
  configured: boolean;
  /** Common names accepted; empty: any certificate the CA signed. */
  allowedNames: readonly string[];
  /**
   * The CAs trusted now (--client-ca-file as last loaded). The handshake verified the chain
   * against the CAs of its time; a kept-alive connection must not outlive a CA that was removed
   * since. Absent: the handshake's verdict stands.
   */
  trustedCas?: () => readonly X509Certificate[];
}

export const CLIENT_CERT_MESSAGES: Readonly<Record<ClientCertRefusal, string>> = {
  "not-configured":
    "vgate serve was started without --client-ca-file, so it cannot tell kube-apiserver apart " +
    "from other clients; this route answers no one",
  "no-certificate":
    "a client certificate is required: kube-apiserver presents it through the webhook kubeconfig " +
    "(users[].user.client-certificate and client-key)",
  untrusted: "the client certificate is not signed by a CA of --client-ca-file",
  name: "the client certificate's common name is not one of --client-allowed-names",
};

/** Why the connection's client may not call a protected route, or null when it may. */
export function clientCertRefusal(
  socket: TLSSocket,
  policy: ClientCertPolicy,
): ClientCertRefusal | null {
  if (!policy.configured) return "not-configured";
  const peer = socket.getPeerCertificate();
  if (!peer || Object.keys(peer).length === 0) return "no-certificate";
  // Verified by the TLS layer against the CA (requestCert with rejectUnauthorized: false, so
  // that the answer can be a Kubernetes Status instead of a failed handshake).
  if (!socket.authorized) return "untrusted";
  if (policy.trustedCas && !anchoredIn(socket, policy.trustedCas())) return "untrusted";
  if (policy.allowedNames.length === 0) return null;
  const cn = peer.subject?.CN;
  const names = Array.isArray(cn) ? cn : [cn];
  return names.some((n) => typeof n === "string" && policy.allowedNames.includes(n))
    ? null
    : "name";
}

/** Per connection: the CA list it was last checked against, and the verdict. */
const anchors = new WeakMap<TLSSocket, { cas: readonly X509Certificate[]; ok: boolean }>();

/**
 * Whether the chain the handshake verified still ends in one of `cas`: some certificate of it is
 * one of them, or was issued and signed by one. Cached per connection until the list changes.
 */
function anchoredIn(socket: TLSSocket, cas: readonly X509Certificate[]): boolean {
  const cached = anchors.get(socket);
  if (cached?.cas === cas) return cached.ok;
  const chain: X509Certificate[] = [];
  let peer = socket.getPeerCertificate(true);
  const seen = new Set<string>();
  while (peer?.raw && !seen.has(peer.fingerprint256)) {
    seen.add(peer.fingerprint256);
    chain.push(new X509Certificate(peer.raw));
    peer = peer.issuerCertificate;
  }
  const ok = chain.some((cert) =>
    cas.some(
      (ca) =>
        ca.fingerprint256 === cert.fingerprint256 ||
        (cert.checkIssued(ca) && cert.verify(ca.publicKey)),
    ),
  );
  anchors.set(socket, { cas, ok });
  return ok;
}

/** The certificates of a CA bundle that loadClientCa accepted. */
export function parseCaBundle(pem: string): X509Certificate[] {
  return (pem.match(PEM_CERTIFICATE) ?? []).map((block) => new X509Certificate(block));
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/**
 * The CA bundle of --client-ca-file: one or more PEM certificates, each of which must parse. The
 * errors name the file and the certificate's place in it, never the file's content.
 */
export async function loadClientCa(file: string): Promise<string> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    throw new Error(
      `cannot read --client-ca-file ${file}: ${typeof code === "string" ? code : "unreadable"}`,
      { cause: err },
    );
  }
  const blocks = text.match(PEM_CERTIFICATE) ?? [];
  if (blocks.length === 0) throw new Error(`--client-ca-file ${file} holds no PEM certificate`);
  blocks.forEach((pem, i) => {
    let cert: X509Certificate;
    try {
      cert = new X509Certificate(pem);
    } catch {
      throw new Error(`--client-ca-file ${file}: certificate ${i + 1} cannot be parsed`);
    }
    if (!cert.ca) throw new Error(`--client-ca-file ${file}: certificate ${i + 1} is not a CA`);
  });
  return blocks.join("\n") + "\n";
}
