// Part 2 of test/bench/auth.ts: an access key as a bearer token end to end, through a real
// kube-apiserver wired to vgate's token and authorization webhooks (test/support/cluster.ts with
// --authentication-token-webhook-cache-ttl=0s), against a client certificate of the same user.
// Both GET one ConfigMap that RBAC lets the user get, sequentially and with some concurrency, in
// interleaved rounds; a third mode GETs a ConfigMap of a new name each time (404 for both), which no
// cached answer covers.
//
// What the key's requests cost on top of the certificate's: vgate's SubjectAccessReview
// (/authorize) whenever kube-apiserver has no answer of vgate's cached for that exact request (the
// AuthorizationConfiguration keeps them 500 ms: the same GET repeated within that costs one call;
// a GET of a new name always costs one), and a TokenReview (/authenticate) only when
// kube-apiserver's own token cache misses. Setting the webhook's cache TTL to 0 does not turn that
// cache off: kube-apiserver keeps successful token authentications for a fixed 10 s
// (pkg/kubeapiserver/options/authentication.go, TokenSuccessCacheTTL; no flag). The report counts
// vgate's reviews (its /metrics), and a last round with a fresh key per request, whose every
// request needs a TokenReview.

import { performance } from "node:perf_hooks";
import { startVgateCluster, type VgateCluster } from "../support/cluster.js";
import { httpsRequest } from "../support/https-client.js";
import { KubeTestClient } from "../support/kube/kube-client.js";
import { until } from "../support/until.js";
import { clientCert } from "../support/kube/pki.js";
import { role, roleBindingToUser } from "../support/kube/rbac.js";
import { medianOf, percentile, rangeOf } from "./latency-stats.js";
import { atMost, recordSkipped, recordTarget } from "./targets.js";
import {
  histogram,
  meanMsBetween,
  metricValue,
  type SumAndCount,
} from "../support/prometheus-text.js";

const USER = "bench-reader";
const NAMESPACE = "default";
const CONFIGMAP = "bench-cm";
const OBJECT_PATH = `/api/v1/namespaces/${NAMESPACE}/configmaps/${CONFIGMAP}`;
/** Issue 26: `kubectl get` with a key within 1.3x of a client certificate, p50. */
export const TARGET_KEY_VS_CERT_P50 = 1.3;
/** The figure as the table names it. */
const FIGURE = "kubectl get, access key vs client certificate, p50";

export interface E2eOptions {
  rounds: number;
  /** Sequential GETs per mode and round. */
  sequential: number;
  /** Concurrent GETs per mode and round, `concurrency` at a time. */
  concurrent: number;
  concurrency: number;
  /** Sequential GETs per mode and round of a ConfigMap never asked for before; 0 leaves it out. */
  newNames: number;
  /** Keys for the fresh-key round (each used once); 0 leaves it out. */
  fresh: number;
  log(line: string): void;
}

export interface LatencyPair {
  label: string;
  key: number[];
  cert: number[];
  /** Per round: p50 with the key / p50 with the certificate. */
  p50Ratios: number[];
}

export interface ReviewCounts {
  authenticate: number;
  authorize: number;
  requests: number;
  /** Mean ms vgate took to answer a TokenReview (its own histogram). */
  vgateAuthenticateMs: number;
  /** Mean ms vgate took to answer a SubjectAccessReview (its own histogram). */
  vgateAuthorizeMs: number;
  /** Mean ms of kube-apiserver's calls to vgate's authorization webhook, as it sees them. */
  apiserverAuthorizeMs: number;
}

interface Reading {
  authenticate: number;
  authorize: number;
  vgate: SumAndCount;
  vgateAuthn: SumAndCount;
  apiserver: SumAndCount;
}

export interface E2eResult {
  pairs: LatencyPair[];
  /** vgate's reviews during the interleaved rounds (only key requests reach vgate). */
  counts: ReviewCounts;
  fresh?: { pair: LatencyPair; counts: ReviewCounts };
}

/** A Role that lets USER get the one ConfigMap, and its binding. */
async function grantGet(cluster: VgateCluster): Promise<void> {
  const { admin } = cluster;
  await admin.apply({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: CONFIGMAP, namespace: NAMESPACE },
    data: { greeting: "hello" },
  });
  // Any name: the new-name mode GETs ConfigMaps that do not exist (404 once authorized).
  const getConfigMaps = { apiGroups: [""], resources: ["configmaps"], verbs: ["get"] };
  await admin.apply(role("bench-reader", NAMESPACE, [getConfigMaps]));
  await admin.apply(roleBindingToUser("bench-reader", NAMESPACE, "bench-reader", USER));
}

/** An access key of USER, made as a user would (vgate's mutating webhook fills in spec.key). */
async function newKey(cluster: VgateCluster, name: string): Promise<string> {
  const created = await cluster.admin.create({
    apiVersion: `${cluster.group}/v1`,
    kind: "OwnedAccessKey",
    metadata: { name },
    spec: { user: USER, type: "User", displayName: "bench" },
  });
  const read = await cluster.admin.get<typeof created & { spec?: { key?: string } }>(created);
  const key = read?.spec?.key;
  if (!key) throw new Error(`access key ${name} has no spec.key`);
  return key;
}

