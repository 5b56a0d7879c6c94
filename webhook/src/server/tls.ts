// Serving certificates: from files (reloaded when they change, so cert rotation needs no restart)
// or, with --dev, a self-signed certificate for localhost made at start.

import { createPrivateKey, X509Certificate } from "node:crypto";
import { readFile } from "node:fs/promises";
import { cannotRead } from "../shared/file-error.js";
import { generate } from "selfsigned";
import { pollFiles } from "./poll-files.js";

export interface TlsMaterial {
  cert: string;
  key: string;
  /** Where the material came from, for logs. */
  source: string;
  /** CAs that client certificates are verified against (--client-ca-file); none when absent. */
  clientCa?: string;
}

export async function loadTlsFiles(certFile: string, keyFile: string): Promise<TlsMaterial> {
  const read = async (path: string, what: string): Promise<string> => {
    try {
      return await readFile(path, "utf8");
    } catch (err) {
      throw new Error(cannotRead(`${what} ${path}`, err), { cause: err });
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
  // Said by file, never by content: a certificate file may hold a private key by mistake.
  if (!cert.includes("BEGIN CERTIFICATE"))
    throw new Error(
      `--tls-cert-file ${certFile} holds no PEM certificate (no -----BEGIN CERTIFICATE----- line)`,
    );
  if (!/BEGIN (RSA |EC )?PRIVATE KEY/.test(key)) {
    throw new Error(
      `--tls-private-key-file ${keyFile} holds no PEM private key (no -----BEGIN PRIVATE KEY----- line)`,
    );
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

function codeOf(err: unknown): string {
  const code = (err as { code?: unknown }).code;
  return typeof code === "string" ? code : "unreadable";
}

/** The 1-based line of the first PEM block whose label matches, or undefined. */
function pemLine(text: string, label: RegExp): number | undefined {
  const lines = text.split("\n");
  const i = lines.findIndex((l) => {
    const m = /^-----BEGIN ([A-Z0-9 ]+)-----\s*$/.exec(l);
    return m !== null && label.test(m[1]!);
  });
  return i < 0 ? undefined : i + 1;
}

const atLine = (line: number | undefined) => (line === undefined ? "" : ` at line ${line}`);

/**
 * Throws unless the certificate and key are a pair. Without this check the TLS library says only
 * "key values mismatch". The messages name the files and the line of the PEM block at fault,
 * never their content (docs/decisions.md OAK-32).
 */
export function checkTlsPair(tls: TlsMaterial, certFile: string, keyFile: string): void {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(tls.cert);
  } catch (err) {
    const line = pemLine(tls.cert, /^CERTIFICATE$/);
    throw new Error(
      `--tls-cert-file ${certFile} holds no usable certificate: the PEM block${atLine(line)} cannot be read (${codeOf(err)})`,
      { cause: err },
    );
  }
  let key;
  try {
    key = createPrivateKey(tls.key);
  } catch (err) {
    const line = pemLine(tls.key, /PRIVATE KEY$/);
    throw new Error(
      `--tls-private-key-file ${keyFile} holds no usable private key: the PEM block${atLine(line)} cannot be read (${codeOf(err)})`,
      { cause: err },
    );
  }
  if (!cert.checkPrivateKey(key)) {
    throw new Error(
      `--tls-cert-file ${certFile} and --tls-private-key-file ${keyFile} do not match: ` +
        "the key is not the private key of the certificate",
    );
  }
}

/**
 * Polls the files and calls `onChange` with new material once both have changed into a matching
 * pair. The files are written one after the other (a plain overwrite, or a Secret volume's
 * symlink swap seen between the two reads), so a certificate may be read with the old key, or a
 * half-written file: such material is never served (poll-files.ts).
 */
export function watchTlsFiles(
  certFile: string,
  keyFile: string,
  onChange: (tls: TlsMaterial) => void,
  onError: (err: Error) => void,
  intervalMs = 10_000,
): () => void {
  const read = async (): Promise<TlsMaterial> => {
    const tls = await loadTlsFiles(certFile, keyFile);
    checkTlsPair(tls, certFile, keyFile);
    return tls;
  };
  return pollFiles([certFile, keyFile], read, onChange, onError, intervalMs);
}
