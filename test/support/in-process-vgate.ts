// A `vgate serve` started in this process, as the rigs that need vgate's internals or its log start
// it: a fresh self-signed serving certificate in files of its own, its log kept line by line, and
// whatever kubeconfig the rig gives it (straight to an API server, or through a fault proxy).

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import type { ServeOptions } from "../../webhook/src/cli/serve-options.js";
import { startServe, type StartedServe } from "../../webhook/src/cli/serve-runtime.js";
import { createLogger } from "../../webhook/src/server/logger.js";
import { selfSignedTls } from "../../webhook/src/server/tls.js";
import { writeTlsFiles } from "./tls-files.js";
import { clientCert, testCa, type CertAndKey } from "./kube/pki.js";
import { writeFileSync } from "node:fs";

export interface InProcessVgateOptions {
  /** A kubeconfig file for vgate's identity. */
  kubeconfig: string;
  /** --group-domain. */
  domain: string;
  logLevel: ServeOptions["logLevel"];
  /** Options over the defaults. */
  more?: Partial<ServeOptions>;
}

export interface InProcessVgate {
  vgate: StartedServe;
  /** https://localhost:PORT of vgate. */
  url: string;
  /** The CA of vgate's (self-signed) serving certificate. */
  ca: string;
  /**
   * The client certificate vgate's review routes accept (CN kube-apiserver, signed by its
   * --client-ca-file), as kube-apiserver presents it.
   */
  client: CertAndKey;
  /** vgate's log, one JSON record a line. */
  logLines: string[];
  /** Stops vgate and removes its certificate files. */
  stop(): Promise<void>;
}

export async function startInProcessVgate(o: InProcessVgateOptions): Promise<InProcessVgate> {
  const tls = await selfSignedTls();
  const dir = mkdtempSync(join(tmpdir(), "vgate-in-process-"));
  const logLines: string[] = [];
  try {
    writeTlsFiles(dir, tls);
    const clientCa = await testCa("vgate-in-process-client-ca");
    const client = await clientCert(clientCa, "kube-apiserver");
    writeFileSync(join(dir, "client-ca.crt"), clientCa.cert);
    const vgate = await startServe(
      {
        port: 0,
        bindAddress: "127.0.0.1",
        tlsCertFile: join(dir, "tls.crt"),
        tlsKeyFile: join(dir, "tls.key"),
        kubeconfig: o.kubeconfig,
        groupDomain: o.domain,
        adminGroups: ["system:masters"],
        logLevel: o.logLevel,
        dev: false,
        clientCerts: {
          caFile: join(dir, "client-ca.crt"),
          allowedNames: ["kube-apiserver"],
          admission: false,
        },
        ...o.more,
      },
      createLogger(o.logLevel, lineSink(logLines)),
    );
    return {
      vgate,
      url: `https://localhost:${vgate.server.port}`,
      ca: tls.cert,
      client,
      logLines,
      stop: async () => {
        await vgate.stop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

/** A stream that appends each non-empty line written to it to `lines`. */
function lineSink(lines: string[]): Writable {
  return new Writable({
    write(chunk, _enc, cb) {
      lines.push(...String(chunk).split("\n").filter(Boolean));
      cb();
    },
  });
}
