// A serving certificate as vgate reads it (--tls-cert-file, --tls-key-file in one folder), and the
// certificate a server actually presents, for tests that rotate the files and wait for the new one.

import { renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { connect } from "node:tls";
import type { CertAndKey } from "./kube/pki.js";

/**
 * Writes `tls` as `dir`/tls.crt and `dir`/tls.key, the key readable by its owner only. "overwrite"
 * rewrites each file in place; "rename" writes each beside its old one and renames it over, so a
 * reader never sees half a file.
 */
export function writeTlsFiles(
  dir: string,
  tls: CertAndKey,
  how: "overwrite" | "rename" = "overwrite",
): void {
  for (const [name, text] of [
    ["tls.crt", tls.cert],
    ["tls.key", tls.key],
  ] as const) {
    const path = join(dir, name);
    if (how === "overwrite") {
      writeFileSync(path, text, { mode: 0o600 });
    } else {
      writeFileSync(`${path}.new`, text, { mode: 0o600 });
      renameSync(`${path}.new`, path);
    }
  }
}

/** The SHA-256 fingerprint of the certificate served on 127.0.0.1:`port` (SNI localhost). */
export function servedFingerprint(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(
      { host: "127.0.0.1", port, rejectUnauthorized: false, servername: "localhost" },
      () => {
        resolve(socket.getPeerCertificate().fingerprint256);
        socket.destroy();
      },
    );
    socket.once("error", reject);
  });
}
