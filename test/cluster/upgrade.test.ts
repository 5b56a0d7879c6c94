// vgate disturbed under load on a real node: a rolling upgrade to a new image, then a replica
// killed outright, while kube-apiserver keeps sending vgate OwnedAccessKey admissions, Endpoints
// admissions (the optional Endpoints webhook, enabled as a user would) and logins with access keys
// (TokenReviews and SubjectAccessReviews). What kube-apiserver's webhook clients retry decides what
// a disturbance costs; docs/reference.md ("What kube-apiserver retries") has the facts.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { get as httpsGet } from "node:https";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { parse as parseYaml } from "yaml";
import { repoFile } from "../support/fixtures.js";
import { KubeTestClient } from "../support/kube/kube-client.js";
import { HAVE_NODE, NODE_SKIP_REASON, nodeImages } from "../support/node/cluster-tier.js";
import { startLoad, type LoadStream, type StreamCount } from "../support/node/load.js";
import { startNodeRig, type NodeRig } from "../support/node/node-rig.js";
import {
  bash,
  installVgate,
  waitAllReady,
  waitForWebhooks,
  type VgateInstall,
} from "../support/node/vgate-install.js";

const run = promisify(execFile);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` every 250 ms (each is a few API calls) until it holds; fails after `ms`. */
async function until(check: () => Promise<boolean>, what: string, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`${what}: not within ${ms} ms`);
    await sleep(250);
  }
}

const NS = "vgate-system";
/** manifests/overlays/endpoints/vcluster.env: the virtual cluster and its host namespace. */
const VCLUSTER = "my-vcluster";
const VC_NS = "vcluster-my-vcluster";
/** The patch of manifests/overlays/endpoints/vcluster.yaml. */
const SYNCED_BY = "example.com/synced-by";
const SELECTOR = "app.kubernetes.io/name=vgate";
/**
 * Logins rotate over KEYS keys, each used for SLOT_MS: a cycle (10.8 s) longer than
 * kube-apiserver's 10 s token cache, so each slot starts with a TokenReview (about one a second)
 * and every request is a SubjectAccessReview (no authorization cache).
 */
const KEYS = 12;
const SLOT_MS = 900;

interface Pod {
  metadata: { name: string; uid: string; deletionTimestamp?: string };
  spec: { containers: { image: string }[] };
  status: {
    podIP?: string;
    conditions?: { type: string; status: string }[];
    containerStatuses?: { image: string; containerID?: string; ready: boolean }[];
  };
}

interface EndpointSlice {
  endpoints?: { addresses: string[]; conditions?: { ready?: boolean } }[];
}

const isReady = (p: Pod) =>
  !p.metadata.deletionTimestamp &&
  (p.status.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True");

async function vgatePods(rig: NodeRig): Promise<Pod[]> {
  const r = await rig.admin.request<{ items: Pod[] }>(
    "GET",
    `/api/v1/namespaces/${NS}/pods?labelSelector=${encodeURIComponent(SELECTOR)}`,
  );
  assert.equal(r.status, 200);
  return r.body.items;
}

/** The Service's endpoints: address → ready. */
async function serviceEndpoints(rig: NodeRig): Promise<Map<string, boolean>> {
  const r = await rig.admin.request<{ items: EndpointSlice[] }>(
    "GET",
    `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices?labelSelector=${encodeURIComponent("kubernetes.io/service-name=vgate")}`,
  );
  assert.equal(r.status, 200);
  const out = new Map<string, boolean>();
  for (const s of r.body.items) {
    for (const e of s.endpoints ?? []) out.set(e.addresses[0]!, e.conditions?.ready === true);
  }
  return out;
}

/** The user's vgate-install/kustomization.yaml: the README's, with the Endpoints component. */
function kustomization(image?: string): string {
  const lines = [
    "apiVersion: kustomize.config.k8s.io/v1beta1",
    "kind: Kustomization",
    "resources:",
    "  - ../manifests",
    "components:",
    "  - ../manifests/overlays/self-managed",
    "  - ../manifests/overlays/endpoints",
  ];
  if (image) {
    const at = image.lastIndexOf(":");
    lines.push(
      "images:",
      `  - name: ${image.slice(0, at)}`,
      `    newTag: "${image.slice(at + 1)}"`,
    );
  }
  return lines.join("\n") + "\n";
}

/** A host Endpoints object as vCluster's syncer writes it for this virtual cluster. */
function syncedEndpoints(i: number) {
  return {
    apiVersion: "v1",
    kind: "Endpoints",
    metadata: {
      name: `load-${i}-x-default-x-${VCLUSTER}`,
      namespace: VC_NS,
      labels: { "vcluster.loft.sh/managed-by": VCLUSTER, "vcluster.loft.sh/namespace": "default" },
      annotations: {
        "vcluster.loft.sh/object-name": `load-${i}`,
        "vcluster.loft.sh/object-namespace": "default",
        // Copied from the virtual object by the syncer; the patch (an expression) rewrites it.
        [SYNCED_BY]: "virtual",
      },
    },
    subsets: [{ addresses: [{ ip: "10.1.2.3" }], ports: [{ name: "http", port: 80 }] }],
  };
}

function patched(body: unknown): boolean {
  const meta = (body as { metadata?: { annotations?: Record<string, string> } }).metadata;
  return meta?.annotations?.[SYNCED_BY] === "vgate";
}

function loadStreams(rig: NodeRig, keys: readonly string[]): LoadStream[] {
  const check = parseYaml(repoFile("webhook/examples/webhook-check.yaml")) as {
    metadata: Record<string, unknown>;
  };
  const logins = keys.map((token) => new KubeTestClient(rig.url, { ca: rig.ca.cert, token }));
  const t0 = Date.now();
  return [
    {
      name: "OwnedAccessKey admissions",
      client: rig.admin,
      request: (i) => ({
        method: "POST",
        path: "/apis/management.loft.sh/v1/ownedaccesskeys?dryRun=All",
        body: { ...check, metadata: { name: `load-check-${i}` } },
      }),
      ok: (status) => status === 201,
    },
    {
      name: "Endpoints admissions",
      client: rig.admin,
      request: (i) => ({
        method: "POST",
        path: `/api/v1/namespaces/${VC_NS}/endpoints?dryRun=All`,
        body: syncedEndpoints(i),
      }),
      ok: (status, body) => status === 201 && patched(body),
    },
    {
      name: "key logins",
      client: logins[0]!,
      request: () => ({
        method: "GET",
        path: "/api/v1/namespaces/default/pods",
        client: logins[Math.floor((Date.now() - t0) / SLOT_MS) % logins.length],
      }),
      ok: (status) => status === 200,
    },
  ];
}

type Counts = Record<string, StreamCount>;
const snapshot = (c: Counts): Counts => structuredClone(c);
function since(now: Counts, before: Counts): Record<string, { ok: number; failed: number }> {
  return Object.fromEntries(
    Object.entries(now).map(([k, v]) => [
      k,
      { ok: v.ok - (before[k]?.ok ?? 0), failed: v.failed - (before[k]?.failed ?? 0) },
    ]),
  );
}
function logCounts(title: string, counts: Record<string, { ok: number; failed: number }>) {
  console.log(`      ${title}:`);
  for (const [k, v] of Object.entries(counts)) {
    console.log(`        ${k}: ${v.ok + v.failed} requests, ${v.failed} failed`);
  }
}
function failureText(counts: Counts): string {
  return Object.entries(counts)
    .filter(([, v]) => v.failed > 0)
    .map(([k, v]) => `${k}: ${v.failed} failed\n  ${v.failures.join("\n  ")}`)
    .join("\n");
}

/** The sum of a metric's series whose labels include `labels`, in Prometheus text. */
function metric(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) {
      sum += Number(line.slice(line.lastIndexOf(" ") + 1));
    }
  }
  return sum;
}

/** GET https://<pod IP>:8443/metrics from the host (the rig routes pod addresses); "" on no answer. */
function podMetrics(ip: string): Promise<string> {
  return new Promise((resolve) => {
    const req = httpsGet(
      `https://${ip}:8443/metrics`,
      { rejectUnauthorized: false, timeout: 3000 },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => (text += c));
        res.on("end", () => resolve(text));
        res.on("error", () => resolve(""));
      },
    );
    req.on("error", () => resolve(""));
    req.on("timeout", () => req.destroy());
  });
}

