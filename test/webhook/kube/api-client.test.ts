// ApiClient against a real kube-apiserver, loaded through a kubeconfig as in production: it runs as
// a service account with the rules vgate's role has, through a fault proxy that can take the API
// server down, slow it and count what the client asked. Keys live under a group domain of this
// file's own, so no webhook is in the way; authorization is the cluster's real RBAC.

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { UserInfo } from "../../../webhook/src/api/user-info.js";
import { KubeError } from "../../../webhook/src/shared/status.js";
import { resourceIdentity } from "../../../webhook/src/shared/ownedaccesskey.js";
import {
  ApiClient,
  reviewStatus,
  subjectAccessReviewBody,
  type ApiClientOptions,
} from "../../../webhook/src/kube/api-client.js";
import { loadKubeConfig } from "../../../webhook/src/shared/kubeconfig.js";
import type { ResourceAttributes } from "../../../webhook/src/kube/ports.js";
import { installAccessKeyCrd, sharedCluster, type VgateCluster } from "../../support/cluster.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../../support/kube/binaries.js";
import { installCrd, schemalessCrd } from "../../support/kube/crds.js";
import type { FaultProxy } from "../../support/kube/fault-proxy.js";
import type { KubeObject } from "../../support/kube/kube-client.js";
import { kubeconfigYaml } from "../../support/kube/kubeconfig-file.js";
import { testCa } from "../../support/kube/pki.js";
import { freePort } from "../../support/kube/processes.js";
import { rulesInEffect } from "../../support/kube/rbac.js";
import { serviceAccountWith, type TestServiceAccount } from "../../support/kube/service-account.js";

const DOMAIN = "api-client-test.example.com";
const ID = resourceIdentity(DOMAIN);
const KEYS = `/apis/${ID.group}/${ID.version}/${ID.resource}`;
const STORAGE = `storage.${DOMAIN}`;
const RBAC = "rbac.authorization.k8s.io/v1";
const ALICE = { username: "alice", groups: ["devs", "system:authenticated"], uid: "u-1" };
const DELETE_POD = {
  group: "",
  version: "v1",
  resource: "pods",
  namespace: "a",
  name: "p",
  verb: "delete",
};

async function clientFor(kubeconfig: string, options: ApiClientOptions = {}): Promise<ApiClient> {
  const kc = await loadKubeConfig({ kubeconfig, env: {} });
  assert.ok(kc);
  // These tests are about the live requests; the access key cache has its own tests.
  return new ApiClient(kc, ID, { cacheAccessKeys: false, timeoutMs: 10_000, ...options });
}

async function rejection(p: Promise<unknown>): Promise<KubeError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof KubeError, `expected a KubeError, got ${String(err)}`);
    return err;
  }
  assert.fail("expected a rejection");
}

const crd = (group: string, kind: string, plural: string, namespaced: boolean): KubeObject =>
  schemalessCrd(group, kind, plural, { namespaced });

