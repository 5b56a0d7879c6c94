// Starts baseline-server.ts as its own process, so it never shares an event loop with the load
// generator, and resolves once it listens.

import { spawn, type ChildProcess } from "node:child_process";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import { repoRoot } from "../support/fixtures.js";

export interface Baseline {
  child: ChildProcess;
  url: string;
}

/** With `clientCaFile`, the baseline verifies client certificates as vgate's review routes do. */
export function startBaseline(
  certFile: string,
  keyFile: string,
  clientCaFile?: string,
): Promise<Baseline> {
  const child = spawn(
    process.execPath,
    [
      resolve(repoRoot, "dist/test/bench/baseline-server.js"),
      certFile,
      keyFile,
      ...(clientCaFile ? [clientCaFile] : []),
    ],
    { cwd: repoRoot, stdio: ["ignore", "pipe", "inherit"] },
  );
  return new Promise((resolvePromise, reject) => {
    const lines = createInterface({ input: child.stdout! });
    let ready = false;
    lines.on("line", (line) => {
      if (ready) return;
      try {
        const { port } = JSON.parse(line) as { port?: number };
        if (port === undefined) return;
        ready = true;
        resolvePromise({ child, url: `https://127.0.0.1:${port}` });
      } catch {
        // not the line we wait for
      }
    });
    child.once("exit", (code) => {
      if (!ready) reject(new Error(`baseline-server exited with ${code} before it listened`));
    });
  });
}
