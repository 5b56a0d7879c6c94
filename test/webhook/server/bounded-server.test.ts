// The limits of `vgate serve` seen from outside: a real `vgate serve --dev` process and clients
// that write exactly the bytes they want, when they want. Sizes, the shared budget for bodies in
// flight, time limits, and answers that never echo a secret (docs/decisions.md OAK-11).

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { CONNECTION_LIMITS } from "../../../webhook/src/server/app.js";
import {
  BODY_DEADLINE_MS,
  BODY_IDLE_MS,
  MAX_BODY_BYTES,
  MAX_BODY_BYTES_IN_FLIGHT,
  RETRY_AFTER_SECONDS,
} from "../../../webhook/src/server/body.js";
import { connect as tcpConnect } from "node:net";
import { repoRoot } from "../../support/fixtures.js";
import { httpsRequest, type HttpResponse } from "../../support/https-client.js";
import {
  postHead,
  rawConnect,
  startDevServe,
  type DevServe,
  type RawExchange,
} from "./dev-serve.js";

type Json = Record<string, unknown>;

/**
 * "At once" on a shared, noisy 2-core machine: these answers take a few milliseconds, and a test
 * that allowed them only that long would fail whenever the machine is busy.
 */
const AT_ONCE_MS = 2_000;
/** Added to each time limit before a test calls it missed (Node checks some only every second). */
const SLACK_MS = 3_000;

const EXAMPLE = readFileSync(resolve(repoRoot, "webhook/examples/admission-review.json"));
const example = (): Json => JSON.parse(EXAMPLE.toString("utf8")) as Json;

