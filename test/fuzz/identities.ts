// Who the fuzzer says it is: the TLS client certificate a request goes out with. kube-apiserver's
// (signed by vgate's --client-ca-file, CN kube-apiserver) is the only one /authenticate and
// /authorize may answer; the others are what an attacker who reaches vgate could present: none, one
// with the right name from a look-alike CA (another key under the client CA's own name), one of the
// right CA with another name, an expired one of the right CA and name, and a serving certificate
// (server auth only) of the right CA and name. Admission routes answer all of them (the rig does
// not set --require-admission-client-cert).

import { X509Certificate } from "node:crypto";
import type { VgateCluster } from "../support/cluster.js";
import { clientCert, servingCert, testCa, type CertAndKey } from "../support/kube/pki.js";

export const IDENTITIES = [
  "kube-apiserver",
  "no certificate",
  "look-alike CA",
  "another name",
  "expired",
  "serving certificate",
] as const;
export type Identity = (typeof IDENTITIES)[number];

/** The identity the review routes answer. */
export const TRUSTED: Identity = "kube-apiserver";

/** The certificate of each identity; undefined for none. */
export type IdentityCerts = Record<Identity, CertAndKey | undefined>;

const DAY = 24 * 3600_000;

export async function identityCerts(cluster: VgateCluster): Promise<IdentityCerts> {
  const ca = cluster.apiserverClientCa;
  const caName = /CN=([^\n]+)/.exec(new X509Certificate(ca.cert).subject)?.[1] ?? "";
  const [lookAlike, anotherName, expired, serving] = await Promise.all([
    testCa(caName).then((other) => clientCert(other, "kube-apiserver")),
    clientCert(ca, "system:node:fuzz"),
    clientCert(ca, "kube-apiserver", [], {
      notBefore: new Date(Date.now() - 2 * DAY),
      notAfter: new Date(Date.now() - DAY),
    }),
    servingCert(ca, ["kube-apiserver"]),
  ]);
  return {
    "kube-apiserver": cluster.apiserverClient,
    "no certificate": undefined,
    "look-alike CA": lookAlike,
    "another name": anotherName,
    expired,
    "serving certificate": serving,
  };
}
