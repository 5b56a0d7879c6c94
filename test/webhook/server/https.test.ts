// The webhook over real HTTPS: AdmissionReview JSON posted to a running `vgate serve`, wired to a
// real kube-apiserver (the shared test cluster) through a service-account kubeconfig, exactly as in
// production. vgate reaches the API server through a fault proxy, so tests can take the server
// down and count the SubjectAccessReviews and GETs vgate sends; who may delete an owner is decided
// by real RBAC. vgate serves its own group domain (see vgate-on-cluster.ts), so the AdmissionReviews
// here name management.<that domain>.

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { connect } from "node:tls";
import { sharedCluster } from "../../support/cluster.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../../support/kube/binaries.js";
import { kubeStatus, type RecordedRequest } from "../../support/kube/fault-proxy.js";
import type { KubeObject, KubeTestClient } from "../../support/kube/kube-client.js";
import { httpsRequest, postJson, type HttpResponse } from "../../support/https-client.js";
import { accessKey, review, type ReviewInput } from "../../support/reviews.js";
import { clusterRole, clusterRoleBinding, mayDo, waitForAccess } from "../../support/kube/rbac.js";
import { startVgateOnCluster, type VgateOnCluster } from "./vgate-on-cluster.js";

type Json = Record<string, unknown>;
const PLANTED_KEY = "planted-4q6bYp0kVvQy8t1Jm2cZrW3xN5sD7fGhK9";
const ADMIN = { groups: ["system:masters", "system:authenticated"], username: "root" };
/** This file's keyspace: no webhook of the shared cluster watches it. */
const DOMAIN = "https-test.example.com";
const GROUP = `management.${DOMAIN}`;
const GROUP_RE = GROUP.replace(/\./g, "\\.");
const KEYS_PATH = `/apis/${GROUP}/v1/ownedaccesskeys`;
const SAR_PATH = "/apis/authorization.k8s.io/v1/subjectaccessreviews";
/** Suffix for the names this run writes into the shared cluster. */
const ID = randomBytes(3).toString("hex");

interface Review {
  response: {
    uid: string;
    allowed: boolean;
    status?: { code: number; reason: string; message: string; details?: Json };
    patch?: string;
    patchType?: string;
    warnings?: string[];
  };
}

const key = (name: string, spec: Json = {}, metadata: Json = {}): Json =>
  accessKey(name, spec, metadata, GROUP);
/** An AdmissionReview about an OwnedAccessKey of GROUP (by default the key `name` or "k1"). */
const rev = (input: ReviewInput): Json =>
  review({
    ...input,
    group: GROUP,
    object: input.object === undefined ? key(input.name ?? "k1") : input.object,
  });

