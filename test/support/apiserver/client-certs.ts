// Test PKI for client-certificate authentication: a client CA, client certificates it signs (CN is
// the user, each O a group, as kube reads them), and kubeconfigs that carry them inline the way
// `kubectl config set-credentials --embed-certs` writes them.

import { generate } from "selfsigned";

export interface CertAndKey {
  cert: string;
  key: string;
}

export interface ClientCertOptions {
  /** Defaults: valid from a minute ago for a day. */
  notBefore?: Date;
  notAfter?: Date;
  /** Leave out the clientAuth extended key usage (serverAuth only), to be rejected. */
  serverAuthOnly?: boolean;
}

/** A fresh CA that signs client certificates. */
export async function clientCa(name = "vgate-test-client-ca"): Promise<CertAndKey> {
  const pems = await generate([{ name: "commonName", value: name }], {
    keyType: "ec",
    algorithm: "sha256",
    extensions: [
      { name: "basicConstraints", cA: true, critical: true },
      { name: "keyUsage", digitalSignature: true, keyCertSign: true, critical: true },
    ],
  });
  return { cert: pems.cert, key: pems.private };
}

/** A client certificate for `user` in `groups`, signed by `ca`. */
export async function clientCert(
  ca: CertAndKey,
  user: string,
  groups: string[] = [],
  opts: ClientCertOptions = {},
): Promise<CertAndKey> {
  const notBefore = opts.notBefore ?? new Date(Date.now() - 60_000);
  const notAfter = opts.notAfter ?? new Date(notBefore.getTime() + 24 * 3600_000);
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
      opts.serverAuthOnly
        ? { name: "extKeyUsage", serverAuth: true }
        : { name: "extKeyUsage", clientAuth: true },
    ],
  });
  return { cert: pems.cert, key: pems.private };
}

/** RFC 4514 escaping for the distinguished-name string selfsigned builds. */
function escapeRdn(value: string): string {
  return value.replace(/[,+"\\<>;=]/g, (c) => `\\${c}`);
}
