// `make bench`: loads vgate's HTTPS admission routes with autocannon at 1, 16 and 64 connections,
// and in the same run a baseline express HTTPS route that only echoes an allowed AdmissionReview.
// Prints throughput and p50/p99 for both, their ratio, and vgate's peak RSS. vgate talks to a real
// kube-apiserver (test/support/kube/) with the OwnedAccessKey CRD of manifests/ and vgate's own RBAC,
// as an install gives it; its webhooks are not registered there, since autocannon calls vgate
// directly. Skipped (exit 0) without the test rig's kube binaries (`make kube`).

import autocannon from "autocannon";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createNetServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { DEFAULT_GROUP_DOMAIN } from "../../webhook/src/shared/ownedaccesskey.js";
import { selfSignedTls } from "../../webhook/src/server/tls.js";
import { installAccessKeyCrd } from "../support/cluster.js";
import { repoRoot } from "../support/fixtures.js";
import { httpsRequest } from "../support/https-client.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../support/kube/binaries.js";
import { startControlPlane, type ControlPlane } from "../support/kube/control-plane.js";
import { vgateRules } from "../support/kube/rbac.js";
import { serviceAccountWith } from "../support/kube/service-account.js";
import { accessKey, review } from "../support/reviews.js";
import { startBaseline } from "./start-baseline.js";
import { atLeast, recordSkipped, recordTarget } from "./targets.js";

const CONNECTIONS = [1, 16, 64];
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const WARMUP_SECONDS = 3;
/** Issue 26: vgate's admission routes at >= 0.9 of the express echo's throughput, at each load. */
const TARGET_RATIO = 0.9;
const TARGET_RSS_MB = 150;

const children: ChildProcess[] = [];
let plane: ControlPlane | undefined;
let workDir: string | undefined;

/** Stops what this run started: vgate, the baseline and the control plane. */
async function cleanUp(): Promise<void> {
  for (const c of children) c.kill("SIGTERM");
  const stopping = plane;
  plane = undefined;
  await stopping?.stop();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
}

/**
 * The RBAC an install gives vgate (as test/support/cluster.ts does for the test cluster), and a
 * kubeconfig with a bound token of its service account from the TokenRequest API.
 */
async function vgateKubeconfig(cp: ControlPlane): Promise<string> {
  const account = await serviceAccountWith(
    cp,
    "vgate",
    vgateRules(`management.${DEFAULT_GROUP_DOMAIN}`),
    "vgate-system",
  );
  return account.kubeconfig();
}

/**
 * The request mix: validate CREATE and UPDATE, mutate CREATE (a name lookup, answered from vgate's
 * watch cache of the API server's keys) and UPDATE.
 */
