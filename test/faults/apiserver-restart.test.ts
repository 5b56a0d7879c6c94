// Faults: the real kube-apiserver of a private test rig stopped and started again (etcd keeps its
// data; same port, certificates and flags), while vgate, in this process with a service-account
// kubeconfig that points straight at it, is driven over HTTPS at a steady rate. Checks that need the
// API server (generateName, blockOwnerDeletion) are denied, fail closed, with a message that names
// the cause and long before any hang; what needs no API server still answers; after the restart
// vgate recovers by itself, its watch cache catches up, and an activity recorded before the outage
// is written after it.

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { DEFAULT_OPERATIONS } from "../../webhook/src/cli/serve-options.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../support/kube/binaries.js";
import { httpsRequest } from "../support/https-client.js";
import { until } from "../support/until.js";
import {
  ADMISSION_TIMEOUT_MS,
  ask,
  DEADLINE_MARGIN_MS,
  figures,
  reviewsFor,
  startPrivateVgate,
  steadyLoad,
  type Answer,
  type PrivateVgate,
} from "./fault-rig.js";

const DOMAIN = "faults-restart.test";
/** How often vgate flushes status.lastActivity here (10 s in production). */
const FLUSH_MS = 5_000;
/** How long the API server stays down, once it is gone. */
const OUTAGE_MS = 4_000;
const API_DEPENDENT = new Set(["generateName", "blockOwner"]);
/** Why vgate got no answer: the port is closed (or, in a race with the stop, the socket was). */
const UNREACHABLE = String.raw`API server unreachable: (connect ECONNREFUSED 127\.0\.0\.1:\d+|socket hang up|read ECONNRESET)`;
/** The watch cache relists with a backoff capped at 10 s (+20% jitter) after an outage. */
const RECOVERY_BOUND_MS = 20_000;

interface Key {
  name: string;
  token: string;
  uid: string;
}