interface Period {
  at: number;
  counts: Counts;
  /** Per pod: the TokenReviews and SubjectAccessReviews it has answered. */
  reviews: Map<string, { tokens: number; access: number }>;
}

async function period(rig: NodeRig, counts: Counts): Promise<Period> {
  const at = Date.now();
  const taken = snapshot(counts);
  const pods = (await vgatePods(rig)).filter((p) => p.status.podIP);
  const reviews = new Map<string, { tokens: number; access: number }>();
  await Promise.all(
    pods.map(async (p) => {
      const text = await podMetrics(p.status.podIP!);
      const count = (route: string) => metric(text, "vgate_admission_requests_total", { route });
      if (text) {
        reviews.set(p.metadata.uid, { tokens: count("authenticate"), access: count("authorize") });
      }
    }),
  );
  return { at, counts: taken, reviews };
}

/**
 * The reviews vgate's pods answered between two periods: a pod's counter from 0 if it was not
 * there at the first (it started after). A pod gone by the second is not counted.
 */
function reviewsBetween(a: Period, b: Period): { tokens: number; access: number } {
  let tokens = 0;
  let access = 0;
  for (const [uid, now] of b.reviews) {
    const then = a.reviews.get(uid) ?? { tokens: 0, access: 0 };
    tokens += now.tokens - then.tokens;
    access += now.access - then.access;
  }
  return { tokens, access };
}

