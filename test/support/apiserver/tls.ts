// A fresh self-signed serving certificate for 127.0.0.1 and localhost. EC keys keep start-up fast.

import { generate } from "selfsigned";

export interface ServingCert {
  cert: string;
  key: string;
}

export async function servingCert(): Promise<ServingCert> {
  const pems = await generate([{ name: "commonName", value: "vgate-test-apiserver" }], {
    keyType: "ec",
    algorithm: "sha256",
    extensions: [
      { name: "basicConstraints", cA: true },
      { name: "keyUsage", digitalSignature: true, keyCertSign: true },
      { name: "extKeyUsage", serverAuth: true },
      {
        name: "subjectAltName",
        altNames: [
          { type: 2, value: "localhost" },
          { type: 7, ip: "127.0.0.1" },
        ],
      },
    ],
  });
  return { cert: pems.cert, key: pems.private };
}