(HAVE_KUBE ? describe : describe.skip)(`ApiClient${KUBE_SKIP_REASON}`, function () {
  this.timeout(60_000);
  let cluster: VgateCluster;
  let account: TestServiceAccount;
  let proxy: FaultProxy;
  let client: ApiClient;
  const clients: ApiClient[] = [];
  const undo: (() => Promise<unknown>)[] = [];
  const fresh = async (options: ApiClientOptions = {}) => {
    const c = await clientFor(await account.kubeconfig(proxy.url), options);
    clients.push(c);
    return c;
  };
  const track = (c: ApiClient) => (clients.push(c), c);

  before(async function () {
    this.timeout(120_000);
    cluster = await sharedCluster();
    await installAccessKeyCrd(cluster.admin, DOMAIN);
    undo.push(() => cluster.admin.delete(crd(ID.group, "OwnedAccessKey", ID.resource, false)));
    // vgate's role: read keys, create SubjectAccessReviews (discovery is every user's).
    account = await serviceAccountWith(cluster.plane, "api-client", [
      { apiGroups: [ID.group], resources: [ID.resource], verbs: ["get", "list", "watch"] },
      { apiGroups: [ID.group], resources: [`${ID.resource}/status`], verbs: ["patch"] },
      {
        apiGroups: ["authorization.k8s.io"],
        resources: ["subjectaccessreviews"],
        verbs: ["create"],
      },
    ]);
    undo.push(() => account.remove());
    proxy = await cluster.plane.faultProxy();
    undo.push(() => proxy.close());
    client = await fresh();
  });
  after(async () => {
    for (const c of clients) c.close();
    for (const fn of undo.reverse()) await fn();
  });
  afterEach(() => {
    proxy.setDown(false);
    proxy.setDelay(0);
  });

  describe("getAccessKey", () => {
    it("returns the stored key", async () => {
      const name = `present-${randomBytes(3).toString("hex")}`;
      const stored = await cluster.admin.create<KubeObject>({
        apiVersion: ID.apiVersion,
        kind: "OwnedAccessKey",
        metadata: { name },
        spec: { user: "alice" },
      });
      undo.push(() => cluster.admin.delete(stored));
      const key = await client.getAccessKey(name);
      assert.equal(key?.metadata?.name, name);
      assert.equal(key?.spec?.user, "alice");
      assert.equal(key?.metadata?.uid, stored.metadata["uid"]);
    });

    it("returns null for a missing key", async () => {
      assert.equal(await client.getAccessKey("absent"), null);
      const last = proxy.requests.at(-1);
      assert.deepEqual([last?.method, last?.path], ["GET", `${KEYS}/absent`]);
    });

    it("returns null without asking for names no object can have", async () => {
      const before = proxy.requests.length;
      for (const name of ["", ".", "..", "a/b", "a%2Fb"])
        assert.equal(await client.getAccessKey(name), null);
      assert.equal(proxy.requests.length, before);
    });

    it("fails closed with 503 naming the check when the API server answers 503", async () => {
      proxy.setDown(true);
      const err = await rejection(client.getAccessKey("x"));
      assert.equal(err.code, 503);
      assert.equal(err.reason, "ServiceUnavailable");
      assert.equal(
        err.message,
        `cannot check whether ${ID.resource}.${ID.group} "x" exists: API server answered 503 ServiceUnavailable: the server is currently unable to handle the request`,
      );
      assert.ok(!err.message.includes(account.token));
    });

    it("fails closed with 503 when its own credentials are rejected (401) or forbidden (403)", async () => {
      const { plane } = cluster;
      const badToken = track(
        await clientFor(await plane.tokenKubeconfig("not-a-known-token", "bad")),
      );
      const unauthorized = await rejection(badToken.getAccessKey("x"));
      assert.equal(unauthorized.code, 503);
      assert.match(unauthorized.message, /answered 401 Unauthorized: Unauthorized$/);
      assert.ok(!unauthorized.message.includes("not-a-known-token"));

      // Authenticated, but no role grants it anything on keys.
      const bob = `bob-${randomBytes(3).toString("hex")}`;
      const bobClient = track(await clientFor(await plane.clientCertKubeconfig(bob)));
      const forbidden = await rejection(bobClient.getAccessKey("x"));
      assert.equal(forbidden.code, 503);
      assert.match(
        forbidden.message,
        new RegExp(`answered 403 Forbidden: .*User "${bob}" cannot get resource "ownedaccesskeys"`),
      );
    });

    it("fails closed with 503 when the answer does not come within the timeout", async () => {
      const quick = await fresh({ timeoutMs: 100 });
      proxy.setDelay(1000);
      const err = await rejection(quick.getAccessKey("x"));
      assert.equal(err.code, 503);
      assert.match(err.message, /exists: API server did not answer within 100 ms$/);
    });
  });

  describe("patchAccessKeyStatus", () => {
    const stored = async () => {
      const name = `status-${randomBytes(3).toString("hex")}`;
      const key = await cluster.admin.create<KubeObject>({
        apiVersion: ID.apiVersion,
        kind: "OwnedAccessKey",
        metadata: { name, labels: { team: "web" } },
        spec: { user: "alice" },
      });
      undo.push(() => cluster.admin.delete(key));
      return { name, rv: String(key.metadata["resourceVersion"]) };
    };
    const read = async (name: string) =>
      (await cluster.admin.request<KubeObject>("GET", `${KEYS}/${name}`)).body as KubeObject & {
        status?: { lastActivity?: string; weakKey?: boolean };
      };

    it("writes status on the resourceVersion it was given, and nothing else", async () => {
      const k = await stored();
      const at = "2026-03-10T00:00:00Z";
      assert.equal(
        await client.patchAccessKeyStatus(k.name, { lastActivity: at }, k.rv),
        "written",
      );
      const after = await read(k.name);
      assert.deepEqual(after.status, { lastActivity: at });
      assert.deepEqual(after.metadata.labels, { team: "web" });
      assert.deepEqual(after["spec"], { user: "alice" });
      const patch = proxy.requests.at(-1)!;
      assert.deepEqual([patch.method, patch.path], ["PATCH", `${KEYS}/${k.name}/status`]);
      assert.deepEqual(JSON.parse(patch.body), {
        metadata: { resourceVersion: k.rv },
        status: { lastActivity: at },
      });
    });

    it("is a conflict, changing nothing, when the key changed since that resourceVersion", async () => {
      const k = await stored();
      // Another replica's write, then an unrelated change: both make the old version stale.
      const first = "2026-03-10T00:00:00Z";
      assert.equal(
        await client.patchAccessKeyStatus(k.name, { lastActivity: first }, k.rv),
        "written",
      );
      const second = "2026-03-10T00:01:00Z";
      assert.equal(
        await client.patchAccessKeyStatus(k.name, { lastActivity: second, weakKey: true }, k.rv),
        "conflict",
      );
      assert.deepEqual((await read(k.name)).status, { lastActivity: first });
      const labelled = await cluster.admin.request<KubeObject>(
        "PATCH",
        `${KEYS}/${k.name}`,
        { metadata: { labels: { team: "ops" } } },
        { "Content-Type": "application/merge-patch+json" },
      );
      const rv = String(labelled.body.metadata["resourceVersion"]);
      assert.equal(await client.patchAccessKeyStatus(k.name, { weakKey: true }, k.rv), "conflict");
      assert.equal(await client.patchAccessKeyStatus(k.name, { weakKey: true }, rv), "written");
      assert.deepEqual((await read(k.name)).status, { lastActivity: first, weakKey: true });
    });

    it("is gone for a deleted key, and fails closed with 503 when the API server answers 500", async () => {
      assert.equal(
        await client.patchAccessKeyStatus("absent", { lastActivity: "2026-03-10T00:00:00Z" }, "1"),
        "gone",
      );
      const k = await stored();
      proxy.inject((r) => r.method === "PATCH", {
        status: 500,
        body: {
          kind: "Status",
          apiVersion: "v1",
          status: "Failure",
          code: 500,
          reason: "InternalError",
        },
      });
      const err = await rejection(
        client.patchAccessKeyStatus(k.name, { lastActivity: "2026-03-10T00:00:00Z" }, k.rv),
      );
      assert.equal(err.code, 503);
      assert.match(
        err.message,
        new RegExp(`^cannot record the last activity of ${ID.resource}\\.`),
      );
    });
  });

  describe("resourceFor", () => {
    before(async () => {
      // Loft's owner kinds, as Loft installs them: cluster-scoped User and Team CRDs.
      for (const group of [ID.group, STORAGE]) {
        for (const [kind, plural] of [
          ["User", "users"],
          ["Team", "teams"],
        ] as const) {
          const def = crd(group, kind, plural, false);
          await installCrd(cluster.admin, def);
          undo.push(() => cluster.admin.delete(def));
        }
      }
    });

    it("maps core v1 Pod to namespaced pods", async () => {
      assert.deepEqual(await client.resourceFor("v1", "Pod"), {
        group: "",
        version: "v1",
        resource: "pods",
        namespaced: true,
      });
    });

    it("maps core v1 Namespace to cluster-scoped namespaces", async () => {
      const m = await client.resourceFor("v1", "Namespace");
      assert.deepEqual([m?.resource, m?.namespaced], ["namespaces", false]);
    });

    it("maps apps/v1 Deployment", async () => {
      assert.deepEqual(await client.resourceFor("apps/v1", "Deployment"), {
        group: "apps",
        version: "v1",
        resource: "deployments",
        namespaced: true,
      });
    });

    it("maps Loft's User and Team kinds to cluster-scoped resources", async () => {
      for (const [group, kind, resource] of [
        [ID.group, "User", "users"],
        [ID.group, "Team", "teams"],
        [STORAGE, "User", "users"],
        [STORAGE, "Team", "teams"],
      ] as const) {
        const m = await client.resourceFor(`${group}/v1`, kind);
        assert.deepEqual(m, { group, version: "v1", resource, namespaced: false });
      }
    });

    it("returns null for an unknown kind, an unknown group and a malformed apiVersion", async () => {
      assert.equal(await client.resourceFor("v1", "Nothing"), null);
      assert.equal(await client.resourceFor("example.com/v1", "Widget"), null);
      assert.equal(await client.resourceFor("a/b/c", "Pod"), null);
      assert.equal(await client.resourceFor("", "Pod"), null);
      assert.equal(await client.resourceFor("../../x/v1", "Pod"), null);
    });

    it("asks discovery once per group/version while the answer is fresh", async () => {
      const c = await fresh();
      const count = () => proxy.requests.filter((r) => r.path === "/apis/apps/v1").length;
      const before = count();
      await Promise.all([
        c.resourceFor("apps/v1", "Deployment"),
        c.resourceFor("apps/v1", "ReplicaSet"),
      ]);
      await c.resourceFor("apps/v1", "StatefulSet");
      assert.equal(count() - before, 1);
    });

    it("finds a newly installed CRD by refreshing once on a miss", async () => {
      const group = `${randomBytes(3).toString("hex")}.${DOMAIN}`;
      const c = await fresh({ discoveryMissRefreshMs: 0 });
      assert.equal(await c.resourceFor(`${group}/v1`, "Widget"), null);
      const def = crd(group, "Widget", "widgets", true);
      await installCrd(cluster.admin, def);
      try {
        const count = () => proxy.requests.filter((r) => r.path === `/apis/${group}/v1`).length;
        const before = count();
        assert.deepEqual(await c.resourceFor(`${group}/v1`, "Widget"), {
          group,
          version: "v1",
          resource: "widgets",
          namespaced: true,
        });
        assert.equal(count() - before, 1);
      } finally {
        await cluster.admin.delete(def);
      }
    });

    it("does not refresh again on a miss while the answer is younger than the refresh interval", async () => {
      const c = await fresh({ discoveryMissRefreshMs: 60_000 });
      const count = () => proxy.requests.filter((r) => r.path === "/api/v1").length;
      const before = count();
      assert.equal(await c.resourceFor("v1", "Nothing"), null);
      assert.equal(await c.resourceFor("v1", "Nothing"), null);
      assert.equal(count() - before, 1);
    });

    it("fails closed with 503 when discovery is down", async () => {
      const c = await fresh();
      proxy.setDown(true);
      const err = await rejection(c.resourceFor("apps/v1", "Deployment"));
      assert.equal(err.code, 503);
      assert.match(err.message, /discovery\): API server answered 503 ServiceUnavailable/);
    });
  });

  describe("subjectAccessReview", () => {
    const id = randomBytes(3).toString("hex");
    const devs = `devs-${id}`;
    const carol = `carol-${id}`;

    before(async () => {
      // The cluster's RBAC decides: group `devs` and user `carol` may delete the pod "p" and
      // update the finalizers of the User "bob".
      const role = {
        apiVersion: RBAC,
        kind: "ClusterRole",
        metadata: { name: `vgate-api-client-${id}` },
        rules: [
          { apiGroups: [""], resources: ["pods"], verbs: ["delete"], resourceNames: ["p"] },
          {
            apiGroups: [STORAGE],
            resources: ["users/finalizers"],
            verbs: ["update"],
            resourceNames: ["bob"],
          },
        ],
      };
      const binding = {
        apiVersion: RBAC,
        kind: "ClusterRoleBinding",
        metadata: { name: `vgate-api-client-${id}` },
        roleRef: {
          apiGroup: "rbac.authorization.k8s.io",
          kind: "ClusterRole",
          name: role.metadata.name,
        },
        subjects: [
          { apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: devs },
          { apiGroup: "rbac.authorization.k8s.io", kind: "User", name: carol },
        ],
      };
      await cluster.admin.apply(role);
      undo.push(() => cluster.admin.delete(role));
      await cluster.admin.apply(binding);
      undo.push(() => cluster.admin.delete(binding));
      await rulesInEffect(cluster.admin, { user: carol, groups: [] }, role.rules);
      await rulesInEffect(cluster.admin, { user: "someone", groups: [devs] }, role.rules);
    });

    it("answers the cluster's RBAC decision for the user's name, groups and attributes", async () => {
      const alice = { ...ALICE, groups: [devs, "system:authenticated"] };
      const allowed = await client.subjectAccessReview(alice, DELETE_POD);
      assert.equal(allowed.allowed, true);
      assert.match(allowed.reason ?? "", new RegExp(`^RBAC: allowed by .* to Group "${devs}"$`));
      const byName = await client.subjectAccessReview({ username: carol, groups: [] }, DELETE_POD);
      assert.equal(byName.allowed, true);
      assert.match(byName.reason ?? "", new RegExp(`to User "${carol}"$`));
      // Each part of the question counts: the groups, the name, the verb.
      const questions: [UserInfo, ResourceAttributes][] = [
        [ALICE, DELETE_POD],
        [alice, { ...DELETE_POD, name: "q" }],
        [alice, { ...DELETE_POD, verb: "get" }],
      ];
      for (const [user, attrs] of questions) {
        const no = await client.subjectAccessReview(user, attrs);
        assert.equal(no.allowed, false, JSON.stringify([user, attrs]));
      }
      const last = proxy.requests.at(-1);
      assert.deepEqual(
        [last?.method, last?.path],
        ["POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews"],
      );
    });

    it("answers not allowed, without denied or a reason, where RBAC has no rule", async () => {
      // RBAC never denies, it only has no opinion; only an authorization webhook sets denied.
      const decision = await client.subjectAccessReview(ALICE, DELETE_POD);
      assert.deepEqual(decision, { allowed: false });
    });

    it("sends the subresource, and RBAC tells users/finalizers from users", async () => {
      const update = {
        group: STORAGE,
        version: "v1",
        resource: "users",
        subresource: "finalizers",
        name: "bob",
        verb: "update",
      };
      const user = { username: "someone", groups: [devs] };
      assert.equal((await client.subjectAccessReview(user, update)).allowed, true);
      const users = { ...update, subresource: "" };
      assert.equal((await client.subjectAccessReview(user, users)).allowed, false);
    });

    it("sends uid and extra in the shape kube reads back", async () => {
      // The exact body the client posts, asked of the real server: its answer echoes the spec as
      // kube decoded it, so a misnamed or mistyped field would be missing there.
      const user = { ...ALICE, extra: { scopes: ["a", "b"] } };
      const attrs = {
        group: "apps",
        version: "v1",
        resource: "deployments",
        subresource: "scale",
        namespace: "a",
        name: "d",
        verb: "update",
      };
      const body = subjectAccessReviewBody(user, attrs) as { spec: Record<string, unknown> };
      assert.deepEqual(body.spec, {
        user: "alice",
        groups: ["devs", "system:authenticated"],
        uid: "u-1",
        extra: { scopes: ["a", "b"] },
        resourceAttributes: attrs,
      });
      const res = await cluster.admin.request<{ spec: unknown }>(
        "POST",
        "/apis/authorization.k8s.io/v1/subjectaccessreviews",
        body,
      );
      assert.equal(res.status, 201);
      assert.deepEqual(res.body.spec, body.spec);
    });

    it("fails closed with 503 when it may not create SubjectAccessReviews (403)", async () => {
      const readOnly = await serviceAccountWith(cluster.plane, "api-client-no-sar", []);
      undo.push(() => readOnly.remove());
      const c = track(await clientFor(await readOnly.kubeconfig()));
      const err = await rejection(c.subjectAccessReview(ALICE, DELETE_POD));
      assert.equal(err.code, 503);
      assert.match(
        err.message,
        /^cannot check whether "alice" may delete pods "p" in namespace "a": API server answered 403 Forbidden: subjectaccessreviews\.authorization\.k8s\.io is forbidden: User "system:serviceaccount:[^"]+" cannot create resource "subjectaccessreviews"/,
      );
    });

    it("fails closed with 503 when the review cannot be made", async () => {
      proxy.setDown(true);
      const err = await rejection(client.subjectAccessReview(ALICE, DELETE_POD));
      assert.equal(err.code, 503);
      assert.match(
        err.message,
        /^cannot check whether "alice" may delete pods "p" in namespace "a": API server answered 503/,
      );
    });
  });

  describe("ready", () => {
    it("is true when discovery answers, and keeps a yes for a while", async () => {
      const c = await fresh();
      assert.equal(await c.ready(), true);
      proxy.setDown(true);
      assert.equal(await c.ready(), true);
    });

    it("is false when the API server answers with an error", async () => {
      const c = await fresh();
      proxy.setDown(true);
      assert.equal(await c.ready(), false);
      proxy.setDown(false);
      assert.equal(await c.ready(), true);
    });

    it("is false when the answer is too slow", async () => {
      const c = await fresh({ timeoutMs: 100 });
      proxy.setDelay(1000);
      assert.equal(await c.ready(), false);
    });
  });
});

