// POST /authenticate and POST /authorize over real HTTPS, as kube-apiserver calls them: real
// TokenReview and SubjectAccessReview JSON (v1 and v1beta1), answered from vgate's watch caches of
// the test rig's real kube-apiserver. Keys live under a group domain of this file's own, which no
// admission webhook watches, so the admin can store any spec (plain and sha256: keys). Also: hostile
// bodies and tokens, the log (never a token), and lastActivity written through the status
// subresource, batched.

import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { accessKeyExtra, accessKeyIdExtra } from "../../../webhook/src/auth/contracts.js";
import { sharedCluster, type VgateCluster } from "../../support/cluster.js";
import { httpsRequest } from "../../support/https-client.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../../support/kube/binaries.js";
import { until } from "../../support/until.js";
import { plugin } from "../../plugin/plugin-run.js";
import { startVgateOnCluster, type VgateOnCluster } from "../server/vgate-on-cluster.js";

const DOMAIN = "auth-routes.test";
const EXTRA = accessKeyExtra(DOMAIN);
const ID_EXTRA = accessKeyIdExtra(DOMAIN);
const PROJECT = "loft.sh/project";

const token = (): string => randomBytes(32).toString("base64url");
const sha256 = (s: string): string => `sha256:${createHash("sha256").update(s).digest("hex")}`;

interface TokenStatus {
  authenticated: boolean;
  error?: string;
  audiences?: string[];
  user?: { username: string; uid: string; groups: string[]; extra: Record<string, string[]> };
}