function requests(): autocannon.Request[] {
  const key = accessKey("bench-key", {
    displayName: "bench",
    ttl: 3600,
    scope: { projects: [{ project: "default" }] },
  });
  const old = {
    ...key,
    metadata: {
      name: "bench-key",
      uid: "u-1",
      resourceVersion: "7",
      creationTimestamp: "2026-01-01T00:00:00Z",
    },
  };
  const updated = { ...old, spec: { ...(key.spec as object), description: "rotated" } };
  const mk = (path: string, body: unknown): autocannon.Request => ({
    method: "POST",
    path,
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const admin = { groups: ["system:masters"] };
  return [
    mk("/validate/ownedaccesskeys", review({ object: key, ...admin })),
    mk(
      "/mutate/ownedaccesskeys",
      review({ object: { ...key, metadata: { name: "bench-new" } }, ...admin }),
    ),
    mk(
      "/validate/ownedaccesskeys",
      review({ operation: "UPDATE", object: updated, oldObject: old, ...admin }),
    ),
    mk(
      "/mutate/ownedaccesskeys",
      review({ operation: "UPDATE", object: updated, oldObject: old, ...admin }),
    ),
  ];
}

interface Row {
  target: string;
  connections: number;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

async function load(
  target: string,
  url: string,
  connections: number,
  seconds: number,
): Promise<Row> {
  const result = await autocannon({
    url,
    connections,
    duration: seconds,
    requests: requests(),
    tlsOptions: { rejectUnauthorized: false },
  } as autocannon.Options);
  return {
    target,
    connections,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

/** The round with the median throughput (its latencies come with it); errors add up. */
function median(rows: Row[]): Row {
  const sorted = [...rows].sort((a, b) => a.rps - b.rps);
  const mid = sorted[Math.floor(sorted.length / 2)]!;
  return {
    ...mid,
    non2xx: rows.reduce((n, r) => n + r.non2xx, 0),
    errors: rows.reduce((n, r) => n + r.errors, 0),
  };
}

function medianOf(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function figureAt(connections: number): string {
  return `Admission vs express echo, ${connections} connection${connections === 1 ? "" : "s"}`;
}

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createNetServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as AddressInfo;
      srv.close(() => resolvePort(port));
    });
  });
}

/** Polls `url` until it answers 200 (vgate is ready once TLS is loaded and discovery answered). */
async function waitReady(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const ok = await httpsRequest(url).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not become ready within ${timeoutMs} ms`);
}

function peakRssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kb / 1024;
}

async function main(): Promise<void> {
  if (!HAVE_KUBE) {
    console.log(`admission bench skipped: it needs a real kube-apiserver${KUBE_SKIP_REASON}`);
    for (const c of CONNECTIONS) {
      recordSkipped(figureAt(c), `>= ${TARGET_RATIO}`, `no kube binaries${KUBE_SKIP_REASON}`);
    }
    return;
  }
  const dir = (workDir = mkdtempSync(join(tmpdir(), "vgate-bench-")));
  const tls = await selfSignedTls();
  writeFileSync(join(dir, "tls.crt"), tls.cert);
  writeFileSync(join(dir, "tls.key"), tls.key);
  plane = await startControlPlane();
  // The CRD exactly as manifests/ has it (its own group domain), so discovery and the access-key
  // watch find it.
  await installAccessKeyCrd(plane.admin, DEFAULT_GROUP_DOMAIN);
  const kubeconfig = await vgateKubeconfig(plane);
  // vgate logs one line per request; they go to a file, as a container runtime would take them,
  // so the load generator's own event loop never throttles the server through a full pipe.
  const vgatePort = await freePort();
  const logFile = join(dir, "vgate.log");
  const vgateChild = spawn(
    // Run the executable itself, so the benchmark measures the flags users get.
    resolve(repoRoot, "webhook/bin/vgate"),
    [
      "serve",
      `--port=${vgatePort}`,
      "--bind-address=127.0.0.1",
      `--tls-cert-file=${join(dir, "tls.crt")}`,
      `--tls-private-key-file=${join(dir, "tls.key")}`,
      `--kubeconfig=${kubeconfig}`,
      ...(process.env.VGATE_ARGS ?? "").split(" ").filter(Boolean),
    ],
    {
      cwd: repoRoot,
      stdio: ["ignore", openSync(logFile, "w"), "inherit"],
      env: { ...process.env, KUBECONFIG: "" },
    },
  );
  children.push(vgateChild);
  const vgate = { child: vgateChild, value: `https://127.0.0.1:${vgatePort}` };
  await waitReady(`${vgate.value}/readyz`, 20_000);
  const baseline = await startBaseline(join(dir, "tls.crt"), join(dir, "tls.key"));
  children.push(baseline.child);
  const vgateUrl = vgate.value;
  const baseUrl = baseline.url;
  console.log(
    `vgate ${vgateUrl}, baseline ${baseUrl}; ${SECONDS}s per run, ${ROUNDS} interleaved rounds (median shown; ratio = median of the paired rounds' ratios) after ${WARMUP_SECONDS}s warm-up; request mix: validate CREATE, mutate CREATE (name lookup), validate UPDATE, mutate UPDATE`,
  );
  // Warm both servers up (JIT, TLS session state, the access-key cache), then measure each
  // concurrency in interleaved rounds and keep the median, because the machine is shared and noisy.
  await load("warmup", baseUrl, 16, WARMUP_SECONDS);
  await load("warmup", vgateUrl, 16, WARMUP_SECONDS);
  // The machine's speed drifts over seconds, so each vgate round is compared with the baseline
  // round just before it, and the ratio reported is the median of those paired ratios.
  const rows: { base: Row; ours: Row; ratios: number[] }[] = [];
  for (const c of CONNECTIONS) {
    const base: Row[] = [];
    const ours: Row[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      base.push(await load("baseline", baseUrl, c, SECONDS));
      ours.push(await load("vgate", vgateUrl, c, SECONDS));
    }
    rows.push({
      base: median(base),
      ours: median(ours),
      ratios: base.map((b, i) => ours[i]!.rps / b.rps),
    });
  }
  const rss = peakRssMb(vgate.child.pid!);
  console.log("");
  console.log(
    "conns  baseline req/s  p50 ms  p99 ms   vgate req/s  p50 ms  p99 ms   ratio  (range)     target",
  );
  let ok = rss <= TARGET_RSS_MB;
  for (const { base: b, ours: v, ratios } of rows) {
    const ratio = medianOf(ratios);
    const range = `${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)}`;
    ok &&= ratio >= TARGET_RATIO && v.non2xx === 0 && v.errors === 0;
    recordTarget(
      atLeast(
        figureAt(b.connections),
        ratio,
        TARGET_RATIO,
        `vgate ${v.rps.toFixed(0)} req/s / echo ${b.rps.toFixed(0)} req/s (range ${range})${v.non2xx || v.errors ? `; ${v.non2xx} non-2xx, ${v.errors} errors` : ""}`,
      ),
    );
    console.log(
      `${String(b.connections).padStart(5)}  ${b.rps.toFixed(0).padStart(14)}  ${b.p50.toFixed(1).padStart(6)}  ${b.p99.toFixed(1).padStart(6)}   ${v.rps.toFixed(0).padStart(11)}  ${v.p50.toFixed(1).padStart(6)}  ${v.p99.toFixed(1).padStart(6)}   ${ratio.toFixed(2).padStart(5)}  (${range})  ${ratio >= TARGET_RATIO ? "ok" : `< ${TARGET_RATIO}`}${v.non2xx || v.errors ? ` (${v.non2xx} non-2xx, ${v.errors} errors)` : ""}`,
    );
  }
  console.log(`vgate peak RSS: ${rss.toFixed(1)} MB (target <= ${TARGET_RSS_MB} MB)`);
  console.log(ok ? "targets met" : "targets NOT met");
}

// Ctrl-C (or a kill) still stops vgate, the baseline and the control plane.
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    void cleanUp().finally(() => process.exit(130));
  });
}
try {
  await main();
} finally {
  await cleanUp();
}