describe("ApiClient, API server unreachable", () => {
  let dir: string;
  let unreachable: ApiClient;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "vgate-kube-"));
    // Nobody listens there: the connection is refused before TLS, so any CA will do.
    const port = await freePort();
    const path = join(dir, "config");
    const yaml = kubeconfigYaml({
      server: `https://127.0.0.1:${port}`,
      caPem: (await testCa()).cert,
      token: "secret-token-value",
      name: "gone",
    });
    await writeFile(path, yaml);
    unreachable = await clientFor(path, { timeoutMs: 2000 });
  });
  after(async () => {
    unreachable.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("answers 503 with the connection error and no token", async () => {
    const err = await rejection(unreachable.getAccessKey("x"));
    assert.equal(err.code, 503);
    assert.match(
      err.message,
      /^cannot check whether ownedaccesskeys\.management\.api-client-test\.example\.com "x" exists: API server unreachable: connect ECONNREFUSED 127\.0\.0\.1:\d+$/,
    );
    assert.ok(!err.message.includes("secret-token-value"));
  });

  it("answers 503 for discovery and SubjectAccessReview too", async () => {
    const disc = await rejection(unreachable.resourceFor("apps/v1", "Deployment"));
    assert.equal(disc.code, 503);
    assert.match(
      disc.message,
      /^cannot map apps\/v1 kinds to resources \(discovery\): API server unreachable/,
    );
    const sar = await rejection(unreachable.subjectAccessReview(ALICE, DELETE_POD));
    assert.equal(sar.code, 503);
    assert.match(
      sar.message,
      /^cannot check whether "alice" may delete pods "p" in namespace "a": /,
    );
  });

  it("is not ready", async () => {
    assert.equal(await unreachable.ready(), false);
  });
});

