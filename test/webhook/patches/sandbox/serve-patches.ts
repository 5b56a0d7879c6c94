// What the sandbox tests that run a real `vgate serve` share: starting it on a patch config (the
// virtual side, so an UPDATE's change set is patched and no bookkeeping is needed), the
// AdmissionReview of such an update, and reading processes from /proc (Linux).
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { repoRoot } from "../../../support/fixtures.js";
import { httpsRequest } from "../../../support/https-client.js";
import { freePort } from "../../../support/kube/processes.js";

export const VGATE = resolve(repoRoot, "webhook/bin/vgate");

export interface PatchServe {
  serve: ChildProcess;
  /** https://127.0.0.1:PORT */
  base: string;
  /** The last 2000 characters of stderr. */
  stderr(): string;
}

/** `vgate serve --dev` on `config`, healthy; `patchTimeout` as `--patch-timeout` takes it. */
export async function startPatchServe(
  config: string,
  opts: { patchTimeout: string; workers: number; more?: readonly string[] },
): Promise<PatchServe> {
  const port = await freePort();
  const serve = spawn(
    process.execPath,
    [
      VGATE,
      "serve",
      "--dev",
      "--port",
      String(port),
      "--bind-address",
      "127.0.0.1",
      "--log-level",
      "silent",
      "--config",
      config,
      "--vcluster-name",
      "vc",
      "--vcluster-namespace",
      "vc-ns",
      "--side",
      "virtual",
      "--patch-timeout",
      opts.patchTimeout,
      "--patch-workers",
      String(opts.workers),
      ...(opts.more ?? []),
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let stderr = "";
  serve.stderr!.on("data", (c: Buffer) => (stderr = (stderr + c.toString()).slice(-2000)));
  const base = `https://127.0.0.1:${port}`;
  const end = performance.now() + 30_000;
  for (;;) {
    if (serve.exitCode !== null) assert.fail(`vgate serve exited (${serve.exitCode}): ${stderr}`);
    try {
      if ((await httpsRequest(`${base}/healthz`, { timeoutMs: 2000 })).status === 200) break;
    } catch {
      // Not listening yet.
    }
    if (performance.now() > end) {
      serve.kill("SIGKILL");
      assert.fail("vgate serve did not become healthy");
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { serve, base, stderr: () => stderr };
}

/** An AdmissionReview of an UPDATE of Endpoints default/db whose `annotation` goes from `before` to `after`. */
export function endpointsUpdate(
  annotation: string,
  after: string,
  before: string,
): Record<string, unknown> {
  const object = (value: string) => ({
    apiVersion: "v1",
    kind: "Endpoints",
    metadata: { name: "db", namespace: "default", annotations: { [annotation]: value } },
  });
  return {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: randomUUID(),
      kind: { group: "", version: "v1", kind: "Endpoints" },
      resource: { group: "", version: "v1", resource: "endpoints" },
      name: "db",
      namespace: "default",
      operation: "UPDATE",
      userInfo: { username: "system:serviceaccount:vc-ns:vc", groups: [] },
      object: object(after),
      oldObject: object(before),
      dryRun: false,
    },
  };
}

/** A child's resident limit (limits.ts) plus what it can add between two of the pool's 5 ms polls. */
export const CHILD_RSS_BOUND = (256 + 64) * 1024 * 1024;

/** A line of /proc/PID/status in bytes: VmRSS (resident now) or VmHWM (the most it has been). */
export function residentBytes(pid: number, field: "VmRSS" | "VmHWM" = "VmRSS"): number {
  const status = readFileSync(`/proc/${pid}/status`, "latin1");
  const kb = new RegExp(`^${field}:\\s+(\\d+) kB$`, "m").exec(status)?.[1];
  return Number(kb ?? 0) * 1024;
}

/** The fields of /proc/PID/stat after the command name: [state, ppid, …]. */
export function statFields(pid: number): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

/** Processes whose parent is `pid`. */
export function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (Number(statFields(Number(entry))[1]) === pid) out.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return out;
}