describe("vgate serve: bounded requests", function () {
  this.timeout(60_000);
  let vgate: DevServe;
  const open: RawExchange[] = [];

  before(async () => {
    vgate = await startDevServe();
  });
  afterEach(() => {
    for (const ex of open.splice(0)) ex.socket.destroy();
  });
  after(async () => {
    await vgate?.stop();
  });

  /** A POST with a Content-Length, as kube-apiserver sends it. */
  const post = (route: string, body: string | Buffer): Promise<HttpResponse> =>
    httpsRequest(`${vgate.url}/${route}`, {
      body,
      headers: {
        "Content-Type": "application/json",
        "Content-Length": String(Buffer.byteLength(body)),
      },
    });
  const connectRaw = (head: string): RawExchange => {
    const ex = rawConnect(vgate.port, head);
    open.push(ex);
    return ex;
  };
  const statusOf = (text: string) =>
    JSON.parse(text) as { code: number; reason: string; message: string; details?: Json };
  /** vgate's own count of body bytes in flight, from /metrics. */
  const bytesInFlight = async (): Promise<number> => {
    const text = (await httpsRequest(`${vgate.url}/metrics`)).text;
    return Number(/^vgate_request_body_bytes_in_flight (\d+)$/m.exec(text)?.[1]);
  };
  const waitFor = async (check: () => Promise<boolean>, ms: number): Promise<boolean> => {
    for (
      const end = Date.now() + ms;
      Date.now() < end;
      await new Promise((r) => setTimeout(r, 50))
    ) {
      if (await check()) return true;
    }
    return false;
  };

  it("answers a declared Content-Length over 3 MiB with 413 at once, before any of the body", async () => {
    // Not one byte of the body is ever sent: the answer cannot have waited for it.
    const ex = connectRaw(postHead({ "Content-Length": 100 * 1024 * 1024 }));
    const answer = await ex.answer;
    assert.equal(answer.status, 413);
    assert.ok(answer.ms < AT_ONCE_MS, `413 after ${answer.ms} ms`);
    assert.equal(answer.headers.connection, "close");
    assert.match(statusOf(answer.body).message, new RegExp(`larger than ${MAX_BODY_BYTES} bytes`));
    assert.ok((await ex.closed) < AT_ONCE_MS + 1_000, "the connection is closed after the 413");
  });

  it("answers a chunked body that grows past 3 MiB with 413, and takes a small chunked one", async () => {
    const chunked = (body: Buffer) =>
      `${body.length.toString(16)}\r\n${body.toString("latin1")}\r\n`;
    const big = connectRaw(postHead({ "Transfer-Encoding": "chunked" }));
    const piece = Buffer.alloc(1024 * 1024, 0x20);
    await new Promise((r) => big.socket.once("secureConnect", r));
    for (let i = 0; i < 4; i++) big.socket.write(chunked(piece), "latin1");
    assert.equal((await big.answer).status, 413);
    const small = connectRaw(
      `${postHead({ "Transfer-Encoding": "chunked" })}${chunked(EXAMPLE)}0\r\n\r\n`,
    );
    const answer = await small.answer;
    assert.equal(answer.status, 200, answer.body);
    assert.equal(
      (JSON.parse(answer.body) as { response: { allowed: boolean } }).response.allowed,
      true,
    );
  });

  it("refuses with 429 and Retry-After when bodies in flight would pass the cap, yet takes a small one", async () => {
    // Fill the budget exactly with large bodies that trickle in (so none is cut off as idle).
    const sizes: number[] = [];
    for (let left = MAX_BODY_BYTES_IN_FLIGHT; left > 0; left -= sizes.at(-1)!) {
      sizes.push(Math.min(left, MAX_BODY_BYTES));
    }
    const holders = sizes.map((size) => connectRaw(`${postHead({ "Content-Length": size })}{`));
    const trickle = setInterval(() => {
      for (const h of holders) if (!h.socket.destroyed) h.socket.write(" ");
    }, 250);
    try {
      const full = await waitFor(
        async () => (await bytesInFlight()) === MAX_BODY_BYTES_IN_FLIGHT,
        5_000,
      );
      assert.ok(full, `the budget never filled: ${await bytesInFlight()} bytes in flight`);
      // Another large body does not fit, and pushes out none of its own size.
      const refused = await connectRaw(postHead({ "Content-Length": MAX_BODY_BYTES })).answer;
      assert.equal(refused.status, 429);
      assert.ok(refused.ms < AT_ONCE_MS, `429 after ${refused.ms} ms`);
      assert.equal(refused.headers["retry-after"], String(RETRY_AFTER_SECONDS));
      const status = statusOf(refused.body);
      assert.equal(status.reason, "TooManyRequests");
      assert.equal(status.details?.retryAfterSeconds, RETRY_AFTER_SECONDS);
      // A small AdmissionReview still gets its answer: a large body still arriving makes room.
      const good = await post("validate/ownedaccesskeys", EXAMPLE);
      assert.equal(good.status, 200, good.text);
      assert.equal(good.json<{ response: { allowed: boolean } }>().response.allowed, true);
      const shed = await Promise.any(holders.map((h) => h.answer));
      assert.equal(shed.status, 429);
      assert.equal(shed.headers["retry-after"], String(RETRY_AFTER_SECONDS));
      const metrics = (await httpsRequest(`${vgate.url}/metrics`)).text;
      assert.match(
        metrics,
        /vgate_request_bodies_refused_total\{route="validate\/ownedaccesskeys",reason="shed"\} [2-9]/,
      );
    } finally {
      clearInterval(trickle);
    }
    for (const h of holders) h.socket.destroy();
    assert.ok(
      await waitFor(async () => (await bytesInFlight()) === 0, 5_000),
      "the bytes came back",
    );
  });

  it("cuts off a body that stalls after BODY_IDLE_MS, and a slow one at BODY_DEADLINE_MS, with 408", async () => {
    const stalled = connectRaw(`${postHead({ "Content-Length": 10_000 })}{"a":`);
    const slow = connectRaw(postHead({ "Content-Length": 1_000_000 }));
    const drip = setInterval(() => {
      if (!slow.socket.destroyed) slow.socket.write(" ");
    }, 200);
    try {
      const idle = await stalled.answer;
      assert.equal(idle.status, 408);
      assert.match(statusOf(idle.body).message, /stalled/);
      assert.ok(
        idle.ms >= BODY_IDLE_MS - 100 && idle.ms < BODY_IDLE_MS + SLACK_MS,
        `${idle.ms} ms`,
      );
      const late = await slow.answer;
      assert.equal(late.status, 408);
      assert.match(statusOf(late.body).message, /not received within/);
      assert.ok(
        late.ms >= BODY_DEADLINE_MS - 100 && late.ms < BODY_DEADLINE_MS + SLACK_MS,
        `${late.ms} ms`,
      );
      assert.ok((await stalled.closed) < BODY_IDLE_MS + SLACK_MS + 1_000);
    } finally {
      clearInterval(drip);
    }
  });

  it("closes connections that never finish their headers or their TLS handshake within seconds", async () => {
    const headers = connectRaw("POST /validate/ownedaccesskeys HTTP/1.1\r\nHost: x\r\n");
    const drip = setInterval(() => {
      if (!headers.socket.destroyed) headers.socket.write("X-A: b\r\n");
    }, 200);
    const silent = connectRaw("");
    const started = Date.now();
    const tcp = tcpConnect({ host: "127.0.0.1", port: vgate.port });
    tcp.on("error", () => undefined);
    const tcpClosed = new Promise<number>((r) => tcp.once("close", () => r(Date.now() - started)));
    try {
      const headersBound =
        CONNECTION_LIMITS.headersTimeout + CONNECTION_LIMITS.connectionsCheckingInterval;
      const [h, s, t] = await Promise.all([headers.closed, silent.closed, tcpClosed]);
      assert.ok(h < headersBound + SLACK_MS, `headers never finished: closed after ${h} ms`);
      assert.ok(s < headersBound + SLACK_MS, `nothing sent: closed after ${s} ms`);
      assert.ok(t < CONNECTION_LIMITS.handshakeTimeout + SLACK_MS, `no TLS: closed after ${t} ms`);
    } finally {
      clearInterval(drip);
      tcp.destroy();
    }
  });

  it("refuses compressed bodies with 415 rather than inflate them past what was counted", async () => {
    const answer = await connectRaw(
      `${postHead({ "Content-Length": EXAMPLE.length, "Content-Encoding": "gzip" })}${EXAMPLE.toString()}`,
    ).answer;
    assert.equal(answer.status, 415);
    assert.match(statusOf(answer.body).message, /uncompressed/);
  });

  describe("answers never echo secrets or raw input", () => {
    const SECRET = "sk-Pl4nted0Secr3tV4lue9xQ2w7Zk1Lm8Np3Rt6Yv";
    const LOOKS_PLAIN = "correct horse battery staple";
    /** Where a hostile or careless client might put a credential, and what vgate says about each. */
    const plantings: Record<string, Edit> = {
      "spec.key of the wrong type": (r) => (r.request.object.spec.key = [SECRET]),
      "spec.key as an object": (r) => (r.request.object.spec.key = { a: SECRET }),
      "a non-credential-looking spec.key": (r) => (r.request.object.spec.key = { a: LOOKS_PLAIN }),
      "connectorData next to a bad value": (r) =>
        (r.request.object.spec.identity = { connectorData: 5, x: LOOKS_PLAIN }),
      "OIDC tokens of wrong types": (r) =>
        (r.request.object.spec.oidcLogin = { idToken: 7, accessToken: [SECRET] }),
      "a label value": (r) => (r.request.object.metadata.labels = { a: `Bearer ${SECRET}` }),
      "the object's name": (r) => {
        r.request.object.metadata.name = `${SECRET}_`;
        r.request.name = `${SECRET}_`;
      },
      "spec.ttl": (r) => (r.request.object.spec.ttl = SECRET),
      "spec.type": (r) => (r.request.object.spec.type = SECRET),
      "spec.scope.projects": (r) => (r.request.object.spec.scope = { projects: SECRET }),
      "a finalizer": (r) => (r.request.object.metadata.finalizers = [`${SECRET}!!`]),
      "metadata itself": (r) => (r.request.object.metadata = SECRET as unknown as Json),
      "request.operation": (r) => (r.request.operation = SECRET),
      "the review's kind": (r) => (r.kind = SECRET),
      "the review's kind, as an object with a key": (r) => (r.kind = { key: LOOKS_PLAIN }),
      "userInfo.extra": (r) =>
        (r.request.userInfo = { username: "u", extra: { token: LOOKS_PLAIN } }),
    };

    let planted = 0;
    for (const [where, plant] of Object.entries(plantings)) {
      it(`a secret in ${where}`, async () => {
        for (const route of ["validate/ownedaccesskeys", "mutate/ownedaccesskeys"]) {
          const body = example();
          (body.request as Json).uid = `planted-${++planted}`;
          plant(body as Parameters<Edit>[0]);
          const res = await post(route, JSON.stringify(body));
          assert.ok(res.status === 200 || res.status === 400, `${res.status} ${res.text}`);
          assert.ok(!res.text.includes(SECRET.slice(3, 15)), res.text);
          assert.ok(!res.text.includes(LOOKS_PLAIN), res.text);
        }
      });
    }

    it("vgate says what was wrong all the same", async () => {
      const body = example() as Parameters<Edit>[0];
      body.request.object.spec.ttl = SECRET;
      const r = (await post("validate/ownedaccesskeys", JSON.stringify(body))).json<{
        response: { status: { message: string } };
      }>().response;
      assert.match(
        r.status.message,
        /spec\.ttl: Invalid value: "\[REDACTED\]": must be of type integer/,
      );
    });

    it("a JSON syntax error names the position, not the text around it", async () => {
      const body = `{"spec":{"key":"${SECRET}",]}}`;
      const at = body.indexOf("]");
      const res = await post("validate/ownedaccesskeys", body);
      assert.equal(res.status, 400);
      assert.equal(
        statusOf(res.text).message,
        `request body is not valid JSON: expected a double-quoted object key at line 1, column ${at + 1} (byte ${at})`,
      );
    });

    it("the client's own headers and paths come back only when they hold nothing like a secret", async () => {
      const type = await httpsRequest(`${vgate.url}/validate/ownedaccesskeys`, {
        body: "{}",
        headers: { "Content-Type": `text/${SECRET}`, "Content-Length": "2" },
      });
      assert.equal(type.status, 415);
      assert.ok(!type.text.includes(SECRET.slice(3, 15)), type.text);
      const path = await httpsRequest(`${vgate.url}/nothing/${SECRET}`);
      assert.equal(path.status, 404);
      assert.ok(!path.text.includes(SECRET.slice(3, 15)), path.text);
      assert.match(
        (await httpsRequest(`${vgate.url}/nothing/here`)).text,
        /no route for GET \/nothing\/here/,
      );
    });

    it("and none of them reached the log", async () => {
      // A last request, to know when everything before it is in the log.
      const marker = example();
      (marker.request as Json).uid = "log-marker";
      await post("validate/ownedaccesskeys", JSON.stringify(marker));
      const last = `"uid":"log-marker"`;
      assert.ok(await waitForLine(() => vgate.logLines().some((l) => l.includes(last))), "logged");
      const log = vgate.logLines().join("\n");
      assert.ok(!log.includes(SECRET.slice(3, 15)), log);
      assert.ok(!log.includes(LOOKS_PLAIN), log);
    });
  });

  it("logs a 5xx answer at error level with its reason, and a 4xx one at info", async () => {
    // --dev has no API server: creating a key needs one to check its name, and fails closed (503).
    const failed = example();
    (failed.request as Json).uid = "uid-5xx";
    const mutate = await post("mutate/ownedaccesskeys", JSON.stringify(failed));
    assert.equal(
      mutate.json<{ response: { status: { code: number } } }>().response.status.code,
      503,
    );
    const denied = example() as Parameters<Edit>[0];
    denied.request.uid = "uid-4xx";
    denied.request.object.spec.ttl = "soon";
    await post("validate/ownedaccesskeys", JSON.stringify(denied));
    const lineOf = (uid: string) =>
      vgate
        .logLines()
        .map((l) => JSON.parse(l) as Json)
        .find((l) => l.uid === uid);
    assert.ok(
      await waitForLine(() => lineOf("uid-5xx") && lineOf("uid-4xx")),
      "both requests were logged",
    );
    const five = lineOf("uid-5xx")!;
    assert.equal(five.level, "error");
    assert.equal(five.code, 503);
    assert.match(String(five.error), /no Kubernetes API server is configured/);
    const four = lineOf("uid-4xx")!;
    assert.equal(four.level, "info");
    assert.equal(four.code, 422);
    assert.equal(four.error, undefined);
  });

  // Mocha runs a block's own tests before its nested blocks: this one runs last.
  describe("afterwards", () => {
    it("is still healthy, and stops cleanly", async () => {
      assert.equal((await httpsRequest(`${vgate.url}/healthz`)).status, 200);
      assert.equal(await vgate.stop(), 0);
    });
  });
});

type Edit = (
  r: { request: Json & { object: Json & { spec: Json; metadata: Json } } } & Json,
) => void;

/** vgate writes its log in 4 KiB batches, at least once a second. */
async function waitForLine(found: () => unknown): Promise<boolean> {
  for (
    const end = Date.now() + 5_000;
    Date.now() < end;
    await new Promise((r) => setTimeout(r, 100))
  ) {
    if (found()) return true;
  }
  return false;
}
