// Faults a real kube-apiserver cannot produce on demand, from the fault proxy between vgate and the
// shared cluster's API server: a SubjectAccessReview (blockOwnerDeletion) or the GET of the
// generateName check answered 500 or slower than vgate's admission deadline, and a status PATCH of
// lastActivity answered 500 or slowly. Under a steady rate of requests: every affected admission is
// denied (fail closed) with a message naming the cause, none answers past the deadline, the next
// request after the fault is decided again, and no lastActivity update is lost or blocks a login.

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { DEFAULT_OPERATIONS } from "../../webhook/src/cli/serve-options.js";
import { sharedCluster, type VgateCluster } from "../support/cluster.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../support/kube/binaries.js";
import { kubeStatus, type RecordedRequest } from "../support/kube/fault-proxy.js";
import { until } from "../support/until.js";
import { startVgateOnCluster, type VgateOnCluster } from "../webhook/server/vgate-on-cluster.js";
import {
  ADMISSION_TIMEOUT_MS,
  ask,
  DEADLINE_MARGIN_MS,
  figures,
  reviewsFor,
  steadyLoad,
  type Answer,
} from "./fault-rig.js";

const DOMAIN = "faults-slow-api.test";
const SAR_PATH = "/apis/authorization.k8s.io/v1/subjectaccessreviews";
/** Longer than the API client's own 5 s deadline: as good as a hang. */
const HANG_MS = 6_000;
/** How long each fault lasts under load. */
const FAULT_MS = 2_000;
const FLUSH_MS = 300;
const ROUNDS_PER_SECOND = 5;

