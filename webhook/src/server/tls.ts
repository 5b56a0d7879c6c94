// Serving certificates: from files (reloaded when they change, so cert rotation needs no restart)
// or, with --dev, a self-signed certificate for localhost made at start.

import { readFile, stat } from "node:fs/promises";
import { generate } from "selfsigned";

export interface TlsMaterial {
  cert: string;
  key: string;
  /** Where the material came from, for logs. */
  source: string;
}

export async function loadTlsFiles(certFile: string, keyFile: string): Promise<TlsMaterial> {
  const read = async (path: string, what: string): Promise<string> => {
    try {
      return await readFile(path, "utf8");
    } catch (err) {
      throw new Error(`cannot read ${what} ${path}: ${(err as Error).message}`, { cause: err });
    }
  };
  // Both are read at once, but the error names them in a fixed order (certificate first), and
  // names both when both are missing.
  const [certRead, keyRead] = await Promise.allSettled([
    read(certFile, "--tls-cert-file"),
    read(keyFile, "--tls-private-key-file"),
  ]);
  const failures = [certRead, keyRead].flatMap((r) =>
    r.status === "rejected" ? [(r.reason as Error).message] : [],
  );
  if (failures.length) throw new Error(failures.join("; "));
  const cert = (certRead as PromiseFulfilledResult<string>).value;
  const key = (keyRead as PromiseFulfilledResult<string>).value;
  if (!cert.includes("BEGIN CERTIFICATE"))
    throw new Error(`--tls-cert-file ${certFile} holds no PEM certificate`);
  if (!/BEGIN (RSA |EC )?PRIVATE KEY/.test(key)) {
    throw new Error(`--tls-private-key-file ${keyFile} holds no PEM private key`);
  }
  return { cert, key, source: certFile };
}

export async function selfSignedTls(
  hosts: readonly string[] = ["localhost"],
): Promise<TlsMaterial> {
  const altNames = [
    ...hosts.map((value) => ({ type: 2 as const, value })),
    { type: 7 as const, ip: "127.0.0.1" },
    { type: 7 as const, ip: "::1" },
  ];
  const pems = await generate([{ name: "commonName", value: hosts[0] ?? "localhost" }], {
    keyType: "ec",
    curve: "P-256",
    notAfterDate: new Date(Date.now() + 30 * 24 * 3600 * 1000),
    algorithm: "sha256",
    extensions: [
      { name: "basicConstraints", cA: false },
      { name: "keyUsage", digitalSignature: true },
      { name: "extKeyUsage", serverAuth: true },
      { name: "subjectAltName", altNames },
    ],
  });
  return { cert: pems.cert, key: pems.private, source: "self-signed (--dev)" };
}

/** Polls the files and calls `onChange` with new material when either one changes. */
export function watchTlsFiles(
  certFile: string,
  keyFile: string,
  onChange: (tls: TlsMaterial) => void,
  onError: (err: Error) => void,
  intervalMs = 10_000,
): () => void {
  let last = "";
  const fingerprint = async (): Promise<string> => {
    const [c, k] = await Promise.all([stat(certFile), stat(keyFile)]);
    return `${c.mtimeMs}:${c.size}:${k.mtimeMs}:${k.size}`;
  };
  void fingerprint().then(
    (f) => (last = f),
    () => undefined,
  );
  const timer = setInterval(() => {
    fingerprint()
      .then(async (f) => {
        if (f === last) return;
        last = f;
        onChange(await loadTlsFiles(certFile, keyFile));
      })
      .catch((err: Error) => onError(err));
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
