// The certificates of a self-managed install: a CA of vgate's own and a serving certificate it
// signs for the Service's DNS names, and the check that decides whether ones already stored can
// stay. kube-apiserver calls a webhook Service at <service>.<namespace>.svc and verifies that name
// against the certificate's SANs (never the common name) with the webhook's caBundle as its roots.

import { X509Certificate, createPrivateKey } from "node:crypto";
import { generate } from "selfsigned";

const DAY_MS = 24 * 3600 * 1000;
/** A certificate that expires within this is renewed, so a run in time never leaves an expired one. */
export const RENEW_BEFORE_MS = 30 * DAY_MS;
/** notBefore is set this far back, for API servers whose clock runs behind ours. */
const BACKDATE_MS = 5 * 60 * 1000;

export interface WebhookCertificates {
  /** PEM of the CA certificate (the caBundle). */
  caCert: string;
  /** PEM of the serving certificate, signed by the CA. */
  cert: string;
  /** PEM (PKCS#8) of the serving certificate's private key. Never logged. */
  key: string;
}

export interface IssueOptions {
  /** DNS names the serving certificate must cover; the first is also its common name. */
  dnsNames: readonly string[];
  validityMs: number;
  caValidityMs: number;
  now?: Date;
}

/** The names kube-apiserver (and in-cluster clients) may use for the Service. */
export function serviceDnsNames(service: string, namespace: string): string[] {
  return [
    `${service}.${namespace}.svc`,
    `${service}.${namespace}.svc.cluster.local`,
    `${service}.${namespace}`,
    service,
  ];
}

type Extension = NonNullable<Parameters<typeof generate>[1]>["extensions"];

/**
 * A new CA named `caName@<seconds>` (its key is dropped once it has signed) and one leaf it signs
 * for `commonName` with `leafExtensions`, valid `validityMs` but never past the CA.
 */
async function issuePair(opts: {
  caName: string;
  commonName: string;
  leafExtensions: Extension;
  validityMs: number;
  caValidityMs: number;
  now?: Date;
}): Promise<WebhookCertificates> {
  const now = opts.now?.getTime() ?? Date.now();
  const notBeforeDate = new Date(now - BACKDATE_MS);
  const common = { keyType: "ec", curve: "P-256", algorithm: "sha256", notBeforeDate } as const;
  const caName = `${opts.caName}@${Math.floor(now / 1000)}`;
  const ca = await generate([{ name: "commonName", value: caName }], {
    ...common,
    notAfterDate: new Date(now + opts.caValidityMs),
    extensions: [
      { name: "basicConstraints", cA: true, pathLenConstraint: 0, critical: true },
      {
        name: "keyUsage",
        keyCertSign: true,
        cRLSign: true,
        digitalSignature: true,
        critical: true,
      },
    ],
  });
  const leaf = await generate([{ name: "commonName", value: opts.commonName }], {
    ...common,
    // Never past the CA: a certificate outliving its issuer fails verification anyway.
    notAfterDate: new Date(now + Math.min(opts.validityMs, opts.caValidityMs)),
    ca: { key: ca.private, cert: ca.cert },
    extensions: opts.leafExtensions,
  });
  return { caCert: ca.cert, cert: leaf.cert, key: leaf.private };
}

/** A new CA and a serving certificate for `dnsNames`. */
export function issueCertificates(opts: IssueOptions): Promise<WebhookCertificates> {
  return issuePair({
    ...opts,
    caName: "vgate-ca",
    commonName: opts.dnsNames[0] ?? "vgate",
    leafExtensions: [
      { name: "basicConstraints", cA: false },
      { name: "keyUsage", digitalSignature: true, critical: true },
      { name: "extKeyUsage", serverAuth: true },
      {
        name: "subjectAltName",
        altNames: opts.dnsNames.map((value) => ({ type: 2 as const, value })),
      },
    ],
  });
}

export interface ClientIssueOptions {
  /** The client certificate's common name (what --client-allowed-names lists). */
  commonName: string;
  validityMs: number;
  caValidityMs: number;
  now?: Date;
}

/**
 * A new client CA and a client certificate it signs: what kube-apiserver presents to vgate's
 * review routes, and what vgate's --client-ca-file trusts. A CA of its own, apart from the serving
 * CA and the cluster's: nothing else it signs reaches vgate.
 */