/** The Authorization header for a token other than the client's own. */
function bearer(token: string | undefined): Record<string, string> {
  return token ? { Authorization: `Bearer ${token}` } : {};
}

async function timedGet(
  client: KubeTestClient,
  token?: string,
  path = OBJECT_PATH,
  status = 200,
): Promise<number> {
  const started = performance.now();
  const res = await client.request("GET", path, undefined, bearer(token));
  const ms = performance.now() - started;
  if (res.status !== status)
    throw new Error(`GET ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return ms;
}

let newNameSeq = 0;

/** GETs of ConfigMaps never asked for before: no cached authorization answer can serve them. */
async function newNames(client: KubeTestClient, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const path = `/api/v1/namespaces/${NAMESPACE}/configmaps/bench-new-${newNameSeq++}`;
    out.push(await timedGet(client, undefined, path, 404));
  }
  return out;
}

async function sequential(client: KubeTestClient, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(await timedGet(client));
  return out;
}

async function concurrent(client: KubeTestClient, n: number, width: number): Promise<number[]> {
  const out: number[] = [];
  let next = 0;
  const worker = async () => {
    while (next++ < n) out.push(await timedGet(client));
  };
  await Promise.all(Array.from({ length: width }, worker));
  return out;
}

async function reviewCounts(cluster: VgateCluster): Promise<Reading> {
  const page = (await httpsRequest(`${cluster.vgateUrl}/metrics`, { ca: cluster.caPem })).text;
  const count = (route: string) =>
    metricValue(page, "vgate_admission_requests_total", { route, operation: "review" });
  const kube = await cluster.admin.request<string>("GET", "/metrics", undefined, {
    Accept: "text/plain",
  });
  return {
    authenticate: count("authenticate"),
    authorize: count("authorize"),
    vgate: histogram(page, "vgate_admission_request_duration_seconds", { route: "authorize" }),
    vgateAuthn: histogram(page, "vgate_admission_request_duration_seconds", {
      route: "authenticate",
    }),
    apiserver: histogram(String(kube.body), "apiserver_authorization_webhook_duration_seconds", {
      name: "vgate",
    }),
  };
}

function since(before: Reading, after: Reading, requests: number): ReviewCounts {
  return {
    authenticate: after.authenticate - before.authenticate,
    authorize: after.authorize - before.authorize,
    requests,
    vgateAuthenticateMs: meanMsBetween(before.vgateAuthn, after.vgateAuthn),
    vgateAuthorizeMs: meanMsBetween(before.vgate, after.vgate),
    apiserverAuthorizeMs: meanMsBetween(before.apiserver, after.apiserver),
  };
}

/** Interleaved rounds of the same GETs with the key and with the certificate. */
async function interleaved(
  keyClient: KubeTestClient,
  certClient: KubeTestClient,
  opts: E2eOptions,
): Promise<LatencyPair[]> {
  const modes = [
    { label: "sequential", run: (c: KubeTestClient) => sequential(c, opts.sequential) },
    {
      label: `${opts.concurrency} concurrent`,
      run: (c: KubeTestClient) => concurrent(c, opts.concurrent, opts.concurrency),
    },
    ...(opts.newNames > 0
      ? [{ label: "new name each", run: (c: KubeTestClient) => newNames(c, opts.newNames) }]
      : []),
  ];
  const pairs: LatencyPair[] = modes.map((m) => ({
    label: m.label,
    key: [],
    cert: [],
    p50Ratios: [],
  }));
  for (let round = 0; round < opts.rounds; round++) {
    for (const [i, mode] of modes.entries()) {
      // Alternate which goes first, so drift within a round favours neither.
      const first = round % 2 === 0 ? keyClient : certClient;
      const a = await mode.run(first);
      const b = await mode.run(first === keyClient ? certClient : keyClient);
      const [key, cert] = first === keyClient ? [a, b] : [b, a];
      pairs[i]!.key.push(...key);
      pairs[i]!.cert.push(...cert);
      pairs[i]!.p50Ratios.push(percentile(key, 0.5) / percentile(cert, 0.5));
    }
  }
  return pairs;
}

/** Each of `count` fresh keys used once, each followed by a GET with the certificate. */
async function freshKeyRound(
  cluster: VgateCluster,
  keyClient: KubeTestClient,
  certClient: KubeTestClient,
  count: number,
): Promise<{ pair: LatencyPair; counts: ReviewCounts }> {
  const tokens: string[] = [];
  for (let i = 0; i < count; i++) tokens.push(await newKey(cluster, `bench-fresh-${i}`));
  // vgate's index has the last one once this answers (asked directly: kube-apiserver's cache
  // stays cold).
  await until(async () => {
    const res = await httpsRequest(`${cluster.vgateUrl}/authenticate`, {
      body: JSON.stringify({
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenReview",
        spec: { token: tokens[count - 1] },
      }),
      headers: { "content-type": "application/json" },
      ca: cluster.caPem,
      client: cluster.apiserverClient,
    });
    return res.json<{ status?: { authenticated?: boolean } }>().status?.authenticated === true;
  }, "the fresh keys in vgate's index");
  const before = await reviewCounts(cluster);
  const pair: LatencyPair = { label: "fresh key each", key: [], cert: [], p50Ratios: [] };
  for (const token of tokens) {
    const started = performance.now();
    const res = await keyClient.request("GET", OBJECT_PATH, undefined, bearer(token));
    pair.key.push(performance.now() - started);
    if (res.status !== 200) {
      throw new Error(`GET with a fresh key: ${res.status} ${JSON.stringify(res.body)}`);
    }
    pair.cert.push(await timedGet(certClient));
  }
  pair.p50Ratios.push(percentile(pair.key, 0.5) / percentile(pair.cert, 0.5));
  return { pair, counts: since(before, await reviewCounts(cluster), count) };
}

export async function measureEndToEnd(opts: E2eOptions): Promise<E2eResult> {
  opts.log("starting kube-apiserver + etcd + vgate (token webhook cache TTL 0s) ...");
  const cluster = await startVgateCluster({ tokenCacheTtl: "0s" });
  const clients: KubeTestClient[] = [];
  try {
    await grantGet(cluster);
    const token = await newKey(cluster, "bench-reader-key");
    const keyClient = new KubeTestClient(cluster.url, { ca: cluster.caPem, token });
    const certClient = new KubeTestClient(cluster.url, {
      ca: cluster.caPem,
      client: await clientCert(cluster.plane.ca, USER),
    });
    clients.push(keyClient, certClient);
    // RBAC (and vgate's index) take effect a moment after they are written.
    for (const c of [certClient, keyClient]) {
      await until(async () => (await c.request("GET", OBJECT_PATH)).status === 200, "GET allowed");
    }
    await sequential(keyClient, 50);
    await sequential(certClient, 50);
    const before = await reviewCounts(cluster);
    const started = performance.now();
    const pairs = await interleaved(keyClient, certClient, opts);
    const keyRequests = pairs.reduce((n, p) => n + p.key.length, 0);
    const counts = since(before, await reviewCounts(cluster), keyRequests);
    opts.log(
      `  interleaved rounds took ${((performance.now() - started) / 1000).toFixed(1)} s; ${keyRequests} key GETs`,
    );
    const result: E2eResult = { pairs, counts };
    if (opts.fresh > 0) {
      result.fresh = await freshKeyRound(cluster, keyClient, certClient, opts.fresh);
    }
    return result;
  } finally {
    for (const c of clients) c.close();
    await cluster.stop();
  }
}

/** The figures recorded: the same GET repeated, and a GET that no cached answer serves. */
const RECORDED = [
  { label: "sequential", figure: `${FIGURE} (same GET repeated)` },
  { label: "new name each", figure: `${FIGURE} (each GET new to the cache)` },
];

/** Records the figure, key vs certificate p50, for the rows of RECORDED. */
export function recordE2eTargets(result: E2eResult): void {
  for (const { label, figure } of RECORDED) {
    const p = result.pairs.find((x) => x.label === label);
    if (!p) continue;
    const key = percentile(p.key, 0.5).toFixed(2);
    const cert = percentile(p.cert, 0.5).toFixed(2);
    recordTarget(
      atMost(
        figure,
        medianOf(p.p50Ratios),
        TARGET_KEY_VS_CERT_P50,
        `key ${key} ms / cert ${cert} ms`,
      ),
    );
  }
}

/** Says why the figures could not be measured. */
export function recordE2eSkipped(reason: string): void {
  for (const { figure } of RECORDED) recordSkipped(figure, `<= ${TARGET_KEY_VS_CERT_P50}`, reason);
}

/** The lines of part 2's table. */
export function e2eLines(result: E2eResult): string[] {
  const rows = [...result.pairs, ...(result.fresh ? [result.fresh.pair] : [])];
  const lines = [
    "mode              n   key p50  key p99   cert p50  cert p99   p50 ratio (range)    p99 ratio",
  ];
  for (const p of rows) {
    const ratio = medianOf(p.p50Ratios);
    const p99 = percentile(p.key, 0.99) / percentile(p.cert, 0.99);
    lines.push(
      `${p.label.padEnd(15)} ${String(p.key.length).padStart(4)}  ${ms(percentile(p.key, 0.5))}  ${ms(percentile(p.key, 0.99))}   ${ms(percentile(p.cert, 0.5))}  ${ms(percentile(p.cert, 0.99))}   ${ratio.toFixed(2).padStart(5)} (${rangeOf(p.p50Ratios)})  ${p99.toFixed(2).padStart(9)}`,
    );
  }
  return lines;
}

const ms = (v: number) => `${v.toFixed(2).padStart(6)} ms`.padStart(8);