(HAVE_KUBE ? describe : describe.skip)(
  `faults: a slow or failing API server behind vgate${KUBE_SKIP_REASON}`,
  function () {
    this.timeout(60_000);
    let cluster: VgateCluster;
    let v: VgateOnCluster;
    let reviews: ReturnType<typeof reviewsFor>;
    const run = randomBytes(3).toString("hex");
    const stored: string[] = [];
    /** Injections stay in the proxy; each is live only while its test's flag says so. */
    const live = { sar: false, keyGet: false, lists: false, status: 0 };

    before(async () => {
      cluster = await sharedCluster();
      v = await startVgateOnCluster(cluster, DOMAIN, {
        operations: { ...DEFAULT_OPERATIONS, admissionTimeoutMs: ADMISSION_TIMEOUT_MS },
        activityFlushIntervalMs: FLUSH_MS,
      });
      reviews = reviewsFor(v.group, v.storageGroup, DOMAIN);
      const failure = { status: 500, body: kubeStatus(500, "InternalError", "injected fault") };
      const always = Number.MAX_SAFE_INTEGER;
      v.proxy.inject((q) => live.sar && isSar(q), failure, always);
      v.proxy.inject((q) => live.keyGet && isKeyGet(q), failure, always);
      v.proxy.inject((q) => live.lists && isKeyList(q), failure, always);
      v.proxy.inject(
        (q) => live.status > 0 && isStatusPatch(q) && live.status-- > 0,
        failure,
        always,
      );
    });

    afterEach(() => {
      Object.assign(live, { sar: false, keyGet: false, lists: false, status: 0 });
      v?.proxy.setDelay(0);
    });

    after(async () => {
      for (const name of stored) await cluster.admin.request("DELETE", keysPath(name));
      await v?.stop();
    });

    const keysPath = (name = "") => `/apis/${v.group}/v1/ownedaccesskeys${name && `/${name}`}`;
    const isSar = (q: RecordedRequest) => q.method === "POST" && q.path === SAR_PATH;
    const isKeyGet = (q: RecordedRequest) =>
      q.method === "GET" && q.path.startsWith(`${keysPath()}/`);
    const isKeyList = (q: RecordedRequest) =>
      q.method === "GET" && q.path === keysPath() && !/[?&]watch=/.test(q.query);
    const isStatusPatch = (q: RecordedRequest) =>
      q.method === "PATCH" && q.path.endsWith("/status");
    const blockOwner = () =>
      ask(v, "blockOwner", "/validate/ownedaccesskeys", reviews.blockOwner());
    const generateName = () =>
      ask(v, "generateName", "/mutate/ownedaccesskeys", reviews.generateName());
    /** A SubjectAccessReview for key `name`: no opinion once vgate knows the key. */
    const authorize = (name: string, uid: string) =>
      ask(v, "accessReview", "/authorize", reviews.accessReview(name, uid));
    const login = (token: string) =>
      ask(v, "tokenReview", "/authenticate", reviews.tokenReview(token));

    /** `send` at a steady rate for FAULT_MS; every answer. */
    async function underLoad(send: () => Promise<Answer>): Promise<Answer[]> {
      const load = steadyLoad(ROUNDS_PER_SECOND, [send]);
      await new Promise((r) => setTimeout(r, FAULT_MS));
      return load.stop();
    }

    /** None allowed, each an AdmissionReview denial with `code` whose message matches, in time. */
    function assertFailClosed(answers: Answer[], code: number, message: RegExp): void {
      assert.ok(
        answers.length >= (FAULT_MS / 1000) * ROUNDS_PER_SECOND - 2,
        `${answers.length} sent`,
      );
      for (const a of answers) {
        assert.equal(a.http, 200, JSON.stringify(a));
        assert.equal(a.allowed, false, `allowed while the API failed: ${JSON.stringify(a)}`);
        assert.equal(a.code, code, JSON.stringify(a));
        assert.match(a.message ?? "", message);
      }
      const f = figures(answers);
      assert.ok(
        f.maxMs < ADMISSION_TIMEOUT_MS + DEADLINE_MARGIN_MS,
        `answered after ${f.maxMs} ms against a ${ADMISSION_TIMEOUT_MS} ms deadline`,
      );
      console.log(`      ${f.count} denied, 0 allowed; max ${f.maxMs} ms, p99 ${f.p99Ms} ms`);
    }

    /** Stores a key and waits until vgate knows it, without a login (which would be recorded). */
    async function storeKey(): Promise<{ name: string; token: string }> {
      const name = `k-${run}-${stored.length}`;
      const token = randomBytes(32).toString("base64url");
      const res = await cluster.admin.request("POST", keysPath(), {
        apiVersion: `${v.group}/v1`,
        kind: "OwnedAccessKey",
        metadata: { name },
        spec: { user: "alice", key: token },
      });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      stored.push(name);
      const uid = (res.body as { metadata: { uid: string } }).metadata.uid;
      await until(
        async () => (await authorize(name, uid)).reason === undefined,
        `vgate knows ${name}`,
      );
      return { name, token };
    }

    const lastActivity = async (name: string): Promise<string> =>
      (
        (await cluster.admin.request("GET", keysPath(name))).body as {
          status?: { lastActivity?: string };
        }
      ).status?.lastActivity ?? "";

    /** vgate's access key cache is synced while its watch of ownedaccesskeys is open. */
    const cacheWatching = () => v.proxy.openWatches().some((q) => q.path === keysPath());

    it("allows both API-dependent admissions while the API server is healthy (the baseline)", async () => {
      for (const a of [await blockOwner(), await generateName()]) {
        assert.equal(a.allowed, true, JSON.stringify(a));
      }
    });

    describe("SubjectAccessReview (blockOwnerDeletion)", () => {
      it("answered 500: denied 503, naming the check and the answer; decided again once it clears", async () => {
        assert.equal((await blockOwner()).allowed, true, "discovery cached");
        live.sar = true;
        const mark = v.proxy.requests.length;
        assertFailClosed(
          await underLoad(blockOwner),
          503,
          /^cannot check whether "root" may delete users\.storage\.\S+ "alice": API server answered 500 InternalError: injected fault$/,
        );
        assert.ok(v.proxy.requests.slice(mark).some(isSar), "vgate asked and got the 500");
        live.sar = false;
        const next = await blockOwner();
        assert.equal(next.allowed, true, `the next request is decided: ${JSON.stringify(next)}`);
      });

      it("slower than the deadline: denied 504 Timeout at the deadline, never later; then decided again", async () => {
        // Discovery is cached, as in the steady state: a lookup begun while the API is slow is
        // shared by every request until it times out (5 s), the first request after too.
        assert.equal((await blockOwner()).allowed, true, "discovery cached");
        v.proxy.setDelay(HANG_MS);
        const answers = await underLoad(blockOwner);
        assertFailClosed(answers, 504, /^the admission decision took longer than 2s$/);
        for (const a of answers) assert.ok(a.ms >= ADMISSION_TIMEOUT_MS - 50, `${a.ms} ms`);
        v.proxy.setDelay(0);
        const next = await blockOwner();
        assert.equal(next.allowed, true, JSON.stringify(next));
      });
    });

    describe("status.lastActivity", () => {
      it("a PATCH answered 500 is retried until written: the update is not lost", async () => {
        const key = await storeKey();
        const mark = v.proxy.requests.length;
        live.status = 3;
        const from = Date.now();
        assert.equal((await login(key.token)).authenticated, true);
        const to = Date.now();
        let written = "";
        await until(async () => (written = await lastActivity(key.name)) !== "", "written");
        const attempts = v.proxy.requests
          .slice(mark)
          .filter((q) => isStatusPatch(q) && q.path.endsWith(`/${key.name}/status`));
        assert.equal(attempts.length, 4, "three answered 500, the fourth wrote it");
        const writtenMs = Date.parse(written);
        assert.ok(writtenMs >= Math.floor(from / 1000) * 1000 && writtenMs <= to, written);
        const warned = v.logLines.filter(
          (l) => l.includes("cannot record the last activity") && l.includes(key.name),
        );
        assert.equal(warned.length, 3, "each failed write is logged");
      });

      it("a slow PATCH never holds up a login, and is written", async () => {
        const key = await storeKey();
        const other = await storeKey();
        v.proxy.setDelay(2_000);
        const mark = v.proxy.requests.length;
        assert.equal((await login(key.token)).authenticated, true);
        await until(
          () => v.proxy.requests.slice(mark).some(isStatusPatch),
          "the PATCH is on its way",
          5_000,
        );
        // Logins while the write waits on the API server: answered from memory at once.
        const answers: Answer[] = [];
        for (let i = 0; i < 10; i++) answers.push(await login(other.token));
        const pendingPatch = v.proxy.requests.slice(mark).find(isStatusPatch)!;
        assert.ok(Date.now() < pendingPatch.at + 2_000, "the logins ran while the PATCH waited");
        for (const a of answers) assert.equal(a.authenticated, true);
        const f = figures(answers);
        assert.ok(f.maxMs < 1_000, `a login took ${f.maxMs} ms while a PATCH was slow`);
        console.log(`      logins during a slow PATCH: max ${f.maxMs} ms`);
        v.proxy.setDelay(0);
        await until(async () => (await lastActivity(key.name)) !== "", "written");
      });
    });
    describe("generateName (a GET per candidate while the key cache is not synced)", () => {
      /** The cache cannot relist while LISTs fail; its watch is ended as a restart would. */
      async function unsyncCache(): Promise<void> {
        assert.ok(await waitFor(cacheWatching), "the access key cache is synced first");
        const mark = v.proxy.requests.length;
        live.lists = true;
        v.proxy.endWatches();
        await until(
          () => v.proxy.requests.slice(mark).some(isKeyList),
          "vgate relists (and gets the 500)",
        );
      }

      it("answered 500: denied 503 naming the check; slower than the deadline: 504 at the deadline; then a GET decides again", async () => {
        await unsyncCache();
        live.keyGet = true;
        const mark = v.proxy.requests.length;
        assertFailClosed(
          await underLoad(generateName),
          503,
          /^cannot check whether ownedaccesskeys\.\S+ "fault-\w{5}" exists: API server answered 500 InternalError: injected fault$/,
        );
        assert.ok(v.proxy.requests.slice(mark).some(isKeyGet), "the GETs were asked");
        live.keyGet = false;
        v.proxy.setDelay(HANG_MS);
        assertFailClosed(
          await underLoad(generateName),
          504,
          /^the admission decision took longer than 2s$/,
        );
        v.proxy.setDelay(0);
        const again = v.proxy.requests.length;
        const next = await generateName();
        assert.equal(next.allowed, true, JSON.stringify(next));
        assert.ok(v.proxy.requests.slice(again).some(isKeyGet), "decided by a GET, not the cache");
        // The cache relists by itself after its backoff (apiserver-restart.test.ts shows that).
      });
    });
  },
);

async function waitFor(check: () => boolean, timeoutMs = 30_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}