export function issueClientCertificate(opts: ClientIssueOptions): Promise<WebhookCertificates> {
  return issuePair({
    ...opts,
    caName: "vgate-client-ca",
    leafExtensions: [
      { name: "basicConstraints", cA: false },
      { name: "keyUsage", digitalSignature: true, critical: true },
      { name: "extKeyUsage", clientAuth: true },
    ],
  });
}

/**
 * Why a stored client certificate cannot stay (null when it can): as renewalReason, with its
 * common name instead of DNS names; ca.crt may hold the previous CA after the first.
 */
export function clientRenewalReason(
  stored: Partial<WebhookCertificates>,
  commonName: string,
  now: Date = new Date(),
): string | null {
  return storedPairReason(stored, now, (cert) => {
    const cn = /(?:^|\n)CN=([^\n]*)/.exec(cert.subject)?.[1];
    return cn === commonName
      ? null
      : `the certificate is for ${JSON.stringify(cn ?? "")}, not ${JSON.stringify(commonName)}`;
  });
}

/** The DNS names in a certificate's subjectAltName. */
export function dnsNamesOf(cert: X509Certificate): string[] {
  return (cert.subjectAltName ?? "")
    .split(", ")
    .filter((entry) => entry.startsWith("DNS:"))
    .map((entry) => entry.slice("DNS:".length));
}

/**
 * Why stored certificates cannot stay (null when they can): they must parse, the key must match
 * the certificate, the CA must have signed it, it must cover every name, and both must be valid now
 * and for more than RENEW_BEFORE_MS.
 */
export function renewalReason(
  stored: Partial<WebhookCertificates>,
  dnsNames: readonly string[],
  now: Date = new Date(),
): string | null {
  return storedPairReason(stored, now, (cert) => {
    const missing = dnsNames.filter((name) => !dnsNamesOf(cert).includes(name));
    return missing.length > 0 ? `the certificate does not cover ${missing.join(", ")}` : null;
  });
}

/**
 * The checks every stored pair passes: it parses, the key matches the certificate, the (first) CA
 * signed it, `names` has nothing against it, and both are valid now and for more than
 * RENEW_BEFORE_MS.
 */
function storedPairReason(
  stored: Partial<WebhookCertificates>,
  now: Date,
  names: (cert: X509Certificate) => string | null,
): string | null {
  if (!stored.cert || !stored.key || !stored.caCert) return "it lacks tls.crt, tls.key or ca.crt";
  let cert: X509Certificate;
  let ca: X509Certificate;
  try {
    cert = new X509Certificate(stored.cert);
    ca = new X509Certificate(stored.caCert);
    if (!cert.checkPrivateKey(createPrivateKey(stored.key)))
      return "tls.key does not match tls.crt";
  } catch {
    return "it holds no valid PEM certificate and key";
  }
  if (!cert.checkIssued(ca) || !cert.verify(ca.publicKey)) return "ca.crt did not sign tls.crt";
  return (
    names(cert) ?? expiryReason(cert, "the certificate", now) ?? expiryReason(ca, "the CA", now)
  );
}

function expiryReason(cert: X509Certificate, what: string, now: Date): string | null {
  if (new Date(cert.validFrom) > now) return `${what} is not valid before ${cert.validFrom}`;
  const left = new Date(cert.validTo).getTime() - now.getTime();
  if (left <= 0) return `${what} expired on ${cert.validTo}`;
  if (left <= RENEW_BEFORE_MS) return `${what} expires within 30 days (${cert.validTo})`;
  return null;
}

/**
 * The caBundle to publish after a renewal: the new CA first, then the previous one while it is
 * still valid, so kube-apiserver trusts the serving certificate pods still present until they
 * pick up the new Secret. The next run publishes ca.crt alone.
 */
export function bundleWithPrevious(
  newCa: string,
  previousCa: string | undefined,
  now = new Date(),
): string {
  if (!previousCa || previousCa.trim() === newCa.trim()) return newCa;
  try {
    const old = new X509Certificate(previousCa);
    if (!old.ca || new Date(old.validTo) <= now) return newCa;
    return `${newCa.trimEnd()}\n${old.toString().trimEnd()}\n`;
  } catch {
    return newCa;
  }
}