/**
 * Until stopped: every ~200 ms the ready pods (as the PDB counts them: Ready, not being deleted)
 * and the Service's ready endpoints; every ~5 s the load's counts and the reviews each pod
 * answered.
 */
function sampleDuring(rig: NodeRig, counts: () => Counts) {
  const samples: { pods: number; endpoints: number }[] = [];
  const periods: Period[] = [];
  let running = true;
  const loop = (async () => {
    periods.push(await period(rig, counts()));
    while (running) {
      const [pods, eps] = await Promise.all([vgatePods(rig), serviceEndpoints(rig)]);
      samples.push({
        pods: pods.filter(isReady).length,
        endpoints: [...eps.values()].filter(Boolean).length,
      });
      if (Date.now() - periods.at(-1)!.at >= 5000) periods.push(await period(rig, counts()));
      await sleep(200);
    }
    // The last period ends now: at least 4 s long, so it is one the load must show progress in.
    if (periods.length > 1 && Date.now() - periods.at(-1)!.at < 4000) periods.pop();
    periods.push(await period(rig, counts()));
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return { samples, periods };
    },
  };
}

/** The host PID of a pod's container, from the node's containerd. */
async function containerPid(rig: NodeRig, pod: Pod): Promise<number> {
  const id = pod.status.containerStatuses?.[0]?.containerID?.replace(/^containerd:\/\//, "");
  assert.ok(id, `${pod.metadata.name} has a container`);
  const { stdout } = await run("ctr", [
    "--address",
    join(rig.dir, "containerd", "containerd.sock"),
    "-n",
    "k8s.io",
    "tasks",
    "ls",
  ]);
  const line = stdout.split("\n").find((l) => l.startsWith(id));
  const pid = Number(line?.trim().split(/\s+/)[1]);
  assert.ok(pid > 0, `containerd's task for ${id}: ${line}`);
  return pid;
}

/** Whether kube-proxy's NAT rules in the node's namespace still send anything to `ip`. */
async function proxiedTo(rig: NodeRig, ip: string): Promise<boolean> {
  const { stdout } = await rig.inNetns("iptables-save", ["-t", "nat"]);
  return stdout.includes(`--to-destination ${ip}:`);
}

function evict(rig: NodeRig, name: string) {
  return rig.admin.request<{ reason?: string; details?: { causes?: { reason?: string }[] } }>(
    "POST",
    `/api/v1/namespaces/${NS}/pods/${name}/eviction`,
    {
      apiVersion: "policy/v1",
      kind: "Eviction",
      metadata: { name, namespace: NS },
    },
  );
}

(HAVE_NODE ? describe : describe.skip)(
  `rolling upgrade and a killed pod under load on a real node${NODE_SKIP_REASON}`,
  function () {
    this.timeout(600_000);
    let rig: NodeRig;
    let install: VgateInstall;
    let keys: string[];
    const user = (script: string) => bash(script, install.workDir, install.env);

    before(async () => {
      const images = nodeImages();
      rig = await startNodeRig({ pause: images.pause, images: [images.test] });
      install = await installVgate(rig, images.vgate);
      // Enabling the Endpoints webhook as the README says: the component in the kustomization,
      // the virtual cluster's namespace, and `vgate certs` again for the new webhook's caBundle.
      writeFileSync(join(install.workDir, "vgate-install/kustomization.yaml"), kustomization());
      await user(`kubectl create namespace ${VC_NS}`);
      await user("kubectl apply -k vgate-install");
      await user(
        "webhook/bin/vgate certs --namespace vgate-system --service vgate --secret vgate-tls --webhook-configuration vgate-ownedaccesskeys",
      );
      // The Deployment rolls to its new flags; kubectl's own deadline, not the rig's 30 s one.
      await user("kubectl -n vgate-system rollout status deployment/vgate --timeout=180s");
      await waitForWebhooks(rig);
      // Keys for the logins, stored hashed, and RBAC that lets their user list pods.
      await user(
        "kubectl -n default create role load-pods --verb=list --resource=pods && " +
          "kubectl -n default create rolebinding load-pods --role=load-pods --user=load-user",
      );
      keys = [];
      for (let i = 0; i < KEYS; i += 4) {
        const batch = Array.from({ length: Math.min(4, KEYS - i) }, (_, j) =>
          // The key alone: the plugin says what it did on standard error.
          user(`kubectl accesskey create load-${i + j} --user load-user --ttl 1h 2>/dev/null`),
        );
        keys.push(...(await Promise.all(batch)).map((k) => k.trim()));
      }
      for (const k of keys) assert.match(k, /^\S{32,}$/, "a key, alone");
    });
    after(async () => rig?.stop());

    it("the optional Endpoints webhook reaches vgate, which applies vcluster.yaml's patch", async () => {
      assert.match(
        repoFile("manifests/overlays/endpoints/vcluster.yaml"),
        /example\.com\/synced-by/,
      );
      const hooks = JSON.parse(
        (
          await user("kubectl get mutatingwebhookconfiguration vgate-ownedaccesskeys -o json")
        ).trim(),
      ) as { webhooks: { name: string; clientConfig: { caBundle?: string } }[] };
      assert.deepEqual(
        hooks.webhooks.map((w) => [w.name, Boolean(w.clientConfig.caBundle)]),
        [
          ["mutate.ownedaccesskeys.management.loft.sh", true],
          ["mutate.endpoints.loft.sh", true],
        ],
      );
      const r = await rig.admin.request(
        "POST",
        `/api/v1/namespaces/${VC_NS}/endpoints?dryRun=All`,
        syncedEndpoints(0),
      );
      assert.equal(r.status, 201, JSON.stringify(r.body));
      assert.ok(patched(r.body), `the patch applied: ${JSON.stringify(r.body)}`);
      // Not this virtual cluster's: admitted untouched.
      const other = syncedEndpoints(1);
      other.metadata.labels["vcluster.loft.sh/managed-by"] = "another";
      const o = await rig.admin.request(
        "POST",
        `/api/v1/namespaces/${VC_NS}/endpoints?dryRun=All`,
        other,
      );
      assert.equal(o.status, 201);
      assert.ok(!patched(o.body));
    });

    it("rolls to a new image under load: no failed request, and the PDB holds", async () => {
      const next = nodeImages().vgateNext.ref;
      const load = startLoad(loadStreams(rig, keys));
      await sleep(3000);
      const sampler = sampleDuring(rig, load.counts);
      const t0 = Date.now();
      // As a user upgrades: the new release's image in the kustomization, and apply.
      writeFileSync(join(install.workDir, "vgate-install/kustomization.yaml"), kustomization(next));
      await user("kubectl apply -k vgate-install");
      await user("kubectl -n vgate-system rollout status deployment/vgate --timeout=180s");
      const rolloutMs = Date.now() - t0;
      // Until the old pods are gone, their drain included.
      await until(
        async () => {
          const pods = await vgatePods(rig);
          return (
            pods.length === 2 &&
            pods.every((p) => isReady(p) && p.spec.containers[0]!.image === next)
          );
        },
        "only the new pods",
        120_000,
      );
      await waitAllReady(rig);
      const doneMs = Date.now() - t0;
      const { samples, periods } = await sampler.stop();
      await sleep(2000);
      const counts = await load.stop();
      const pdb = JSON.parse(
        (await rig.kubectl(["-n", NS, "get", "pdb", "vgate", "-o", "json"])).stdout,
      ) as { spec: { minAvailable: number } };
      const first = periods[0]!;
      const last = periods.at(-1)!;
      const minPods = Math.min(...samples.map((s) => s.pods));
      const minEndpoints = Math.min(...samples.map((s) => s.endpoints));
      console.log(
        `      rollout: ${rolloutMs} ms from apply to "successfully rolled out", ${doneMs} ms until the old pods were gone`,
      );
      logCounts(`during the rollout (${last.at - first.at} ms)`, since(last.counts, first.counts));
      const answered = periods
        .slice(1)
        .map((b, i) => reviewsBetween(periods[i]!, b))
        .reduce((x, y) => ({ tokens: x.tokens + y.tokens, access: x.access + y.access }));
      console.log(
        `        vgate answered at least ${answered.tokens} TokenReviews and ${answered.access} SubjectAccessReviews`,
      );
      logCounts("the whole load", counts);
      console.log(
        `      ${samples.length} samples: never fewer than ${minPods} pods ready, ${minEndpoints} ready endpoints (PDB minAvailable ${pdb.spec.minAvailable})`,
      );
      assert.equal(failureText(counts), "", "no failed request");
      // Every kind of request succeeded all through the rollout, TokenReviews included.
      for (let i = 1; i < periods.length; i++) {
        const [a, b] = [periods[i - 1]!, periods[i]!];
        const d = since(b.counts, a.counts);
        const where = `between +${a.at - t0} and +${b.at - t0} ms`;
        for (const [k, v] of Object.entries(d)) assert.ok(v.ok > 0, `${k} ${where}`);
        const r = reviewsBetween(a, b);
        assert.ok(r.tokens > 0, `TokenReviews ${where}`);
        assert.ok(r.access > 0, `SubjectAccessReviews ${where}`);
      }
      // However fast the machine, the rollout spans at least one period and a few samples (a
      // new pod must start and pass its probes while an old one still serves).
      assert.ok(periods.length >= 2, `${periods.length} periods`);
      assert.ok(samples.length >= 5, `${samples.length} samples`);
      assert.ok(minPods >= pdb.spec.minAvailable, `ready pods never below the PDB's minimum`);
      assert.ok(minEndpoints >= pdb.spec.minAvailable, `ready endpoints never below it`);
      for (const pod of await vgatePods(rig)) {
        assert.equal(pod.status.containerStatuses?.[0]?.image, next);
      }
    });

    it("a pod SIGKILLed under load, then force-deleted: only requests on their way to it are lost", async () => {
      const load = startLoad(loadStreams(rig, keys));
      await sleep(3000);
      const victim = (await vgatePods(rig)).find(isReady)!;
      const ip = victim.status.podIP!;
      const pid = await containerPid(rig, victim);
      const killedAt = Date.now();
      process.kill(pid, "SIGKILL");
      // How long the killed pod stays Ready, in the Service's ready endpoints, and in kube-proxy's
      // rules (where kube-apiserver's new connections to the ClusterIP go).
      let notReadyMs = -1;
      let endpointMs = -1;
      let unproxiedMs = -1;
      while (
        Date.now() - killedAt < 20_000 &&
        (notReadyMs < 0 || endpointMs < 0 || unproxiedMs < 0)
      ) {
        const [pods, eps, proxied] = await Promise.all([
          vgatePods(rig),
          serviceEndpoints(rig),
          proxiedTo(rig, ip),
        ]);
        const ms = Date.now() - killedAt;
        const pod = pods.find((p) => p.metadata.uid === victim.metadata.uid);
        if (notReadyMs < 0 && !(pod && isReady(pod))) notReadyMs = ms;
        if (endpointMs < 0 && eps.get(ip) !== true) endpointMs = ms;
        if (unproxiedMs < 0 && !proxied) unproxiedMs = ms;
        await sleep(50);
      }
      const del = await rig.kubectl([
        "-n",
        NS,
        "delete",
        "pod",
        victim.metadata.name,
        "--force",
        "--grace-period=0",
      ]);
      assert.equal(del.code, 0, del.stderr);
      const deletedMs = Date.now() - killedAt;
      await until(
        async () => {
          const pods = await vgatePods(rig);
          return pods.length === 2 && pods.filter(isReady).length === 2;
        },
        "a replacement ready",
        120_000,
      );
      await waitAllReady(rig);
      const recoveredMs = Date.now() - killedAt;
      await sleep(2000);
      const counts = await load.stop();
      const killAt = killedAt - load.startedAt;
      console.log(
        `      after the SIGKILL: pod not Ready ${notReadyMs} ms, endpoint not ready ${endpointMs} ms, ` +
          `out of kube-proxy's rules ${unproxiedMs} ms; force-deleted at ${deletedMs} ms; ` +
          `two replicas ready again at ${recoveredMs} ms`,
      );
      logCounts("the whole load", counts);
      for (const [k, v] of Object.entries(counts)) {
        for (const [i, f] of v.failedAt.entries()) {
          const text = (v.failures[i] ?? "").replace(/^\+\d+ ms: /, "");
          console.log(
            `        ${k}: sent ${f.sent - killAt} ms from the kill, failed at ${f.answered - killAt} ms: ${text}`,
          );
        }
      }
      assert.ok(notReadyMs >= 0 && endpointMs >= 0 && unproxiedMs >= 0, "the endpoint moved");
      // kube-apiserver never retries an admission webhook call that got no answer, nor a
      // TokenReview or SubjectAccessReview that ended without one (EOF) or could not connect:
      // requests in flight on the killed replica, and those kube-proxy still sent to it, may fail.
      // Nothing else may.
      for (const [k, v] of Object.entries(counts)) {
        for (const f of v.failedAt) {
          assert.ok(
            f.answered >= killAt && f.sent <= killAt + unproxiedMs,
            `${k}: a request sent at ${f.sent - killAt} ms from the kill failed\n${failureText(counts)}`,
          );
        }
      }
      for (const k of ["OwnedAccessKey admissions", "Endpoints admissions"]) {
        for (const f of counts[k]!.failures) {
          assert.match(f, /: 500 .*failed calling webhook/, "the webhook call failed");
        }
      }
    });

    it("the PDB refuses an eviction that would leave no replica ready", async () => {
      await until(
        async () => {
          const r = await rig.admin.request<{
            metadata: { generation: number };
            status: {
              observedGeneration?: number;
              currentHealthy?: number;
              disruptionsAllowed?: number;
            };
          }>("GET", `/apis/policy/v1/namespaces/${NS}/poddisruptionbudgets/vgate`);
          const s = r.body.status;
          return (
            s.observedGeneration === r.body.metadata.generation &&
            s.currentHealthy === 2 &&
            s.disruptionsAllowed === 1
          );
        },
        "the PDB allows one disruption",
        60_000,
      );
      const [a, b] = (await vgatePods(rig)).filter(isReady);
      assert.ok(a && b);
      const first = await evict(rig, a.metadata.name);
      assert.equal(first.status, 201, JSON.stringify(first.body));
      const second = await evict(rig, b.metadata.name);
      assert.equal(second.status, 429, JSON.stringify(second.body));
      assert.equal(second.body.reason, "TooManyRequests");
      assert.ok(
        second.body.details?.causes?.some((c) => c.reason === "DisruptionBudget"),
        JSON.stringify(second.body),
      );
      const pods = await vgatePods(rig);
      assert.ok(
        pods.some((p) => p.metadata.name === b.metadata.name && isReady(p)),
        "the second pod stays",
      );
      assert.ok(pods.filter(isReady).length < 2, "the first's replacement is not ready yet");
    });
  },
);