(HAVE_KUBE ? describe : describe.skip)(
  `faults: the real kube-apiserver stopped and restarted under load${KUBE_SKIP_REASON}`,
  function () {
    this.timeout(120_000);
    let rig: PrivateVgate;
    let reviews: ReturnType<typeof reviewsFor>;
    const run = randomBytes(3).toString("hex");
    let known: Key;
    /** Logged in just before the outage; its activity can only be written after it. */
    let lastBefore: { key: Key; from: number; to: number };
    let outage: Answer[] = [];
    let restartedAt = 0;

    before(async () => {
      rig = await startPrivateVgate(DOMAIN, {
        operations: {
          ...DEFAULT_OPERATIONS,
          shutdownDelayMs: 0,
          admissionTimeoutMs: ADMISSION_TIMEOUT_MS,
        },
        activityFlushIntervalMs: FLUSH_MS,
      });
      reviews = reviewsFor(rig.group, rig.storageGroup, DOMAIN);
      known = await storeKey("known");
    });

    after(async () => {
      await rig?.stop();
    });

    const send = (kind: string, path: string, body: () => unknown) => () =>
      ask(rig, kind, path, body());
    const round = () => [
      send("generateName", "/mutate/ownedaccesskeys", reviews.generateName),
      send("blockOwner", "/validate/ownedaccesskeys", () => reviews.blockOwner()),
      send("plain", "/validate/ownedaccesskeys", reviews.plain),
      send("newKey", "/validate/ownedaccesskeys", reviews.newKey),
      send("tokenReview", "/authenticate", () => reviews.tokenReview(known.token)),
      send("accessReview", "/authorize", () => reviews.accessReview(known.name, known.uid)),
      async (): Promise<Answer> => {
        const sentAt = Date.now();
        const res = await httpsRequest(`${rig.url}/healthz`, { ca: rig.ca }).catch(() => null);
        return { kind: "healthz", sentAt, ms: Date.now() - sentAt, http: res?.status ?? 0 };
      },
      async (): Promise<Answer> => {
        const sentAt = Date.now();
        const res = await httpsRequest(`${rig.url}/readyz`, { ca: rig.ca }).catch(() => null);
        return { kind: "readyz", sentAt, ms: Date.now() - sentAt, http: res?.status ?? 0 };
      },
    ];

    /** Stores a key and waits until vgate knows it. */
    async function storeKey(prefix: string): Promise<Key> {
      const name = `${prefix}-${run}`;
      const token = randomBytes(32).toString("base64url");
      let uid = "";
      // After a restart the admin's kept-alive connection is gone: the first try may fail.
      await until(async () => {
        const res = await rig.admin
          .request<{ metadata?: { uid?: string } }>("POST", keysPath(), {
            apiVersion: `${rig.group}/v1`,
            kind: "OwnedAccessKey",
            metadata: { name },
            spec: { user: "alice", key: token },
          })
          .catch(() => null);
        uid = res?.body.metadata?.uid ?? uid;
        return res?.status === 201 || res?.status === 409;
      }, `store ${name}`);
      if (!uid)
        uid = (await rig.admin.request<{ metadata: { uid: string } }>("GET", keysPath(name))).body
          .metadata.uid;
      const key = { name, token, uid };
      // Known once a SubjectAccessReview about it has no opinion; a login would be recorded.
      await until(
        async () =>
          (await ask(rig, "accessReview", "/authorize", reviews.accessReview(name, uid))).reason ===
          undefined,
        `vgate knows ${name}`,
      );
      return key;
    }

    const keysPath = (name = "") => `/apis/${rig.group}/v1/ownedaccesskeys${name && `/${name}`}`;
    const login = (key: Key) =>
      ask(rig, "tokenReview", "/authenticate", reviews.tokenReview(key.token));
    const lastActivity = async (name: string): Promise<string> => {
      const res = await rig.admin
        .request<{ status?: { lastActivity?: string } }>("GET", keysPath(name))
        .catch(() => null);
      return res?.body.status?.lastActivity ?? "";
    };

    it("before the outage, every kind of request is answered and allowed", async () => {
      for (const send of round()) {
        const a = await send();
        assert.equal(a.http, 200, JSON.stringify(a));
        if (a.kind === "accessReview") {
          assert.deepEqual(
            [a.allowed, a.denied, a.reason],
            [false, false, undefined],
            "no opinion",
          );
        } else if (a.allowed !== undefined) {
          assert.equal(a.allowed, true, JSON.stringify(a));
        }
        if (a.kind === "tokenReview") assert.equal(a.authenticated, true, JSON.stringify(a));
      }
    });

    it("while it is down: API-dependent admissions are denied (503, fail closed) by the deadline; the rest answers", async () => {
      // A login right after a flush, then the outage: its activity waits in vgate's queue and the
      // first write of it fails (the next flush comes FLUSH_MS later, the stop takes less).
      const tick = await storeKey("tick");
      const before = await storeKey("before");
      assert.equal((await login(tick)).authenticated, true);
      await until(async () => (await lastActivity(tick.name)) !== "", "a flush", FLUSH_MS * 3);
      const loginAt = Date.now();
      assert.equal((await login(before)).authenticated, true);
      lastBefore = { key: before, from: loginAt, to: Date.now() };
      const stopping = Date.now();
      await rig.plane.stopApiServer();
      const downAt = Date.now();
      console.log(`      kube-apiserver stopped in ${downAt - stopping} ms`);
      const load = steadyLoad(5, round());
      await sleep(OUTAGE_MS);
      outage = (await load.stop()).filter((a) => a.sentAt >= downAt);
      restartedAt = Date.now();
      await rig.plane.startApiServer();
      console.log(
        `      kube-apiserver ready again ${Date.now() - restartedAt} ms after its start`,
      );

      const dependent = outage.filter((a) => API_DEPENDENT.has(a.kind));
      assert.ok(dependent.length >= 30, `${dependent.length} API-dependent admissions sent`);
      const allowed = dependent.filter((a) => a.allowed !== false);
      assert.deepEqual(allowed, [], "no API-dependent admission is allowed while the API is down");
      for (const a of dependent) {
        assert.equal(a.http, 200, `an AdmissionReview answer, not an error: ${JSON.stringify(a)}`);
        assert.equal(a.code, 503, JSON.stringify(a));
        assert.equal(a.reason, "ServiceUnavailable", JSON.stringify(a));
        const check =
          a.kind === "generateName"
            ? String.raw`check whether ownedaccesskeys\.\S+ "fault-\w{5}" exists`
            : String.raw`(check whether "root" may delete users\.\S+ "alice"|map \S+ kinds to resources \(discovery\))`;
        assert.match(a.message ?? "", new RegExp(`^cannot ${check}: ${UNREACHABLE}$`));
      }
      const all = outage.filter((a) => a.kind !== "readyz");
      const slowest = figures(all);
      assert.ok(
        slowest.maxMs < ADMISSION_TIMEOUT_MS + DEADLINE_MARGIN_MS,
        `an answer took ${slowest.maxMs} ms (deadline ${ADMISSION_TIMEOUT_MS} ms)`,
      );
      for (const a of outage.filter((x) => x.kind === "plain")) {
        assert.equal(a.allowed, true, `decided without the API server: ${JSON.stringify(a)}`);
      }
      for (const a of outage.filter((x) => x.kind === "healthz")) assert.equal(a.http, 200);
      // The key cache cannot be trusted once its watch ended: logins, key-scoped requests and
      // writes that set a key fail closed with 503, as before the first sync (kube-apiserver's
      // token cache keeps recent logins working).
      for (const a of outage.filter((x) => x.kind === "tokenReview")) {
        assert.deepEqual([a.http, a.code], [503, 503], JSON.stringify(a));
        assert.equal(a.message, "access keys are not loaded yet; try again");
      }
      for (const a of outage.filter((x) => x.kind === "accessReview")) {
        assert.deepEqual([a.http, a.code], [503, 503], JSON.stringify(a));
        assert.equal(a.message, "access keys are not loaded yet");
      }
      for (const a of outage.filter((x) => x.kind === "newKey")) {
        assert.deepEqual([a.http, a.allowed, a.code], [200, false, 503], JSON.stringify(a));
        assert.match(a.message ?? "", /^the access keys are not loaded yet, so vgate cannot check/);
      }
      const ready = outage.filter((a) => a.kind === "readyz");
      console.log(
        `      outage of ${restartedAt - downAt} ms: ${dependent.length} API-dependent admissions, ` +
          `${allowed.length} allowed; ${all.length} reviews in all, max ${slowest.maxMs} ms, ` +
          `p99 ${slowest.p99Ms} ms; /readyz ${[...new Set(ready.map((a) => a.http))].join("/")}`,
      );
    });

    it("after the restart: admissions pass again and the watch cache catches up, within bounds", async () => {
      assert.ok(restartedAt > 0, "runs after the outage");
      const recovered = async (): Promise<boolean> => {
        const answers = await Promise.all(round().map((s) => s()));
        return answers.every(
          (a) =>
            a.http === 200 &&
            (a.kind === "accessReview" || a.allowed !== false) &&
            a.authenticated !== false,
        );
      };
      await until(recovered, "every kind of request answered as before", RECOVERY_BOUND_MS);
      console.log(`      recovered ${Date.now() - restartedAt} ms after kube-apiserver started`);
      // A key made after the restart logs in; one disabled after it no longer does.
      const fresh = await storeKey("fresh");
      assert.equal((await login(fresh)).authenticated, true);
      const res = await rig.admin.request(
        "PATCH",
        keysPath(known.name),
        { spec: { disabled: true } },
        {
          "Content-Type": "application/merge-patch+json",
        },
      );
      assert.equal(res.status, 200, JSON.stringify(res.body));
      await until(
        async () => (await login(known)).error === "access key disabled",
        "vgate sees the key disabled",
      );
    });

    it("no lost update: the login from before the outage is written to status.lastActivity after it", async () => {
      const { key, from, to } = lastBefore;
      const failed = rig.logLines.some(
        (l) => l.includes("cannot record the last activity") && l.includes(key.name),
      );
      assert.ok(failed, "the write failed during the outage (else this proves nothing)");
      let written = "";
      await until(async () => (written = await lastActivity(key.name)) !== "", "written", 30_000);
      console.log(`      lastActivity written ${Date.now() - restartedAt} ms after the restart`);
      // metav1.Time has whole seconds: the login's second.
      const writtenMs = Date.parse(written);
      assert.ok(
        writtenMs >= Math.floor(from / 1000) * 1000 && writtenMs <= to,
        `lastActivity ${written} is the time of the login (${new Date(from).toISOString()})`,
      );
    });
  },
);

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
