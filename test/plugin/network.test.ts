// kubectl accesskey on the network as kubectl (client-go) is: a server that accepts TCP but never
// completes the TLS handshake is given up on after client-go's TLSHandshakeTimeout (10 s), whatever
// --request-timeout says; --request-timeout is read as clientcmd.ParseTimeout reads it and sent as
// `?timeout=`, as rest.Request does; `delete --wait --timeout` ends with kubectl's words.

import assert from "node:assert/strict";
import { createServer, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../support/kube/binaries.js";
import { startHostileServer, type HostileServer } from "./hostile-server.js";
import { pluginCluster, RUN_ID, type PluginCluster } from "./plugin-cluster.js";
import { plugin } from "./plugin-run.js";

/** A TCP server that accepts connections and never says a word: no TLS ServerHello, ever. */
async function silentServer(): Promise<{ url: string; accepted: () => number; close(): void }> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  const server: Server = createServer((socket) => {
    accepted++;
    sockets.add(socket);
    socket.on("error", () => undefined);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    accepted: () => accepted,
    close: () => {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

describe("kubectl accesskey on the network, as kubectl", function () {
  this.timeout(90_000);

  describe("a server that never completes the TLS handshake", () => {
    let silent: Awaited<ReturnType<typeof silentServer>>;
    before(async () => (silent = await silentServer()));
    after(() => silent?.close());

    it("fails with kubectl's TLS handshake timeout instead of hanging", async () => {
      const started = Date.now();
      const r = await plugin(["get", "k", "--server", silent.url, "--insecure-skip-tls-verify"], {
        timeoutMs: 60_000,
      });
      const took = Date.now() - started;
      assert.equal(r.code, 1, `exit ${r.code} after ${took} ms: ${r.stderr}`);
      assert.equal(r.stdout, "");
      assert.equal(
        r.stderr,
        "Unable to connect to the server: net/http: TLS handshake timeout (no TLS answer within 10s)\n",
      );
      assert.ok(silent.accepted() >= 1, "the plugin reached the server");
      // The property: it gives up on its own, well before a generous bound (kubectl: 10 s).
      assert.ok(took < 40_000, `gave up only after ${took} ms`);
    });

    it("a shorter --request-timeout ends the wait first, as client-go's deadline does", async () => {
      const r = await plugin(
        ["list", "--server", silent.url, "--insecure-skip-tls-verify", "--request-timeout", "1"],
        { timeoutMs: 60_000 },
      );
      assert.equal(r.code, 1);
      assert.equal(
        r.stderr,
        "Unable to connect to the server: API server did not answer within 1000 ms (--request-timeout)\n",
      );
    });
  });

  it("a connection reset by the server: Go's words, never an errno name", async () => {
    // A fault kube-apiserver does not make: accept, then reset (RST) at once.
    const server = createServer((socket) => socket.resetAndDestroy());
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    const { port } = server.address() as AddressInfo;
    try {
      const r = await plugin([
        "get",
        "k",
        "--server",
        `https://127.0.0.1:${port}`,
        "--insecure-skip-tls-verify",
      ]);
      assert.equal(r.code, 1);
      assert.equal(
        r.stderr,
        `Unable to connect to the server: read tcp 127.0.0.1:${port}: connection reset by peer\n`,
      );
    } finally {
      server.close();
    }
  });

  describe("--request-timeout", () => {
    let server: HostileServer;
    before(async () => {
      server = await startHostileServer();
      server.answer("GET", "/apis/management.loft.sh/v1/ownedaccesskeys/k", {
        status: 200,
        body: {
          apiVersion: "management.loft.sh/v1",
          kind: "OwnedAccessKey",
          metadata: { name: "k", creationTimestamp: "2026-01-01T00:00:00Z" },
          spec: {},
        },
      });
    });
    after(() => server?.close());

    const sentTimeout = async (args: string[]): Promise<string | null> => {
      const before = server.requests.length;
      const r = await plugin([
        "get",
        "k",
        "-o",
        "name",
        "--server",
        server.url,
        "--insecure-skip-tls-verify",
        ...args,
      ]);
      assert.equal(r.code, 0, r.stderr);
      const sent = server.requests.slice(before).find((q) => q.method === "GET");
      assert.ok(sent, "the plugin sent a GET");
      return new URLSearchParams(sent.query).get("timeout");
    };

    it("0 (the default) sends no deadline; a value is sent as ?timeout= in Go's form", async () => {
      assert.equal(await sentTimeout([]), null);
      assert.equal(await sentTimeout(["--request-timeout", "0"]), null);
      assert.equal(await sentTimeout(["--request-timeout", "5"]), "5s");
      assert.equal(await sentTimeout(["--request-timeout=90s"]), "1m30s");
      assert.equal(await sentTimeout(["--request-timeout", "1.5s"]), "1.5s");
      assert.equal(await sentTimeout(["--request-timeout", "2h"]), "2h0m0s");
    });

    it("a value clientcmd.ParseTimeout refuses is an error naming the flag, before any request", async () => {
      for (const bad of ["5x", "-1s", "ten"]) {
        const before = server.requests.length;
        const r = await plugin([
          "get",
          "k",
          "--server",
          server.url,
          "--insecure-skip-tls-verify",
          `--request-timeout=${bad}`,
        ]);
        assert.equal(r.code, 1);
        assert.equal(
          r.stderr,
          `error: invalid --request-timeout "${bad}": give a whole number of seconds, or a number with a unit (e.g. 1s, 2m, 3h); 0 means no timeout\n`,
        );
        assert.equal(server.requests.length, before);
      }
    });
  });

  it("delete --timeout takes Go durations only, as kubectl's does; its help gives the default", async () => {
    const r = await plugin([
      "delete",
      "k",
      "--wait",
      "--timeout",
      "30",
      "--server",
      "https://127.0.0.1:1",
    ]);
    assert.equal(r.code, 1);
    assert.equal(
      r.stderr,
      'error: invalid --timeout "30": give a number with a unit (e.g. 30s, 5m, 1h30m); 0 means the default\n',
    );
    const help = await plugin(["delete", "--help"]);
    assert.match(
      help.stdout,
      /--timeout=0s:\n\tHow long --wait waits \(e\.g\. 30s, 5m\); 0: a week, as kubectl delete\n/,
    );
  });
});

(HAVE_KUBE ? describe : describe.skip)(
  `kubectl accesskey delete --wait on a real cluster${KUBE_SKIP_REASON}`,
  function () {
    this.timeout(90_000);
    let env: PluginCluster;
    const held = `held-timeout-${RUN_ID}`;

    before(async function () {
      this.timeout(120_000);
      env = await pluginCluster();
    });
    after(async () => env && (await env.cleanup([held])));

    it("a key held by a finalizer past --timeout: kubectl's timed-out sentence naming the finalizer, exit 1", async () => {
      const created = await plugin(["create", held], { kubeconfig: env.admin });
      assert.equal(created.code, 0, created.stderr);
      await env.cluster.admin.request(
        "PATCH",
        `/apis/${env.cluster.group}/v1/ownedaccesskeys/${held}`,
        { metadata: { finalizers: ["example.com/hold"] } },
        { "Content-Type": "application/merge-patch+json" },
      );
      const r = await plugin(["delete", held, "--wait", "--timeout", "1500ms"], {
        kubeconfig: env.admin,
      });
      assert.equal(r.code, 1);
      assert.equal(r.stdout, `ownedaccesskey.management.loft.sh "${held}" deleted\n`);
      assert.equal(
        r.stderr,
        `error: timed out waiting for the condition on ownedaccesskeys/${held}: still there after 1.5s, waiting for its finalizers (example.com/hold)\n`,
      );
    });
  },
);