describe("SubjectAccessReview bodies and answers", () => {
  it("omits empty optional attributes and a missing uid", () => {
    const attrs = {
      group: "storage.loft.sh",
      version: "v1",
      resource: "users",
      subresource: "finalizers",
      name: "bob",
      verb: "update",
    };
    const body = subjectAccessReviewBody({ username: "alice", groups: [] }, attrs) as {
      spec: Record<string, unknown>;
    };
    assert.deepEqual(body.spec["resourceAttributes"], attrs);
    assert.equal(Object.hasOwn(body.spec, "uid"), false);
    assert.equal(Object.hasOwn(body.spec, "extra"), false);
    const core = subjectAccessReviewBody({ username: "alice", groups: [] }, DELETE_POD) as {
      spec: { resourceAttributes: Record<string, string> };
    };
    assert.equal(core.spec.resourceAttributes["group"], "", 'the core group is named, as ""');
  });

  it("reads denied and the reason an authorization webhook gives", () => {
    // RBAC never denies; a webhook authorizer (e.g. Loft's) can, and kube passes that on.
    const answer = {
      apiVersion: "authorization.k8s.io/v1",
      kind: "SubjectAccessReview",
      status: { allowed: false, denied: true, reason: "no way" },
    };
    assert.deepEqual(reviewStatus(answer), { allowed: false, denied: true, reason: "no way" });
    assert.equal(reviewStatus({ status: { denied: true } }), null, "no allowed: no decision");
    assert.equal(reviewStatus({ status: { allowed: "true" } }), null);
  });
});
