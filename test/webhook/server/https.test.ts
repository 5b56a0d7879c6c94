// The webhook over real HTTPS: AdmissionReview JSON posted to a running `vgate serve`, wired to the
// in-process test API server through a kubeconfig exactly as in production.

import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { connect } from "node:tls";
import { startServe, type StartedServe } from "../../../webhook/src/cli/serve-runtime.js";
import { createLogger } from "../../../webhook/src/server/logger.js";
import { selfSignedTls } from "../../../webhook/src/server/tls.js";
import {
  startApiServer,
  type KubeObject,
  type TestApiServer,
} from "../../support/apiserver/index.js";
import { httpsRequest, postJson, type HttpResponse } from "../../support/https-client.js";
import { accessKey, review } from "../../support/reviews.js";

type Json = Record<string, unknown>;
const PLANTED_KEY = "planted-4q6bYp0kVvQy8t1Jm2cZrW3xN5sD7fGhK9";
const ADMIN = { groups: ["system:masters", "system:authenticated"], username: "root" };

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

describe("vgate serve over HTTPS", function () {
  this.timeout(30_000);
  let api: TestApiServer;
  let vgate: StartedServe;
  let ca: string;
  let url: string;
  const logLines: string[] = [];

  before(async () => {
    api = await startApiServer();
    const tls = await selfSignedTls();
    ca = tls.cert;
    const dir = mkdtempSync(join(tmpdir(), "vgate-https-"));
    writeFileSync(join(dir, "tls.crt"), tls.cert);
    writeFileSync(join(dir, "tls.key"), tls.key);
    const sink = new Writable({
      write(chunk, _enc, cb) {
        logLines.push(...String(chunk).split("\n").filter(Boolean));
        cb();
      },
    });
    vgate = await startServe(
      {
        port: 0,
        bindAddress: "127.0.0.1",
        tlsCertFile: join(dir, "tls.crt"),
        tlsKeyFile: join(dir, "tls.key"),
        kubeconfig: api.kubeconfigPath,
        groupDomain: "loft.sh",
        adminGroups: ["system:masters"],
        logLevel: "debug",
        dev: false,
      },
      createLogger("debug", sink),
    );
    url = `https://localhost:${vgate.server.port}`;
  });

  after(async () => {
    await vgate?.stop();
    await api?.close();
  });

  afterEach(() => {
    api.setDown(false);
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

  describe("health, readiness and metrics", () => {
    it("answers /healthz", async () => {
      const res = await httpsRequest(`${url}/healthz`, { ca });
      assert.equal(res.status, 200);
      assert.equal(res.text, "ok");
    });

    it("is ready only while the API server answers discovery", async () => {
      assert.equal((await httpsRequest(`${url}/readyz`, { ca })).status, 200);
      api.setDown(true);
      // The positive answer is cached briefly; a fresh server must see the outage.
      const res = await waitFor(
        async () => (await httpsRequest(`${url}/readyz`, { ca })).status === 503,
        12_000,
      );
      assert.ok(res, "readyz never turned 503 while the API server was down");
    });

    it("counts requests by route, operation and allowed, with latency and in-flight", async () => {
      await validate(review({ ...ADMIN, name: "metrics-probe" }));
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
      const r = await validate(review({ name: "ok-key" }));
      assert.equal(r.allowed, true);
      assert.equal(r.status, undefined);
    });

    it("answers AdmissionReviews as JSON in UTF-8 with an exact Content-Length", async () => {
      const res = await post("/validate/ownedaccesskeys", review({ name: "ünïcode-dïsplay" }));
      assert.equal(res.headers["content-type"], "application/json; charset=utf-8");
      assert.equal(Number(res.headers["content-length"]), Buffer.byteLength(res.text));
    });

    it("denies two controller ownerReferences with 422 Invalid and kube's message", async () => {
      const obj = accessKey(
        "two",
        {},
        {
          ownerReferences: [
            {
              apiVersion: "storage.loft.sh/v1",
              kind: "User",
              name: "alice",
              uid: "u1",
              controller: true,
            },
            {
              apiVersion: "storage.loft.sh/v1",
              kind: "Team",
              name: "t",
              uid: "u2",
              controller: true,
            },
          ],
        },
      );
      const r = await validate(review({ ...ADMIN, object: obj }));
      assert.equal(r.allowed, false);
      assert.equal(r.status?.code, 422);
      assert.equal(r.status?.reason, "Invalid");
      assert.match(
        r.status!.message,
        /^OwnedAccessKey\.management\.loft\.sh "two" is invalid: metadata\.ownerReferences: Invalid value: .*Only one reference can have Controller set to true/,
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
      assert.equal(r.status?.details?.group, "management.loft.sh");
    });

    it("rejects another apiVersion with a clear message", async () => {
      const obj = { ...accessKey("v2"), apiVersion: "management.loft.sh/v2" };
      const r = await validate(review({ ...ADMIN, object: obj }));
      assert.equal(r.status?.code, 422);
      assert.match(
        r.status!.message,
        /apiVersion: Unsupported value: "management.loft.sh\/v2": supported values: "management.loft.sh\/v1"/,
      );
    });

    it("warns about deprecated fields and names their replacement", async () => {
      const obj = accessKey("old", {
        allowLoftCli: true,
        rules: [{ verbs: ["get"] }],
        parent: "p",
      });
      const r = await validate(review({ ...ADMIN, object: obj }));
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
      const r = await validate(
        review({ username: "bob", object: accessKey("bobs", { user: "alice" }) }),
      );
      assert.equal(r.status?.code, 403);
      assert.equal(r.status?.reason, "Forbidden");
      assert.match(
        r.status!.message,
        /^ownedaccesskeys\.management\.loft\.sh "bobs" is forbidden: /,
      );
    });

    it("denies deleting another user's key and allows deleting your own", async () => {
      const theirs = accessKey("theirs", { user: "alice" });
      const denied = await validate(
        review({
          operation: "DELETE",
          username: "bob",
          object: null,
          oldObject: theirs,
          name: "theirs",
        }),
      );
      assert.equal(denied.status?.code, 403);
      const mine = await validate(
        review({
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
      const old = accessKey(
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
        review({ ...ADMIN, operation: "UPDATE", object: later, oldObject: old }),
      );
      assert.equal(r.status?.code, 422);
      assert.match(r.status!.message, /metadata\.deletionTimestamp/);
      const earlier = structuredClone(old);
      (earlier.metadata as Json).deletionTimestamp = "2026-01-15T00:00:00Z";
      assert.equal(
        (await validate(review({ ...ADMIN, operation: "UPDATE", object: earlier, oldObject: old })))
          .allowed,
        true,
      );
    });

    it("rejects a request for another resource as a misconfiguration", async () => {
      const body = review({ ...ADMIN });
      ((body.request as Json).resource as Json).resource = "pods";
      const r = await validate(body);
      assert.equal(r.status?.code, 400);
      assert.match(r.status!.message, /check the webhook configuration's rules/);
    });
  });

  describe("blockOwnerDeletion", () => {
    const owned = (name: string, block: boolean | undefined, kind = "User") =>
      accessKey(
        name,
        {},
        {
          ownerReferences: [
            {
              apiVersion: "storage.loft.sh/v1",
              kind,
              name: "alice",
              uid: "owner-uid",
              ...(block === undefined ? {} : { blockOwnerDeletion: block }),
            },
          ],
        },
      );

    it("denies setting it without delete permission on the owner: 422 FieldValueForbidden", async () => {
      api.authorize = (a) => a.groups.includes("system:masters");
      const r = await validate(review({ username: "alice", object: owned("b1", true) }));
      assert.equal(r.status?.code, 422);
      assert.equal(r.status?.reason, "Invalid");
      assert.match(
        r.status!.message,
        /cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't delete/,
      );
      const cause = (r.status?.details?.causes as Json[])[0]!;
      assert.equal(cause.reason, "FieldValueForbidden");
      assert.equal(cause.field, "metadata.ownerReferences[0].blockOwnerDeletion");
      const sar = api.requests.filter((q) => q.path.endsWith("/subjectaccessreviews")).at(-1);
      const spec = (sar?.body as Json).spec as Json;
      assert.equal(spec.user, "alice");
      assert.deepEqual(spec.resourceAttributes, {
        group: "storage.loft.sh",
        version: "v1",
        resource: "users",
        name: "alice",
        verb: "delete",
      });
    });

    it("allows it when the user may delete the owner", async () => {
      api.authorize = (a) =>
        a.groups.includes("system:masters") ||
        (a.user === "alice" && a.verb === "delete" && a.resource === "users" && a.name === "alice");
      const r = await validate(review({ username: "alice", object: owned("b2", true) }));
      assert.equal(r.allowed, true, JSON.stringify(r.status));
    });

    it("asks nothing for an unchanged ownerReference on UPDATE", async () => {
      api.authorize = (a) => a.groups.includes("system:masters");
      const old = owned("b3", true);
      (old.metadata as Json).resourceVersion = "3";
      const next = structuredClone(old);
      (next.spec as Json).description = "changed";
      const before = api.requests.length;
      const r = await validate(
        review({ username: "alice", operation: "UPDATE", object: next, oldObject: old }),
      );
      assert.equal(r.allowed, true, JSON.stringify(r.status));
      assert.equal(
        api.requests.slice(before).filter((q) => q.path.endsWith("/subjectaccessreviews")).length,
        0,
      );
    });

    it("denies an owner kind discovery does not know", async () => {
      const r = await validate(review({ ...ADMIN, object: owned("b4", true, "Gizmo") }));
      assert.equal(r.status?.code, 422);
      assert.match(
        r.status!.message,
        /cannot find RESTMapping for APIVersion storage\.loft\.sh\/v1 Kind Gizmo/,
      );
    });

    it("fails closed with 503 when the API server is down", async () => {
      api.setDown(true);
      const r = await validate(review({ username: "alice", object: owned("b5", true) }));
      assert.equal(r.allowed, false);
      assert.equal(r.status?.code, 503);
    });
  });

  describe("mutate", () => {
    it("fills in the CREATE defaults as a JSONPatch", async () => {
      const obj = {
        apiVersion: "management.loft.sh/v1",
        kind: "OwnedAccessKey",
        metadata: { name: "fresh" },
        spec: {},
      };
      const r = await mutate(review({ username: "carol", object: obj }));
      assert.equal(r.allowed, true);
      assert.equal(r.patchType, "JSONPatch");
      const ops = patchOf(r);
      const byPath = new Map(ops.map((o) => [o.path, o.value]));
      assert.equal(byPath.get("/spec/user"), "carol");
      assert.equal(byPath.get("/spec/type"), "User");
      assert.equal(byPath.get("/spec/displayName"), "fresh");
      assert.match(String(byPath.get("/spec/key")), /^[A-Za-z0-9_-]{43,}$/);
    });

    it("generates a name for generateName, checked against the watch cache", async () => {
      const obj = {
        apiVersion: "management.loft.sh/v1",
        kind: "OwnedAccessKey",
        metadata: { generateName: "ci-" },
        spec: { user: "alice" },
      };
      // vgate's access key cache is synced while its watch of ownedaccesskeys is open.
      const keys = "/apis/management.loft.sh/v1/ownedaccesskeys";
      const watching = () => api.openWatches().some((q) => q.path === keys);
      assert.ok(await waitFor(async () => watching(), 15_000), "the access key cache syncs");
      const before = api.requests.length;
      const r = await mutate(review({ object: obj, name: "" }));
      const name = patchOf(r).find((o) => o.path === "/metadata/name")?.value as string;
      assert.match(name, /^ci-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
      assert.equal(api.get("management.loft.sh/v1", "OwnedAccessKey", name), undefined);
      const gets = api.requests
        .slice(before)
        .filter((q) => q.method === "GET" && q.path.includes("/ownedaccesskeys/"));
      assert.deepEqual(gets, [], "the synced cache answered without a GET");
    });

    it("does not generate a name the watch cache knows is taken", async () => {
      const keys = "/apis/management.loft.sh/v1/ownedaccesskeys";
      assert.ok(await waitFor(async () => api.openWatches().some((q) => q.path === keys), 15_000));
      const before = api.requests.length;
      const r = await mutate(review({ object: accessKey("cached-taken") }));
      assert.equal(r.allowed, true, "not taken yet");
      api.put(accessKey("cached-taken") as unknown as KubeObject);
      let denied: Review["response"] | undefined;
      await waitFor(async () => {
        const again = await mutate(review({ object: accessKey("cached-taken") }));
        if (again.status?.code === 409) denied = again;
        return denied !== undefined;
      }, 2_000);
      assert.equal(denied?.status?.reason, "AlreadyExists");
      const gets = api.requests
        .slice(before)
        .filter((q) => q.method === "GET" && q.path.includes("/ownedaccesskeys/"));
      assert.deepEqual(gets, []);
    });

    it("answers 409 AlreadyExists for an explicit name that exists", async () => {
      api.put(accessKey("taken") as unknown as KubeObject);
      const r = await mutate(review({ object: accessKey("taken") }));
      assert.equal(r.allowed, false);
      assert.equal(r.status?.code, 409);
      assert.equal(r.status?.reason, "AlreadyExists");
      assert.equal(r.status?.message, 'ownedaccesskeys.management.loft.sh "taken" already exists');
    });

    it("fails closed with 503 and a clear message when the API server is down", async () => {
      api.setDown(true);
      const r = await mutate(review({ object: accessKey("down") }));
      assert.equal(r.status?.code, 503);
      assert.match(r.status!.message, /cannot check whether/);
    });

    it("leaves UPDATE objects alone", async () => {
      const old = accessKey("u", {}, { resourceVersion: "1" });
      const r = await mutate(review({ operation: "UPDATE", object: old, oldObject: old }));
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
      const body = review({});
      body.apiVersion = "admission.k8s.io/v1beta1";
      await expectStatus(
        await post("/validate/ownedaccesskeys", body),
        400,
        /admission\.k8s\.io\/v1/,
      );
    });
    it("400 for malformed and truncated JSON", async () => {
      await expectStatus(await raw("{not json"), 400, /not valid JSON/);
      const full = JSON.stringify(review({}));
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
        await raw(JSON.stringify(review({})), "text/plain"),
        415,
        /application\/json/,
      );
      await expectStatus(
        await raw(JSON.stringify(review({})), "application/json; charset=latin1"),
        415,
        /application\/json/,
      );
    });
    it("treats __proto__ keys as data and does not pollute prototypes", async () => {
      const text = JSON.stringify(review({ ...ADMIN })).replace(
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
        const body = review({});
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
        const r = await validate(
          review({ ...ADMIN, name: "g", object: { ...accessKey("g"), ...g } }),
        );
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
        port: vgate.server.port,
        ca,
        servername: "localhost",
      });
      await new Promise<void>((res, rej) => socket.once("secureConnect", res).once("error", rej));
      socket.write(
        "POST /validate/ownedaccesskeys HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{",
      );
      try {
        const r = await validate(review({ ...ADMIN, name: "while-stalled" }));
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
      const body = review({ ...ADMIN, name: "logged-key" });
      await validate(body);
      const uid = (body.request as Json).uid;
      const lines = logLines.map((l) => JSON.parse(l) as Json).filter((l) => l.uid === uid);
      assert.equal(lines.length, 1);
      const line = lines[0]!;
      assert.equal(line.operation, "CREATE");
      assert.equal(line.name, "logged-key");
      assert.equal(line.user, "root");
      assert.equal(line.allowed, true);
      assert.equal(line.code, 200);
      assert.equal(typeof line.latencyMs, "number");
    });

    it("never logs a planted key, in allowed, denied, failing or malformed requests", async () => {
      await validate(review({ ...ADMIN, object: accessKey("p1", { key: PLANTED_KEY }) }));
      await validate(
        review({
          ...ADMIN,
          object: accessKey("P1-bad", {
            key: PLANTED_KEY,
            identity: { connectorData: PLANTED_KEY },
          }),
        }),
      );
      await validate(review({ ...ADMIN, object: accessKey("p2", { key: PLANTED_KEY, ttl: "x" }) }));
      await mutate(
        review({
          object: accessKey("p3", { key: PLANTED_KEY, oidcLogin: { idToken: PLANTED_KEY } }),
        }),
      );
      api.setDown(true);
      await mutate(review({ object: accessKey("p4", { key: PLANTED_KEY }) }));
      api.setDown(false);
      await httpsRequest(`${url}/validate/ownedaccesskeys`, {
        body: `{"spec":{"key":"${PLANTED_KEY}"`,
        headers: { "Content-Type": "application/json", Authorization: `Bearer ${PLANTED_KEY}` },
        ca,
      });
      assert.ok(logLines.length > 0);
      for (const line of logLines) assert.ok(!line.includes(PLANTED_KEY), line);
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