(HAVE_KUBE ? describe : describe.skip)(`vgate serve over HTTPS${KUBE_SKIP_REASON}`, function () {
  this.timeout(60_000);
  let env: VgateOnCluster;
  let admin: KubeTestClient;
  let url: string;
  let ca: string;
  /** Objects a test wrote into the cluster; deleted after it. */
  const created: KubeObject[] = [];

  before(async () => {
    const cluster = await sharedCluster();
    admin = cluster.admin;
    env = await startVgateOnCluster(cluster, DOMAIN);
    url = env.url;
    ca = env.ca;
  });

  after(async () => {
    await env?.stop();
  });

  afterEach(async () => {
    env?.proxy.setDown(false);
    for (const obj of created.splice(0).reverse()) await admin.delete(obj, { force: true });
    // After an outage, the next test starts once vgate is ready again: discovery answers and the
    // key cache has listed (a new key is refused with 503 until then).
    const ready = await waitFor(
      async () => (await httpsRequest(`${url}/readyz`, { ca })).status === 200,
      30_000,
    );
    assert.ok(ready, "vgate ready again after the test");
  });

  const post = (path: string, body: unknown): Promise<HttpResponse> =>
    postJson(url + path, body, ca);
  const validate = async (body: Json): Promise<Review["response"]> => {
    const res = await post("/validate/ownedaccesskeys", body);
    assert.equal(res.status, 200, res.text);
    const r = res.json<Review>().response;
    assert.equal(r.uid, (body.request as Json).uid, "the response echoes the request uid");
    return r;
  };
  const mutate = async (body: Json): Promise<Review["response"]> => {
    const res = await post("/mutate/ownedaccesskeys", body);
    assert.equal(res.status, 200, res.text);
    const r = res.json<Review>().response;
    assert.equal(r.uid, (body.request as Json).uid);
    return r;
  };
  const patchOf = (r: Review["response"]): { op: string; path: string; value?: unknown }[] =>
    JSON.parse(Buffer.from(r.patch!, "base64").toString("utf8"));
  /** What vgate has sent the API server since `mark` (an index into proxy.requests). */
  const sentSince = (mark: number, pick: (q: RecordedRequest) => boolean): RecordedRequest[] =>
    env.proxy.requests.slice(mark).filter(pick);
  const isSar = (q: RecordedRequest) => q.method === "POST" && q.path === SAR_PATH;
  const isKeyGet = (q: RecordedRequest) => q.method === "GET" && q.path.startsWith(`${KEYS_PATH}/`);
  /** vgate's access key cache is synced while its watch of ownedaccesskeys is open. */
  const cacheWatching = () => env.proxy.openWatches().some((q) => q.path === KEYS_PATH);
  /**
   * vgate notices an outage a moment after it begins (its watch must end first): asks until the
   * answer is 503 and returns it.
   */
  const answerOnceDown = async (ask: () => Promise<Review["response"]>) => {
    let last: Review["response"] | undefined;
    const seen = await waitFor(async () => (last = await ask()).status?.code === 503, 20_000);
    assert.ok(seen, `never 503 while the API server was down: ${JSON.stringify(last)}`);
    return last!;
  };

  describe("health, readiness and metrics", () => {
    it("answers /healthz", async () => {
      const res = await httpsRequest(`${url}/healthz`, { ca });
      assert.equal(res.status, 200);
      assert.equal(res.text, "ok");
    });

    it("is ready only while the API server answers discovery and the keys are loaded", async () => {
      assert.equal((await httpsRequest(`${url}/readyz`, { ca })).status, 200);
      const asked = env.proxy.requests.length;
      env.proxy.setDown(true);
      try {
        // The key cache's watch ends at once; the positive discovery answer is cached briefly, then
        // discovery is asked again and fails.
        const readyz = () => httpsRequest(`${url}/readyz`, { ca });
        const unloaded = await waitFor(
          async () => (await readyz()).text === "not ready: the access keys are not loaded yet",
          20_000,
        );
        assert.ok(
          unloaded,
          "readyz never said the keys are not loaded while the API server was down",
        );
        const down = await waitFor(
          async () =>
            (await readyz()).text === "not ready: the API server has not answered discovery",
          20_000,
        );
        assert.ok(down, "readyz never turned 503 for discovery while the API server was down");
        assert.ok(
          sentSince(asked, (q) => q.method === "GET" && q.path === "/api").length > 0,
          "readiness asked the API server's discovery",
        );
      } finally {
        env.proxy.setDown(false);
      }
      // Back once discovery answers and the key cache has listed again (its backoff is at most
      // 10 s and jitter).
      const up = await waitFor(
        async () => (await httpsRequest(`${url}/readyz`, { ca })).status === 200,
        30_000,
      );
      assert.ok(up, "readyz did not recover with the API server");
    });

    it("counts requests by route, operation and allowed, with latency and in-flight", async () => {
      await validate(rev({ ...ADMIN, name: "metrics-probe" }));
      const res = await httpsRequest(`${url}/metrics`, { ca });
      assert.equal(res.status, 200);
      assert.match(
        res.text,
        /vgate_admission_requests_total\{route="validate\/ownedaccesskeys",operation="CREATE",allowed="true"\} \d+/,
      );
      assert.match(
        res.text,
        /vgate_admission_request_duration_seconds_bucket\{le="0.005",route="validate\/ownedaccesskeys",operation="CREATE",allowed="true"\}/,
      );
      assert.match(
        res.text,
        /vgate_admission_requests_in_flight\{route="validate\/ownedaccesskeys"\} 0/,
      );
    });
  });

  describe("validate", () => {
    it("allows a valid key and echoes the uid", async () => {
      const r = await validate(rev({ name: "ok-key" }));
      assert.equal(r.allowed, true);
      assert.equal(r.status, undefined);
    });

    it("answers AdmissionReviews as JSON in UTF-8 with an exact Content-Length", async () => {
      const res = await post("/validate/ownedaccesskeys", rev({ name: "ünïcode-dïsplay" }));
      assert.equal(res.headers["content-type"], "application/json; charset=utf-8");
      assert.equal(Number(res.headers["content-length"]), Buffer.byteLength(res.text));
    });

    it("denies two controller ownerReferences with 422 Invalid and kube's message", async () => {
      const obj = key(
        "two",
        {},
        {
          ownerReferences: [
            {
              apiVersion: `${env.storageGroup}/v1`,
              kind: "User",
              name: "alice",
              uid: "u1",
              controller: true,
            },
            {
              apiVersion: `${env.storageGroup}/v1`,
              kind: "Team",
              name: "t",
              uid: "u2",
              controller: true,
            },
          ],
        },
      );
      const r = await validate(rev({ ...ADMIN, object: obj }));
      assert.equal(r.allowed, false);
      assert.equal(r.status?.code, 422);
      assert.equal(r.status?.reason, "Invalid");
      assert.match(
        r.status!.message,
        new RegExp(
          `^OwnedAccessKey\\.${GROUP_RE} "two" is invalid: metadata\\.ownerReferences: Invalid value: .*Only one reference can have Controller set to true`,
        ),
      );
      const causes = r.status?.details?.causes as {
        reason: string;
        field: string;
        message: string;
      }[];
      assert.deepEqual(
        causes.map((c) => [c.reason, c.field]),
        [["FieldValueInvalid", "metadata.ownerReferences"]],
      );
      assert.equal(r.status?.details?.kind, "OwnedAccessKey");
      assert.equal(r.status?.details?.group, GROUP);
    });

    it("rejects another apiVersion with a clear message", async () => {
      const obj = { ...key("v2"), apiVersion: `${GROUP}/v2` };
      const r = await validate(rev({ ...ADMIN, object: obj }));
      assert.equal(r.status?.code, 422);
      assert.match(
        r.status!.message,
        new RegExp(
          `apiVersion: Unsupported value: "${GROUP_RE}/v2": supported values: "${GROUP_RE}/v1"`,
        ),
      );
    });

    it("warns about deprecated fields and names their replacement", async () => {
      const obj = key("old", {
        allowLoftCli: true,
        rules: [{ verbs: ["get"] }],
        parent: "p",
      });
      const r = await validate(rev({ ...ADMIN, object: obj }));
      assert.equal(r.allowed, true);
      const warnings = r.warnings ?? [];
      assert.ok(
        warnings.some((w) => /spec\.rules/.test(w) && /scope/.test(w)),
        warnings.join("\n"),
      );
      assert.ok(
        warnings.some((w) => /spec\.allowLoftCli/.test(w) && /loft-cli/.test(w)),
        warnings.join("\n"),
      );
      assert.ok(
        warnings.some((w) => /spec\.parent/.test(w)),
        warnings.join("\n"),
      );
    });

    it("denies a non-admin creating a key for someone else with 403", async () => {
      const r = await validate(rev({ username: "bob", object: key("bobs", { user: "alice" }) }));
      assert.equal(r.status?.code, 403);
      assert.equal(r.status?.reason, "Forbidden");
      assert.match(
        r.status!.message,
        new RegExp(`^ownedaccesskeys\\.${GROUP_RE} "bobs" is forbidden: `),
      );
    });

    it("denies deleting another user's key and allows deleting your own", async () => {
      const theirs = key("theirs", { user: "alice" });
      const denied = await validate(
        rev({
          operation: "DELETE",
          username: "bob",
          object: null,
          oldObject: theirs,
          name: "theirs",
        }),
      );
      assert.equal(denied.status?.code, 403);
      const mine = await validate(
        rev({
          operation: "DELETE",
          username: "alice",
          object: null,
          oldObject: theirs,
          name: "theirs",
        }),
      );
      assert.equal(mine.allowed, true);
    });

    it("rejects a deletionTimestamp moved later with 422", async () => {
      const old = key(
        "del",
        {},
        {
          uid: "x",
          resourceVersion: "5",
          creationTimestamp: "2026-01-01T00:00:00Z",
          deletionTimestamp: "2026-02-01T00:00:00Z",
          deletionGracePeriodSeconds: 0,
          finalizers: ["example.com/f"],
        },
      );
      const later = structuredClone(old);
      (later.metadata as Json).deletionTimestamp = "2026-03-01T00:00:00Z";
      const r = await validate(
        rev({ ...ADMIN, operation: "UPDATE", object: later, oldObject: old }),
      );
      assert.equal(r.status?.code, 422);
      assert.match(r.status!.message, /metadata\.deletionTimestamp/);
      const earlier = structuredClone(old);
      (earlier.metadata as Json).deletionTimestamp = "2026-01-15T00:00:00Z";
      assert.equal(
        (await validate(rev({ ...ADMIN, operation: "UPDATE", object: earlier, oldObject: old })))
          .allowed,
        true,
      );
    });

    it("rejects a request for another resource as a misconfiguration", async () => {
      const body = rev({ ...ADMIN });
      ((body.request as Json).resource as Json).resource = "pods";
      const r = await validate(body);
      assert.equal(r.status?.code, 400);
      assert.match(r.status!.message, /check the webhook configuration's rules/);
    });
  });

  describe("blockOwnerDeletion", () => {
    /** The storage User the keys name as their owner. */
    const OWNER = "alice";
    const users = {
      /** may delete the User OWNER and nothing else */
      deleter: `deleter-${ID}`,
      /** may do everything to Users but delete them */
      editor: `editor-${ID}`,
      /** in the group that may delete OWNER */
      member: `member-${ID}`,
      /** has no grant at all */
      nobody: `nobody-${ID}`,
    };
    const deleters = `owner-deleters-${ID}`;
    const owned = (
      name: string,
      user: string,
      block: boolean | undefined,
      ref: { kind?: string; owner?: string } = {},
    ) =>
      key(
        `${name}-${ID}`,
        { user },
        {
          ownerReferences: [
            {
              apiVersion: `${env.storageGroup}/v1`,
              kind: ref.kind ?? "User",
              name: ref.owner ?? OWNER,
              uid: "owner-uid",
              ...(block === undefined ? {} : { blockOwnerDeletion: block }),
            },
          ],
        },
      );
    const deleteUser = (name: string, verb = "delete") => ({
      group: env.storageGroup,
      version: "v1",
      resource: "users",
      name,
      verb,
    });
    /** Real RBAC: `deleter` and the group `deleters` may delete OWNER; `editor` may not. */
    const grantRoles = async () => {
      const grants = [
        clusterRole(`https-test-delete-owner-${ID}`, [
          {
            apiGroups: [env.storageGroup],
            resources: ["users"],
            resourceNames: [OWNER],
            verbs: ["delete"],
          },
        ]),
        clusterRoleBinding(`https-test-delete-owner-${ID}`, `https-test-delete-owner-${ID}`, [
          { apiGroup: "rbac.authorization.k8s.io", kind: "User", name: users.deleter },
          { apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: deleters },
        ]),
        clusterRole(`https-test-edit-users-${ID}`, [
          {
            apiGroups: [env.storageGroup],
            resources: ["users"],
            verbs: ["get", "list", "watch", "create", "update", "patch", "deletecollection"],
          },
        ]),
        clusterRoleBinding(`https-test-edit-users-${ID}`, `https-test-edit-users-${ID}`, [
          { apiGroup: "rbac.authorization.k8s.io", kind: "User", name: users.editor },
        ]),
      ];
      for (const obj of grants) {
        await admin.create(obj);
        created.push(obj);
      }
      await waitForAccess(
        admin,
        { user: users.deleter, resourceAttributes: deleteUser(OWNER) },
        true,
      );
      await waitForAccess(
        admin,
        { user: users.member, groups: [deleters], resourceAttributes: deleteUser(OWNER) },
        true,
      );
      await waitForAccess(
        admin,
        { user: users.editor, resourceAttributes: deleteUser(OWNER, "update") },
        true,
      );
    };

    it("denies setting it without delete permission on the owner: 422 FieldValueForbidden", async () => {
      assert.equal(
        await mayDo(admin, { user: users.nobody, resourceAttributes: deleteUser(OWNER) }),
        false,
      );
      const mark = env.proxy.requests.length;
      const r = await validate(
        rev({ username: users.nobody, object: owned("b1", users.nobody, true) }),
      );
      assert.equal(r.status?.code, 422, JSON.stringify(r.status));
      assert.equal(r.status?.reason, "Invalid");
      assert.match(
        r.status!.message,
        /cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't delete/,
      );
      const cause = (r.status?.details?.causes as Json[])[0]!;
      assert.equal(cause.reason, "FieldValueForbidden");
      assert.equal(cause.field, "metadata.ownerReferences[0].blockOwnerDeletion");
      const asked = sentSince(mark, isSar);
      assert.equal(asked.length, 1, "kube was asked once");
      // The fields RBAC ignores (version, no namespace for a cluster-scoped owner) checked as sent.
      const sar = JSON.parse(asked[0]!.body) as Json;
      assert.equal(sar.kind, "SubjectAccessReview");
      assert.deepEqual(sar.spec, {
        user: users.nobody,
        uid: "u-1",
        groups: ["system:authenticated"],
        extra: {},
        resourceAttributes: deleteUser(OWNER),
      });
    });

    it("allows it when RBAC lets the user delete the owner", async () => {
      await grantRoles();
      const r = await validate(
        rev({ username: users.deleter, object: owned("b2", users.deleter, true) }),
      );
      assert.equal(r.allowed, true, JSON.stringify(r.status));
    });

    it("asks kube whether exactly this user, with these groups, may delete exactly this owner", async () => {
      await grantRoles();
      const decide = async (user: string, owner: string, groups?: string[]) =>
        (
          await validate(
            rev({
              username: user,
              ...(groups ? { groups } : {}),
              object: owned("b6", user, true, { owner }),
            }),
          )
        ).status?.code ?? 200;
      assert.equal(await decide(users.deleter, OWNER), 200, "the granted owner");
      assert.equal(await decide(users.deleter, "bob"), 422, "the name is asked about");
      assert.equal(await decide(users.editor, OWNER), 422, "the verb asked about is delete");
      assert.equal(await decide(users.nobody, OWNER), 422, "the user is asked about");
      assert.equal(
        await decide(users.member, OWNER, ["system:authenticated", deleters]),
        200,
        "the user's groups are asked about",
      );
      assert.equal(await decide(users.member, OWNER), 422, "the groups come from the request");
    });

    it("asks nothing for an unchanged ownerReference on UPDATE", async () => {
      const old = owned("b3", users.nobody, true);
      (old.metadata as Json).resourceVersion = "3";
      const next = structuredClone(old);
      (next.spec as Json).description = "changed";
      const mark = env.proxy.requests.length;
      const r = await validate(
        rev({ username: users.nobody, operation: "UPDATE", object: next, oldObject: old }),
      );
      assert.equal(r.allowed, true, JSON.stringify(r.status));
      assert.equal(sentSince(mark, isSar).length, 0);
      // Setting it on UPDATE is asked about (and denied), so the silence above is not an accident.
      const unblocked = structuredClone(old);
      ((unblocked.metadata as Json).ownerReferences as Json[])[0]!.blockOwnerDeletion = false;
      const set = await validate(
        rev({ username: users.nobody, operation: "UPDATE", object: next, oldObject: unblocked }),
      );
      assert.equal(set.status?.code, 422, JSON.stringify(set.status));
      assert.equal(sentSince(mark, isSar).length, 1);
    });

    it("denies an owner kind discovery does not know", async () => {
      const r = await validate(
        rev({ ...ADMIN, object: owned("b4", "alice", true, { kind: "Gizmo" }) }),
      );
      assert.equal(r.status?.code, 422);
      assert.match(
        r.status!.message,
        new RegExp(
          `cannot find RESTMapping for APIVersion storage\\.${DOMAIN.replace(/\./g, "\\.")}/v1 Kind Gizmo`,
        ),
      );
    });

    it("fails closed with 503 when the API server is down", async () => {
      env.proxy.setDown(true);
      const r = await validate(
        rev({ username: users.nobody, object: owned("b5", users.nobody, true) }),
      );
      assert.equal(r.allowed, false);
      assert.equal(r.status?.code, 503, JSON.stringify(r.status));
    });
  });

  describe("mutate", () => {
    it("fills in the CREATE defaults as a JSONPatch", async () => {
      const obj = {
        apiVersion: `${GROUP}/v1`,
        kind: "OwnedAccessKey",
        metadata: { name: `fresh-${ID}` },
        spec: {},
      };
      const r = await mutate(rev({ username: "carol", object: obj }));
      assert.equal(r.allowed, true, JSON.stringify(r.status));
      assert.equal(r.patchType, "JSONPatch");
      const ops = patchOf(r);
      const byPath = new Map(ops.map((o) => [o.path, o.value]));
      assert.equal(byPath.get("/spec/user"), "carol");
      assert.equal(byPath.get("/spec/type"), "User");
      assert.equal(byPath.get("/spec/displayName"), `fresh-${ID}`);
      assert.match(String(byPath.get("/spec/key")), /^[A-Za-z0-9_-]{43,}$/);
    });

    it("generates a name for generateName, checked against the watch cache", async () => {
      const obj = {
        apiVersion: `${GROUP}/v1`,
        kind: "OwnedAccessKey",
        metadata: { generateName: "ci-" },
        spec: { user: "alice" },
      };
      assert.ok(await waitFor(async () => cacheWatching(), 30_000), "the access key cache syncs");
      const mark = env.proxy.requests.length;
      const r = await mutate(rev({ object: obj, name: "" }));
      const name = patchOf(r).find((o) => o.path === "/metadata/name")?.value as string;
      assert.match(name, /^ci-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
      assert.equal(await admin.get(key(name) as KubeObject), null);
      assert.deepEqual(sentSince(mark, isKeyGet), [], "the synced cache answered without a GET");
    });

    it("does not generate a name the watch cache knows is taken", async () => {
      const name = `cached-taken-${ID}`;
      assert.ok(await waitFor(async () => cacheWatching(), 30_000), "the access key cache syncs");
      const mark = env.proxy.requests.length;
      const r = await mutate(rev({ object: key(name) }));
      assert.equal(r.allowed, true, "not taken yet");
      const stored = key(name) as KubeObject;
      await admin.create(stored);
      created.push(stored);
      // The watch event reaches the cache a moment after the create returns.
      let denied: Review["response"] | undefined;
      await waitFor(async () => {
        const again = await mutate(rev({ object: key(name) }));
        if (again.status?.code === 409) denied = again;
        return denied !== undefined;
      }, 15_000);
      assert.equal(denied?.status?.reason, "AlreadyExists", "the cache learned of the new key");
      assert.equal(denied?.status?.message, `ownedaccesskeys.${GROUP} "${name}" already exists`);
      assert.deepEqual(sentSince(mark, isKeyGet), []);
    });

    it("while the cache is not synced, asks with a GET: 409 for a key that exists", async () => {
      const taken = `taken-${ID}`;
      const stored = key(taken) as KubeObject;
      await admin.create(stored);
      created.push(stored);
      // Real kube sends the watch event a moment after the create returns: until then a synced
      // cache still answers "free" (storage would refuse the duplicate). Wait until vgate knows.
      const known = await waitFor(
        async () => (await mutate(rev({ object: key(taken) }))).status?.code === 409,
        15_000,
      );
      assert.ok(known, "vgate never learned of the new key");
      // The cache cannot relist while LISTs fail; its open watch is ended (as a restart would).
      let failLists = true;
      env.proxy.inject(
        (q) =>
          failLists && q.method === "GET" && q.path === KEYS_PATH && !/[?&]watch=/.test(q.query),
        { status: 500, body: kubeStatus(500, "InternalError", "injected by the test") },
        Number.MAX_SAFE_INTEGER,
      );
      try {
        env.proxy.endWatches();
        const mark = env.proxy.requests.length;
        let last: Review["response"] | undefined;
        // Until vgate notices the ended watch, the cache answers (also 409).
        const asked = await waitFor(async () => {
          last = await mutate(rev({ object: key(taken) }));
          assert.equal(last.status?.code, 409, JSON.stringify(last.status));
          return sentSince(mark, (q) => q.path === `${KEYS_PATH}/${taken}`).length > 0;
        }, 15_000);
        assert.ok(asked, "vgate never asked the API server with a GET");
        assert.equal(last?.status?.reason, "AlreadyExists");
        assert.equal(last?.status?.message, `ownedaccesskeys.${GROUP} "${taken}" already exists`);
        // kube's 404 for a key that does not exist means "free".
        const freeName = `free-${ID}`;
        const free = await mutate(rev({ object: key(freeName) }));
        assert.equal(free.allowed, true, JSON.stringify(free.status));
        assert.ok(sentSince(mark, (q) => q.path === `${KEYS_PATH}/${freeName}`).length > 0);
      } finally {
        failLists = false;
      }
    });

    it("fails closed with 503 and a clear message when the API server is down", async () => {
      env.proxy.setDown(true);
      // Once vgate sees its watch end, the cache is not trusted and the GET fails.
      const r = await answerOnceDown(() => mutate(rev({ object: key(`down-${ID}`) })));
      assert.match(r.status!.message, /cannot check whether/);
    });

    it("leaves UPDATE objects alone", async () => {
      const old = key("u", {}, { resourceVersion: "1" });
      const r = await mutate(rev({ operation: "UPDATE", object: old, oldObject: old }));
      assert.equal(r.allowed, true);
      assert.equal(r.patch, undefined);
    });
  });

  describe("bad requests never crash or hang the server", () => {
    const raw = (body: string | Buffer, contentType = "application/json") =>
      httpsRequest(`${url}/validate/ownedaccesskeys`, {
        body,
        headers: { "Content-Type": contentType },
        ca,
      });
    const expectStatus = async (res: HttpResponse, code: number, pattern: RegExp) => {
      assert.equal(res.status, code, res.text);
      const status = res.json<{ kind: string; code: number; message: string }>();
      assert.equal(status.kind, "Status");
      assert.equal(status.code, code);
      assert.match(status.message, pattern);
    };

    it("400 for a v1beta1 AdmissionReview", async () => {
      const body = rev({});
      body.apiVersion = "admission.k8s.io/v1beta1";
      await expectStatus(
        await post("/validate/ownedaccesskeys", body),
        400,
        /admission\.k8s\.io\/v1/,
      );
    });
    it("400 for malformed and truncated JSON", async () => {
      await expectStatus(await raw("{not json"), 400, /not valid JSON/);
      const full = JSON.stringify(rev({}));
      await expectStatus(await raw(full.slice(0, full.length / 2)), 400, /not valid JSON/);
      await expectStatus(await raw(""), 400, /empty/);
    });
    it("400 for non-UTF-8 bytes", async () => {
      const bytes = Buffer.concat([
        Buffer.from('{"apiVersion":"'),
        Buffer.from([0xff, 0xfe, 0xc3]),
        Buffer.from('"}'),
      ]);
      await expectStatus(await raw(bytes), 400, /not valid UTF-8/);
    });
    it("400 for 10,000-deep nesting", async () => {
      const deep = `${'{"a":'.repeat(10_000)}1${"}".repeat(10_000)}`;
      await expectStatus(await raw(deep), 400, /nested deeper than/);
      const deepArray = `{"x":${"[".repeat(10_000)}${"]".repeat(10_000)}}`;
      await expectStatus(await raw(deepArray), 400, /nested deeper than/);
    });
    it("413 for a body over 3 MiB", async () => {
      const big = JSON.stringify({ pad: "x".repeat(3 * 1024 * 1024) });
      await expectStatus(await raw(big), 413, /larger than/);
    });
    it("415 for a wrong content type", async () => {
      await expectStatus(
        await raw(JSON.stringify(rev({})), "text/plain"),
        415,
        /application\/json/,
      );
      await expectStatus(
        await raw(JSON.stringify(rev({})), "application/json; charset=latin1"),
        415,
        /application\/json/,
      );
    });
    it("treats __proto__ keys as data and does not pollute prototypes", async () => {
      const text = JSON.stringify(rev({ ...ADMIN })).replace(
        '"spec":{',
        '"spec":{"__proto__":{"isAdmin":true},',
      );
      const res = await raw(
        text.replace('"metadata":{', '"metadata":{"__proto__":{"polluted":1},'),
      );
      assert.equal(res.status, 200, res.text);
      assert.equal(({} as Json).polluted, undefined);
      assert.equal(({} as Json).isAdmin, undefined);
    });
    it("wrong types in every request field are 400s with the field named", async () => {
      for (const field of [
        "uid",
        "kind",
        "resource",
        "operation",
        "userInfo",
        "object",
        "oldObject",
        "name",
        "dryRun",
      ]) {
        const body = rev({});
        (body.request as Json)[field] = field === "object" || field === "oldObject" ? 42 : [];
        const res = await post("/validate/ownedaccesskeys", body);
        await expectStatus(res, 400, new RegExp(`request\\.${field}`));
      }
    });
    it("wrong types inside the object are 422s, not crashes", async () => {
      const garbage: Json[] = [
        { metadata: "x" },
        {
          metadata: {
            name: 5,
            labels: [],
            annotations: "a",
            ownerReferences: {},
            finalizers: "f",
            managedFields: 1,
          },
        },
        { spec: [] },
        { spec: { ttl: "10", groups: "g", scope: [], type: 3, disabled: "no", key: 12 } },
      ];
      for (const g of garbage) {
        const r = await validate(rev({ ...ADMIN, name: "g", object: { ...key("g"), ...g } }));
        assert.equal(r.allowed, false);
        assert.equal(r.status?.code, 422, JSON.stringify(r.status));
      }
    });
    it("405 for GET on an admission route and 404 for unknown routes", async () => {
      await expectStatus(
        await httpsRequest(`${url}/validate/ownedaccesskeys`, { ca }),
        405,
        /only POST/,
      );
      await expectStatus(await httpsRequest(`${url}/nope`, { ca }), 404, /no route/);
    });
    it("a stalled client does not hold up other requests", async () => {
      const socket = connect({
        host: "127.0.0.1",
        port: env.vgate.server.port,
        ca,
        servername: "localhost",
      });
      await new Promise<void>((res, rej) => socket.once("secureConnect", res).once("error", rej));
      socket.write(
        "POST /validate/ownedaccesskeys HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{",
      );
      try {
        const r = await validate(rev({ ...ADMIN, name: "while-stalled" }));
        assert.equal(r.allowed, true);
      } finally {
        socket.destroy();
      }
    });
    it("is still healthy afterwards", async () => {
      assert.equal((await httpsRequest(`${url}/healthz`, { ca })).status, 200);
    });
  });

  describe("logs", () => {
    it("writes one line per request with uid, operation, name, user, allowed, code and latency", async () => {
      const body = rev({ ...ADMIN, name: "logged-key" });
      await validate(body);
      const uid = (body.request as Json).uid;
      const lines = env.logLines.map((l) => JSON.parse(l) as Json).filter((l) => l.uid === uid);
      assert.equal(lines.length, 1);
      const line = lines[0]!;
      assert.equal(line.operation, "CREATE");
      assert.equal(line.name, "logged-key");
      assert.equal(line.user, "root");
      assert.equal(line.allowed, true);
      assert.equal(line.code, 200);
      assert.equal(typeof line.latencyMs, "number");
    });

    it("logs a 5xx answer at error level with its reason; a denial stays at info", async () => {
      env.proxy.setDown(true);
      const failed = await answerOnceDown(() => mutate(rev({ object: key(`log-5xx-${ID}`) })));
      env.proxy.setDown(false);
      const denied = rev({ ...ADMIN, object: key("log-4xx", { ttl: "soon" }) });
      assert.equal((await validate(denied)).status?.code, 422);
      const lines = env.logLines.map((l) => JSON.parse(l) as Json);
      const five = lines.filter((l) => l.code === 503 && l.msg === "admission");
      assert.ok(five.length > 0, "the 503 answers were logged");
      for (const l of five) {
        assert.equal(l.level, "error", JSON.stringify(l));
        assert.ok(typeof l.error === "string" && l.error.length > 0, JSON.stringify(l));
      }
      assert.ok(five.some((l) => l.error === failed.status?.message));
      const four = lines.find((l) => l.uid === (denied.request as Json).uid);
      assert.equal(four?.level, "info");
      assert.equal(four?.code, 422);
    });

    it("never logs a planted key nor its own token, in allowed, denied, failing or malformed requests", async () => {
      await validate(rev({ ...ADMIN, object: key("p1", { key: PLANTED_KEY }) }));
      await validate(
        rev({
          ...ADMIN,
          object: key("P1-bad", {
            key: PLANTED_KEY,
            identity: { connectorData: PLANTED_KEY },
          }),
        }),
      );
      await validate(rev({ ...ADMIN, object: key("p2", { key: PLANTED_KEY, ttl: "x" }) }));
      await mutate(
        rev({
          object: key(`p3-${ID}`, { key: PLANTED_KEY, oidcLogin: { idToken: PLANTED_KEY } }),
        }),
      );
      env.proxy.setDown(true);
      await answerOnceDown(() => mutate(rev({ object: key(`p4-${ID}`, { key: PLANTED_KEY }) })));
      env.proxy.setDown(false);
      await httpsRequest(`${url}/validate/ownedaccesskeys`, {
        body: `{"spec":{"key":"${PLANTED_KEY}"`,
        headers: { "Content-Type": "application/json", Authorization: `Bearer ${PLANTED_KEY}` },
        ca,
      });
      assert.ok(env.logLines.length > 0);
      for (const line of env.logLines) {
        assert.ok(!line.includes(PLANTED_KEY), line);
        assert.ok(!line.includes(env.token), "vgate's service-account token is in its log");
      }
    });
  });
});

async function waitFor(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 250));
  }
  return false;
}
