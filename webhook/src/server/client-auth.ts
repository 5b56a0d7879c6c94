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
import { cannotRead } from "../shared/file-error.js";
import type { DetailedPeerCertificate, TLSSocket } from "node:tls";

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

/** Per connection: the verdict, for the policy and CA list it was reached with. */
const verdicts = new WeakMap<
  TLSSocket,
  {
    policy: ClientCertPolicy;
    cas: readonly X509Certificate[] | undefined;
    refusal: ClientCertRefusal | null;
  }
>();

/**
 * Why the connection's client may not call a protected route, or null when it may. The verdict is
 * a connection's: reached once (reading the peer's certificate costs more than answering a review)
 * and kept until the trusted CAs change. The server disables renegotiation, so the certificate a
 * connection presented cannot change under it.
 */
export function clientCertRefusal(
  socket: TLSSocket,
  policy: ClientCertPolicy,
): ClientCertRefusal | null {
  if (!policy.configured) return "not-configured";
  const cas = policy.trustedCas?.();
  const cached = verdicts.get(socket);
  if (cached?.policy === policy && cached.cas === cas) return cached.refusal;
  const refusal = decide(socket, policy, cas);
  verdicts.set(socket, { policy, cas, refusal });
  return refusal;
}

function decide(
  socket: TLSSocket,
  policy: ClientCertPolicy,
  cas: readonly X509Certificate[] | undefined,
): ClientCertRefusal | null {
  const peer = socket.getPeerCertificate(true);
  if (!peer || Object.keys(peer).length === 0) return "no-certificate";
  // Verified by the TLS layer against the CA (requestCert with rejectUnauthorized: false, so
  // that the answer can be a Kubernetes Status instead of a failed handshake).
  if (!socket.authorized) return "untrusted";
  if (cas && !anchoredIn(peer, cas)) return "untrusted";
  if (policy.allowedNames.length === 0) return null;
  const cn = peer.subject?.CN;
  const names = Array.isArray(cn) ? cn : [cn];
  return names.some((n) => typeof n === "string" && policy.allowedNames.includes(n))
    ? null
    : "name";
}

/**
 * Whether the chain the handshake verified still ends in one of `cas` (the CAs trusted now, which
 * may have lost the one the handshake used): some certificate of it is one of them, or was issued
 * and signed by one.
 */
function anchoredIn(leaf: DetailedPeerCertificate, cas: readonly X509Certificate[]): boolean {
  const chain: X509Certificate[] = [];
  const seen = new Set<string>();
  for (let peer: DetailedPeerCertificate | undefined = leaf; peer?.raw;) {
    if (seen.has(peer.fingerprint256)) break;
    seen.add(peer.fingerprint256);
    chain.push(new X509Certificate(peer.raw));
    peer = peer.issuerCertificate;
  }
  return chain.some((cert) =>
    cas.some(
      (ca) =>
        ca.fingerprint256 === cert.fingerprint256 ||
        (cert.checkIssued(ca) && cert.verify(ca.publicKey)),
    ),
  );
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
    throw new Error(cannotRead(`--client-ca-file ${file}`, err), { cause: err });
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
