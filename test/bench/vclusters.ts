// `make bench`, the cost of one vgate for many vClusters (`vgate serve --discover-vclusters`): a
// real kube-apiserver holds 1, then 100 vClusters' config Secrets as vCluster's chart writes them
// (vc-config-<name>, the chart's whole values.yaml from vCluster's Go module with an Endpoints
// patch set of its own per vCluster); a fresh `vgate serve` loads them, and the report gives, in the
// same run, its resident memory (the server and its sandbox children) and the cost of a request
// through POST /mutate/endpoints, each vCluster's objects in turn, as 100 against 1.
//
// Without vCluster's Go module (no Go, or the module not downloaded) the config is the example
// vcluster.yaml alone, and the report says so. BENCH_VCLUSTERS changes 100; BENCH_VC_REQUESTS the
// requests per measure (default 2000); BENCH_VC_CONCURRENCY the requests in flight (default 8).

import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { createServer } from "node:net";
import { resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { parse as parseYaml } from "yaml";
import type { JsonObject } from "../../webhook/src/patches/types.js";
import { translateEndpointsToHost } from "../../webhook/src/sync/translate-endpoints.js";
import { repoRoot } from "../support/fixtures.js";
import { postJson } from "../support/https-client.js";
import { objectReview } from "../support/reviews.js";
import { configSecret } from "../support/vcluster/config-secret.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../support/kube/binaries.js";
import { startControlPlane, type ControlPlane } from "../support/kube/control-plane.js";
import { medianOf, percentile } from "./latency-stats.js";

const MANY = Math.max(2, Math.floor(Number(process.env.BENCH_VCLUSTERS) || 100));
const REQUESTS = Math.max(100, Math.floor(Number(process.env.BENCH_VC_REQUESTS) || 2000));
const CONCURRENCY = Math.max(1, Math.floor(Number(process.env.BENCH_VC_CONCURRENCY) || 8));
const ROUNDS = 3;

const example = readFileSync(resolve(repoRoot, "webhook/examples/vcluster.yaml"), "utf8");
const virtualEp = parseYaml(
  readFileSync(resolve(repoRoot, "webhook/examples/endpoints.yaml"), "utf8"),
) as JsonObject;

/** The chart's values.yaml from vCluster's Go module (what the Secret holds), or why not. */
function chartValues(): { text: string } | { missing: string } {
  const r = spawnSync("go", ["list", "-m", "-f", "{{.Dir}}", "github.com/loft-sh/vcluster"], {
    cwd: resolve(repoRoot, "test/kube/vcluster"),
    encoding: "utf8",
    env: { ...process.env, GOTOOLCHAIN: "local", GOFLAGS: "-mod=readonly" },
  });
  if (r.status !== 0 || !r.stdout.trim()) {
    return { missing: `vCluster's Go module not found (${r.error?.message ?? r.stderr.trim()})` };
  }
  return { text: readFileSync(resolve(r.stdout.trim(), "chart/values.yaml"), "utf8") };
}

/** vCluster `i`'s config: the chart's values with an Endpoints patch set naming it. */
function configFor(values: string | undefined, i: number): string {
  const own = example.replace('"tenant-" + value', `"tenant-${i}-" + value`);
  if (values === undefined) return own;
  const merged = parseYaml(values) as Record<string, unknown>;
  const sync = (merged.sync ??= {}) as Record<string, unknown>;
  const toHost = (sync.toHost ??= {}) as Record<string, unknown>;
  toHost.endpoints = (
    parseYaml(own) as { sync: { toHost: Record<string, unknown> } }
  ).sync.toHost.endpoints;
  return JSON.stringify(merged);
}

function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => ok(port));
    });
    s.on("error", fail);
  });
}

/** Resident bytes of `pid` and every process below it (the sandbox children). */
function treeRss(pid: number): number {
  let total = 0;
  const visit = (p: number): void => {
    try {
      const status = readFileSync(`/proc/${p}/status`, "utf8");
      total += Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
      for (const task of readdirSync(`/proc/${p}/task`)) {
        const kids = readFileSync(`/proc/${p}/task/${task}/children`, "utf8").trim();
        for (const k of kids ? kids.split(" ") : []) visit(Number(k));
      }
    } catch {
      // gone meanwhile
    }
  };
  visit(pid);
  return total;
}

interface Vgate {
  proc: ChildProcess;
  url: string;
  stop(): Promise<void>;
}

