// The test rig's PKI, as envtest makes it: one CA that signs the API server's serving certificate,
// client certificates (CN is the user, each O a group, as kube-apiserver reads them) and vgate's
// serving certificate. EC P-256 keys keep start-up fast.

import { generateKeyPairSync } from "node:crypto";
import { generate } from "selfsigned";

export interface CertAndKey {
  cert: string;
  key: string;
}

export interface ClientCertOptions {
  /** Defaults: valid from a minute ago for a day. */
  notBefore?: Date;
  notAfter?: Date;
}

const DAY = 24 * 3600_000;

/** A fresh CA. */
export async function testCa(name = "vgate-test-ca"): Promise<CertAndKey> {
  const pems = await generate([{ name: "commonName", value: name }], {
    keyType: "ec",
    algorithm: "sha256",
    notBeforeDate: new Date(Date.now() - 60_000),
    notAfterDate: new Date(Date.now() + 30 * DAY),
    extensions: [
      { name: "basicConstraints", cA: true, critical: true },
      { name: "keyUsage", digitalSignature: true, keyCertSign: true, critical: true },
    ],
  });
  return { cert: pems.cert, key: pems.private };
}

/** A serving certificate for `dnsNames`, 127.0.0.1, ::1 and `ips`, signed by `ca`. */
export async function servingCert(
  ca: CertAndKey,
  dnsNames: readonly string[],
  ips: readonly string[] = [],
): Promise<CertAndKey> {
  const altNames = [
    ...dnsNames.map((value) => ({ type: 2 as const, value })),
    ...["127.0.0.1", "::1", ...ips].map((ip) => ({ type: 7 as const, ip })),
  ];
  const pems = await generate([{ name: "commonName", value: dnsNames[0] ?? "localhost" }], {
    keyType: "ec",
    algorithm: "sha256",
    notBeforeDate: new Date(Date.now() - 60_000),
    notAfterDate: new Date(Date.now() + 30 * DAY),
    ca,
    extensions: [
      { name: "basicConstraints", cA: false },
      { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
      { name: "extKeyUsage", serverAuth: true },
      { name: "subjectAltName", altNames },
    ],
  });
  return { cert: pems.cert, key: pems.private };
}

/** A client certificate for `user` in `groups`, signed by `ca`. */
export async function clientCert(
  ca: CertAndKey,
  user: string,
  groups: readonly string[] = [],
  opts: ClientCertOptions = {},
): Promise<CertAndKey> {
  const notBefore = opts.notBefore ?? new Date(Date.now() - 60_000);
  const notAfter = opts.notAfter ?? new Date(notBefore.getTime() + DAY);
  const attrs = [
    ...groups.map((g) => ({ name: "organizationName", value: escapeRdn(g) })),
    { name: "commonName", value: escapeRdn(user) },
  ];
  const pems = await generate(attrs, {
    keyType: "ec",
    algorithm: "sha256",
    notBeforeDate: notBefore,
    notAfterDate: notAfter,
    ca,
    extensions: [
      { name: "basicConstraints", cA: false },
      { name: "keyUsage", digitalSignature: true, critical: true },
      { name: "extKeyUsage", clientAuth: true },
    ],
  });
  return { cert: pems.cert, key: pems.private };
}

/** The service-account token signing key pair (kube-apiserver takes plain PEM keys). */
export function serviceAccountKeys(): { publicPem: string; privatePem: string } {
  const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  return {
    publicPem: publicKey.export({ type: "spki", format: "pem" }).toString(),
    privatePem: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
  };
}

/** RFC 4514 escaping for the distinguished-name string selfsigned builds. */
function escapeRdn(value: string): string {
  return value.replace(/[,+"\\<>;=]/g, (c) => `\\${c}`);
}