(HAVE_KUBE ? describe : describe.skip)(
  `POST /authenticate and /authorize${KUBE_SKIP_REASON}`,
  function () {
    this.timeout(60_000);
    let cluster: VgateCluster;
    let v: VgateOnCluster;
    const run = randomBytes(3).toString("hex");
    const keys = new Map<string, string>(); // name -> token

    before(async () => {
      cluster = await sharedCluster();
      v = await startVgateOnCluster(cluster, DOMAIN, { activityFlushIntervalMs: 200 });
      await cluster.admin.apply({
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: `in-${run}`, labels: { [PROJECT]: `web-${run}` } },
      });
      await cluster.admin.apply({
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: `out-${run}`, labels: { [PROJECT]: "other" } },
      });
    });

    after(async () => {
      for (const name of keys.keys()) {
        await cluster.admin.request("DELETE", `/apis/${v.group}/v1/ownedaccesskeys/${name}`);
      }
      for (const ns of [`in-${run}`, `out-${run}`]) {
        await cluster.admin.request("DELETE", `/api/v1/namespaces/${ns}`);
      }
      await v?.stop();
    });

    /** Stores a key (spec.key is `stored`, or the token itself) and waits until vgate knows it. */
    async function storeKey(spec: Record<string, unknown>, stored?: (t: string) => string) {
      const name = `k-${run}-${keys.size}`;
      const t = token();
      keys.set(name, t);
      const res = await cluster.admin.request("POST", `/apis/${v.group}/v1/ownedaccesskeys`, {
        apiVersion: `${v.group}/v1`,
        kind: "OwnedAccessKey",
        metadata: { name },
        spec: { key: stored ? stored(t) : t, ...spec },
      });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      const uid = (res.body as { metadata: { uid: string } }).metadata.uid;
      if (spec["disabled"] !== true && !spec["ttl"]) {
        await until(async () => (await review(t)).authenticated, `vgate knows ${name}`);
      }
      return { name, token: t, uid };
    }

    function post(path: string, body: unknown, headers: Record<string, string> = {}) {
      return httpsRequest(`${v.url}${path}`, {
        ca: v.ca,
        client: v.client,
        headers: { "Content-Type": "application/json", ...headers },
        body: typeof body === "string" || Buffer.isBuffer(body) ? body : JSON.stringify(body),
      });
    }

    function tokenReview(t: string, version = "v1", audiences?: string[]) {
      return {
        apiVersion: `authentication.k8s.io/${version}`,
        kind: "TokenReview",
        metadata: { creationTimestamp: null },
        spec: { token: t, ...(audiences ? { audiences } : {}) },
        status: { user: {} },
      };
    }

    async function review(t: string, version = "v1"): Promise<TokenStatus> {
      const res = await post("/authenticate", tokenReview(t, version));
      assert.equal(res.status, 200, res.text);
      return res.json<{ status: TokenStatus }>().status;
    }

    it("a stored key logs in (v1 and v1beta1): username, the key's uid, groups, the key's name", async () => {
      const k = await storeKey({ user: "alice", groups: ["ci", "ci", "deployers"] });
      for (const version of ["v1", "v1beta1"]) {
        const res = await post("/authenticate", tokenReview(k.token, version));
        const body = res.json<{ apiVersion: string; kind: string; status: TokenStatus }>();
        assert.equal(body.apiVersion, `authentication.k8s.io/${version}`);
        assert.equal(body.kind, "TokenReview");
        assert.deepEqual(body.status, {
          authenticated: true,
          user: {
            username: "alice",
            uid: k.uid,
            groups: ["ci", "deployers"],
            extra: {
              [EXTRA]: [k.name],
              [ID_EXTRA]: [sha256(k.token).slice(7, 23)],
              "authentication.kubernetes.io/credential-id": [
                `ACCESSKEYID=${sha256(k.token).slice(7, 23)}`,
              ],
            },
          },
        });
        assert.ok(!res.text.includes(k.token), "the answer never carries the token");
      }
      // One log line per review, naming the key and the user, never the token.
      const logged = v.logLines
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((l) => l["msg"] === "review" && l["accessKey"] === k.name);
      assert.ok(logged.length >= 2, "both reviews are logged");
      for (const line of logged) {
        assert.equal(line["route"], "authenticate");
        assert.equal(line["user"], "alice");
        assert.equal(line["decision"], "authenticated");
        assert.equal(line["code"], 200);
      }
      assert.ok(!v.logLines.join("\n").includes(k.token), "the token never reaches the log");
    });

    it("a sha256: stored key logs in with its token; team and subject keys get their usernames", async () => {
      const hashed = await storeKey({ user: "bob" }, sha256);
      assert.equal((await review(hashed.token)).user?.username, "bob");
      const team = await storeKey({ team: "platform" });
      assert.equal((await review(team.token)).user?.username, "team:platform");
      const subject = await storeKey({ subject: "loft:metrics-writer:p-default:vc1" });
      assert.equal(
        (await review(subject.token)).user?.username,
        "loft:metrics-writer:p-default:vc1",
      );
    });

    it("unknown, near-miss and malformed tokens get byte-identical answers", async () => {
      const k = await storeKey({ user: "carol" });
      const nearMiss = k.token.slice(0, -1) + (k.token.endsWith("A") ? "B" : "A");
      const answers = new Set<string>();
      const invalidBefore = await loginCount("invalid");
      for (const t of [
        token(),
        nearMiss,
        `${k.token} `,
        "",
        "ключ",
        "x".repeat(1 << 20),
        sha256(k.token),
      ]) {
        const res = await post("/authenticate", tokenReview(t));
        assert.equal(res.status, 200);
        answers.add(res.text);
      }
      assert.deepEqual(
        [...answers],
        [
          JSON.stringify({
            apiVersion: "authentication.k8s.io/v1",
            kind: "TokenReview",
            status: { authenticated: false, error: "invalid access key" },
          }),
        ],
      );
      // A guessing attack shows in the metrics: every failed try is counted, nothing else grows.
      assert.equal(await loginCount("invalid"), invalidBefore + 7);
    });

    /** vgate_access_key_logins_total for one result, from /metrics. */
    async function loginCount(result: string): Promise<number> {
      const text = (await httpsRequest(`${v.url}/metrics`, { ca: v.ca })).text;
      const m = new RegExp(
        `^vgate_access_key_logins_total\\{result="${result}"\\} (\\d+)$`,
        "m",
      ).exec(text);
      return Number(m?.[1] ?? 0);
    }

    it("disabled and expired keys say why, to the holder of the exact key only", async () => {
      const disabled = await storeKey({ user: "dave", disabled: true });
      const expired = await storeKey({ user: "erin", ttl: 1 });
      await new Promise((r) => setTimeout(r, 1100));
      await until(
        async () => (await review(disabled.token)).error === "access key disabled",
        "disabled",
      );
      assert.equal((await review(expired.token)).error, "access key expired");
    });

    it("audiences: without --audiences vgate is audience-agnostic and answers none", async () => {
      const k = await storeKey({ user: "frank" });
      const res = await post(
        "/authenticate",
        tokenReview(k.token, "v1", ["https://kubernetes.default.svc"]),
      );
      const status = res.json<{ status: TokenStatus }>().status;
      assert.equal(status.authenticated, true);
      assert.equal(status.audiences, undefined, "kube-apiserver applies its own audiences");
    });

    it("refuses what is not a TokenReview or SubjectAccessReview with a Status, never echoing the token", async () => {
      const secret = token();
      const cases: [string, unknown, number, RegExp][] = [
        ["/authenticate", "{not json", 400, /./],
        ["/authenticate", { ...tokenReview(secret), kind: "AdmissionReview" }, 400, /TokenReview/],
        [
          "/authenticate",
          { ...tokenReview(secret), apiVersion: "authentication.k8s.io/v2" },
          400,
          /apiVersion/,
        ],
        [
          "/authenticate",
          { apiVersion: "authentication.k8s.io/v1", kind: "TokenReview" },
          400,
          /spec/,
        ],
        ["/authenticate", { ...tokenReview(secret), spec: { token: 42 } }, 400, /token/],
        ["/authenticate", "[".repeat(10_000) + "]".repeat(10_000), 400, /./],
        [
          "/authorize",
          { apiVersion: "authorization.k8s.io/v1", kind: "SubjectAccessReview" },
          400,
          /spec/,
        ],
        [
          "/authorize",
          {
            apiVersion: "authorization.k8s.io/v1",
            kind: "SubjectAccessReview",
            spec: { user: "a" },
          },
          400,
          /./,
        ],
      ];
      for (const [path, body, code, message] of cases) {
        const res = await post(path, body);
        assert.equal(res.status, code, `${path} ${res.text}`);
        const status = res.json<{ kind: string; code: number; message: string }>();
        assert.equal(status.kind, "Status");
        assert.equal(status.code, code);
        assert.match(status.message, message);
        assert.ok(!res.text.includes(secret), "the token is not echoed");
      }
      const big = await post("/authenticate", tokenReview("x".repeat(4 << 20)));
      assert.equal(big.status, 413);
      const text = await post("/authenticate", JSON.stringify(tokenReview(secret)), {
        "Content-Type": "text/plain",
      });
      assert.equal(text.status, 415);
      const get = await httpsRequest(`${v.url}/authenticate`, { ca: v.ca, client: v.client });
      assert.equal(get.status, 405);
      assert.ok(!v.logLines.join("\n").includes(secret), "the token never reaches the log");
    });

    function accessReview(
      extra: Record<string, string[]> | undefined,
      namespace: string,
      version = "v1",
      uid?: string,
    ) {
      const groups =
        version === "v1"
          ? { groups: ["system:authenticated"] }
          : { group: ["system:authenticated"] };
      return {
        apiVersion: `authorization.k8s.io/${version}`,
        kind: "SubjectAccessReview",
        metadata: { creationTimestamp: null },
        spec: {
          resourceAttributes: { namespace, verb: "list", version: "v1", resource: "pods" },
          user: "grace",
          ...groups,
          ...(uid ? { uid } : {}),
          ...(extra ? { extra } : {}),
        },
        status: { allowed: false },
      };
    }

    async function decide(
      body: unknown,
    ): Promise<{ allowed: boolean; denied?: boolean; reason?: string }> {
      const res = await post("/authorize", body);
      assert.equal(res.status, 200, res.text);
      return res.json<{ status: { allowed: boolean; denied?: boolean; reason?: string } }>().status;
    }

    it("SubjectAccessReview (v1 and v1beta1): a scoped key is denied outside its project only", async () => {
      const k = await storeKey({ user: "grace", scope: { projects: [{ project: `web-${run}` }] } });
      const extra = { [EXTRA]: [k.name] };
      for (const version of ["v1", "v1beta1"]) {
        await until(
          async () =>
            (await decide(accessReview(extra, `in-${run}`, version, k.uid))).denied !== true,
          "namespace labels known",
        );
        assert.deepEqual(await decide(accessReview(extra, `in-${run}`, version, k.uid)), {
          allowed: false,
        });
        const out = await decide(accessReview(extra, `out-${run}`, version, k.uid));
        assert.equal(out.allowed, false);
        assert.equal(out.denied, true);
        assert.match(
          out.reason!,
          new RegExp(`access key "${k.name}" does not allow .*outside the key's scope`),
        );
      }
      // Not a key login: no opinion. A key that is not there, or another object of that name: denied.
      assert.deepEqual(await decide(accessReview(undefined, `out-${run}`)), { allowed: false });
      const missing = await decide(accessReview({ [EXTRA]: ["no-such-key"] }, `in-${run}`));
      assert.equal(missing.reason, "access key not found");
      const otherUid = await decide(
        accessReview(extra, `in-${run}`, "v1", "00000000-0000-0000-0000-000000000000"),
      );
      assert.equal(otherUid.reason, "access key not found");
    });

    it("writes status.lastActivity once for many logins, through the status subresource", async () => {
      const k = await storeKey({ user: "heidi" });
      const patchesBefore = statusPatches(k.name);
      for (let i = 0; i < 50; i++) assert.equal((await review(k.token)).authenticated, true);
      let lastActivity = "";
      await until(async () => {
        const res = await cluster.admin.request(
          "GET",
          `/apis/${v.group}/v1/ownedaccesskeys/${k.name}`,
        );
        lastActivity =
          (res.body as { status?: { lastActivity?: string } }).status?.lastActivity ?? "";
        return lastActivity !== "";
      }, "status.lastActivity is written");
      assert.match(lastActivity, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      assert.ok(Math.abs(Date.parse(lastActivity) - Date.now()) < 60_000);
      await new Promise((r) => setTimeout(r, 600));
      assert.equal(
        statusPatches(k.name) - patchesBefore,
        1,
        "one write for 50 logins within a minute",
      );
    });

    it("records a short key's login as status.weakKey, which kubectl accesskey shows as Weak", async () => {
      // A key older than the 32-character minimum (this group domain has no admission webhook,
      // so it can still be stored), hashed as vgate stores keys: only a login shows its length.
      const short = randomBytes(15).toString("base64url");
      const name = `k-${run}-weak`;
      keys.set(name, short);
      const created = await cluster.admin.request("POST", `/apis/${v.group}/v1/ownedaccesskeys`, {
        apiVersion: `${v.group}/v1`,
        kind: "OwnedAccessKey",
        metadata: { name },
        spec: { key: sha256(short), user: "ivan" },
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const status = async () =>
        (
          await cluster.admin.request<{ status?: { weakKey?: boolean } }>(
            "GET",
            `/apis/${v.group}/v1/ownedaccesskeys/${name}`,
          )
        ).body.status;
      assert.equal((await status())?.weakKey, undefined, "nothing is known before a login");
      await until(async () => (await review(short)).authenticated, "the short key logs in");
      await until(async () => (await status())?.weakKey === true, "status.weakKey is written");
      const listed = await plugin(["list", "--all", "--group-domain", DOMAIN, "-o", "wide"], {
        kubeconfig: cluster.kubeconfigPath,
      });
      assert.equal(listed.code, 0, listed.stderr);
      const row = listed.stdout.split("\n").find((l) => l.startsWith(`${name} `));
      assert.match(row ?? "", /\sWeak\s/);
      // Rotated to a strong key: its next login clears it.
      const strong = randomBytes(32).toString("base64url");
      keys.set(name, strong);
      const rotated = await cluster.admin.request(
        "PATCH",
        `/apis/${v.group}/v1/ownedaccesskeys/${name}`,
        { spec: { key: sha256(strong) } },
        { "Content-Type": "application/merge-patch+json" },
      );
      assert.equal(rotated.status, 200, JSON.stringify(rotated.body));
      await until(async () => (await review(strong)).authenticated, "the new key logs in");
      await until(async () => (await status())?.weakKey === false, "status.weakKey is cleared");
    });

    function statusPatches(name: string): number {
      return v.proxy.requests.filter(
        (r) => r.method === "PATCH" && r.path.endsWith(`/ownedaccesskeys/${name}/status`),
      ).length;
    }
  },
);