/** A fresh `vgate serve --discover-vclusters`, returned once it logged `expected` configs loaded. */
async function startVgate(plane: ControlPlane, expected: number): Promise<Vgate> {
  const port = await freePort();
  const proc = spawn(
    process.execPath,
    [
      resolve(repoRoot, "webhook/bin/vgate"),
      "serve",
      "--dev",
      `--port=${port}`,
      "--bind-address=127.0.0.1",
      `--kubeconfig=${plane.adminKubeconfig}`,
      "--discover-vclusters",
      "--patch-workers=2",
      "--shutdown-delay=0",
      "--log-level=info",
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let loaded = 0;
  let errors = "";
  proc.stdout!.on("data", (chunk: Buffer) => {
    loaded += chunk.toString("utf8").split("vCluster config loaded").length - 1;
  });
  proc.stderr!.on("data", (chunk: Buffer) => (errors += chunk.toString("utf8")));
  const deadline = Date.now() + 120_000;
  while (loaded < expected) {
    if (proc.exitCode !== null || Date.now() > deadline) {
      proc.kill("SIGKILL");
      throw new Error(`vgate loaded ${loaded} of ${expected} configs: ${errors.slice(-2000)}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    proc,
    url: `https://127.0.0.1:${port}/mutate/endpoints`,
    stop: () =>
      new Promise<void>((done) => {
        proc.once("exit", () => done());
        proc.kill("SIGTERM");
      }),
  };
}

/** What a vCluster's syncer sends when it creates the host copy `object`. */
const review = (object: JsonObject): object =>
  objectReview({
    kind: "Endpoints",
    apiVersion: "v1",
    resource: "endpoints",
    object,
    userInfo: { username: "system:serviceaccount:bench:vc-vc" },
  });

/** Requests per second and latencies (ms), each vCluster's objects in turn. */
async function measure(
  url: string,
  vclusters: number,
): Promise<{ rps: number; p50: number; p99: number }> {
  const bodies = Array.from({ length: vclusters }, (_, i) =>
    review(
      translateEndpointsToHost(virtualEp, { name: "vc", namespace: `bench-vc-${i}`, config: {} }),
    ),
  );
  const times: number[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < REQUESTS) {
      const i = next++;
      const t0 = performance.now();
      const res = await postJson(url, bodies[i % vclusters]!);
      times.push(performance.now() - t0);
      const patch = res.json<{ response: { patch?: string } }>().response.patch;
      if (res.status !== 200 || patch === undefined) {
        throw new Error(`request ${i}: not patched (${res.status}) ${res.text.slice(0, 300)}`);
      }
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const seconds = (performance.now() - t0) / 1000;
  return { rps: REQUESTS / seconds, p50: percentile(times, 0.5), p99: percentile(times, 0.99) };
}

async function scenario(plane: ControlPlane, vclusters: number) {
  const vgate = await startVgate(plane, vclusters);
  try {
    await measure(vgate.url, vclusters); // warm-up
    await new Promise((r) => setTimeout(r, 500));
    const rss = treeRss(vgate.proc.pid!);
    return { rss, ...(await measure(vgate.url, vclusters)) };
  } finally {
    await vgate.stop();
  }
}

async function main(): Promise<void> {
  if (!HAVE_KUBE) {
    process.stderr.write(`skipping the vClusters bench${KUBE_SKIP_REASON}\n`);
    return;
  }
  const values = chartValues();
  if ("missing" in values) {
    process.stderr.write(`configs are the example vcluster.yaml alone: ${values.missing}\n`);
  }
  const plane = await startControlPlane();
  try {
    const text = "text" in values ? values.text : undefined;
    for (let i = 0; i < MANY; i++) {
      await plane.admin.create({
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: `bench-vc-${i}` },
      });
    }
    await plane.admin.create(configSecret("bench-vc-0", "vc", configFor(text, 0)));
    const rounds: {
      one: Awaited<ReturnType<typeof scenario>>;
      many: Awaited<ReturnType<typeof scenario>>;
    }[] = [];
    let created = 1;
    for (let round = 1; round <= ROUNDS; round++) {
      process.stderr.write(`round ${round} of ${ROUNDS}: 1 vCluster...\n`);
      // Secrets 1..MANY-1 exist only for the "many" half of each round.
      for (let i = 1; i < created; i++)
        await plane.admin.delete(configSecret(`bench-vc-${i}`, "vc", ""));
      created = 1;
      const one = await scenario(plane, 1);
      process.stderr.write(`round ${round} of ${ROUNDS}: ${MANY} vClusters...\n`);
      for (let i = 1; i < MANY; i++)
        await plane.admin.create(configSecret(`bench-vc-${i}`, "vc", configFor(text, i)));
      created = MANY;
      const many = await scenario(plane, MANY);
      rounds.push({ one, many });
    }
    const med = (f: (r: (typeof rounds)[number]) => number): number => medianOf(rounds.map(f));
    const mib = (b: number): string => (b / 1024 / 1024).toFixed(1);
    const line = {
      bench: "vclusters",
      vclusters: MANY,
      config_bytes: Buffer.byteLength(configFor(text, 0)),
      rss_mib_1: Number(mib(med((r) => r.one.rss))),
      rss_mib_many: Number(mib(med((r) => r.many.rss))),
      rss_ratio: Number(med((r) => r.many.rss / r.one.rss).toFixed(2)),
      rps_1: Math.round(med((r) => r.one.rps)),
      rps_many: Math.round(med((r) => r.many.rps)),
      rps_ratio: Number(med((r) => r.many.rps / r.one.rps).toFixed(2)),
      p99_ms_1: Number(med((r) => r.one.p99).toFixed(2)),
      p99_ms_many: Number(med((r) => r.many.p99).toFixed(2)),
      p99_ratio: Number(med((r) => r.many.p99 / r.one.p99).toFixed(2)),
    };
    const pad = (s: string | number, n: number): string => String(s).padEnd(n);
    process.stdout.write(
      [
        "",
        `vgate serve --discover-vclusters: ${MANY} vClusters' configs against 1 (median of ${ROUNDS} rounds, ${REQUESTS} requests, ${CONCURRENCY} in flight; config ${line.config_bytes} bytes)`,
        `${pad("", 26)}${pad("1", 10)}${pad(MANY, 10)}ratio`,
        `${pad("resident MiB (all procs)", 26)}${pad(line.rss_mib_1, 10)}${pad(line.rss_mib_many, 10)}${line.rss_ratio}`,
        `${pad("requests/s", 26)}${pad(line.rps_1, 10)}${pad(line.rps_many, 10)}${line.rps_ratio}`,
        `${pad("p99 ms", 26)}${pad(line.p99_ms_1, 10)}${pad(line.p99_ms_many, 10)}${line.p99_ratio}`,
        JSON.stringify(line),
        "",
      ].join("\n"),
    );
  } finally {
    await plane.stop();
  }
}

await main();
