// `make bench`: loads vgate's HTTPS admission routes with autocannon at 1, 16 and 64 connections,
// and in the same run a baseline express HTTPS route that only echoes an allowed AdmissionReview.
// Prints throughput and p50/p99 for both, their ratio, and vgate's peak RSS.

import autocannon from "autocannon";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { createServer as createNetServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { selfSignedTls } from "../../webhook/src/server/tls.js";
import { repoRoot } from "../support/fixtures.js";
import { httpsRequest } from "../support/https-client.js";
import { accessKey, review } from "../support/reviews.js";

const CONNECTIONS = [1, 16, 64];
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const WARMUP_SECONDS = 3;
const TARGET_RATIO = 0.8;
const TARGET_RSS_MB = 150;

const children: ChildProcess[] = [];

/** Starts a node process and resolves with the first stdout line that `match` accepts. */
function start(
  args: string[],
  match: (line: string) => string | null,
  command = process.execPath,
): Promise<{ child: ChildProcess; value: string }> {
  const child = spawn(command, args, {
    cwd: repoRoot,
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(child);
  return new Promise((resolvePromise, reject) => {
    const lines = createInterface({ input: child.stdout! });
    let done = false;
    lines.on("line", (line) => {
      const value = done ? null : match(line);
      if (value !== null) {
        done = true;
        resolvePromise({ child, value });
      }
    });
    child.once("exit", (code) => {
      if (!done) reject(new Error(`${args.join(" ")} exited with ${code} before it was ready`));
    });
  });
}

function field(name: string): (line: string) => string | null {
  return (line) => {
    try {
      const v = (JSON.parse(line) as Record<string, unknown>)[name];
      return v === undefined ? null : String(v);
    } catch {
      return null;
    }
  };
}

/** The request mix: validate CREATE and UPDATE, mutate CREATE (asks the API server) and UPDATE. */
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
  const dir = mkdtempSync(join(tmpdir(), "vgate-bench-"));
  const tls = await selfSignedTls();
  writeFileSync(join(dir, "tls.crt"), tls.cert);
  writeFileSync(join(dir, "tls.key"), tls.key);
  const api = await start(
    [resolve(repoRoot, "dist/test/bench/apiserver-process.js")],
    field("kubeconfig"),
  );
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
      `--kubeconfig=${api.value}`,
      ...(process.env.VGATE_ARGS ?? "").split(" ").filter(Boolean),
    ],
    { cwd: repoRoot, stdio: ["ignore", openSync(logFile, "w"), "inherit"] },
  );
  children.push(vgateChild);
  const vgate = { child: vgateChild, value: `https://127.0.0.1:${vgatePort}` };
  await waitReady(`${vgate.value}/readyz`, 20_000);
  const baseline = await start(
    [
      resolve(repoRoot, "dist/test/bench/baseline-server.js"),
      join(dir, "tls.crt"),
      join(dir, "tls.key"),
    ],
    field("port"),
  );
  const vgateUrl = vgate.value;
  const baseUrl = `https://127.0.0.1:${baseline.value}`;
  console.log(
    `vgate ${vgateUrl}, baseline ${baseUrl}; ${SECONDS}s per run, ${ROUNDS} interleaved rounds (median shown; ratio = median of the paired rounds' ratios) after ${WARMUP_SECONDS}s warm-up; request mix: validate CREATE, mutate CREATE (API lookup), validate UPDATE, mutate UPDATE`,
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
    console.log(
      `${String(b.connections).padStart(5)}  ${b.rps.toFixed(0).padStart(14)}  ${b.p50.toFixed(1).padStart(6)}  ${b.p99.toFixed(1).padStart(6)}   ${v.rps.toFixed(0).padStart(11)}  ${v.p50.toFixed(1).padStart(6)}  ${v.p99.toFixed(1).padStart(6)}   ${ratio.toFixed(2).padStart(5)}  (${range})  ${ratio >= TARGET_RATIO ? "ok" : `< ${TARGET_RATIO}`}${v.non2xx || v.errors ? ` (${v.non2xx} non-2xx, ${v.errors} errors)` : ""}`,
    );
  }
  console.log(`vgate peak RSS: ${rss.toFixed(1)} MB (target <= ${TARGET_RSS_MB} MB)`);
  console.log(ok ? "targets met" : "targets NOT met");
}

try {
  await main();
} finally {
  for (const c of children) c.kill("SIGTERM");
}
