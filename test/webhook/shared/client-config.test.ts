import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import type https from "node:https";
import { createServer, connect, type Server, type AddressInfo } from "node:net";
import { join } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { ClientConfig } from "../../../webhook/src/shared/client-config.js";
import { KubeTransport } from "../../../webhook/src/shared/transport.js";
import { repoRoot } from "../../support/fixtures.js";
import { sharedCluster, type VgateCluster } from "../../support/cluster.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../../support/kube/binaries.js";
import { serviceAccountWith, type TestServiceAccount } from "../../support/kube/service-account.js";
import { suiteTempDir } from "../../support/temp-dir.js";

const b64 = (s: string) => Buffer.from(s).toString("base64");

function kubeconfig(user: string, cluster = "    server: https://example.test:6443"): string {
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    "- name: c",
    "  cluster:",
    cluster,
    "contexts:",
    "- name: ctx",
    "  context: {cluster: c, user: u}",
    "current-context: ctx",
    "users:",
    "- name: u",
    "  user:",
    user,
  ].join("\n");
}

/** What client-node's own KubeConfig and ours set, without agents (compared separately). */
async function applyBoth(yaml: string, dir?: string): Promise<[object, object]> {
  const theirs = new KubeConfig();
  theirs.loadFromString(yaml);
  const ours = new ClientConfig();
  ours.loadFromString(yaml);
  if (dir) {
    theirs.makePathsAbsolute(dir);
    ours.makePathsAbsolute(dir);
  }
  const a: https.RequestOptions = {};
  const b: https.RequestOptions = {};
  await theirs.applyToHTTPSOptions(a);
  await ours.applyToHTTPSOptions(b);
  const strip = (o: https.RequestOptions) =>
    Object.fromEntries(Object.entries(o).filter(([k, v]) => k !== "agent" && v !== undefined));
  return [strip(a), strip(b)];
}

describe("ClientConfig", () => {
  const dir = suiteTempDir("vgate-client-config-");

  describe("sets the same request options as client-node's KubeConfig", () => {
    const cases: Record<string, [string, string?]> = {
      "a bearer token": ["    token: abc.def"],
      "basic auth": ["    username: alice\n    password: s3cret"],
      "inline client certificate and key, and an inline CA": [
        `    client-certificate-data: ${b64("CERT")}\n    client-key-data: ${b64("KEY")}`,
        `    server: https://example.test:6443\n    certificate-authority-data: ${b64("CA")}`,
      ],
      "skip-verify and a TLS server name": [
        "    token: t",
        "    server: https://10.0.0.1:6443\n    insecure-skip-tls-verify: true\n    tls-server-name: api.example.test",
      ],
      impersonation: ["    token: t\n    as: bob"],
    };
    for (const [name, [user, cluster]] of Object.entries(cases)) {
      it(name, async () => {
        const [theirs, ours] = await applyBoth(kubeconfig(user, cluster));
        assert.deepEqual(ours, theirs);
        assert.ok(Object.keys(ours).length > 0);
      });
    }

    it("files relative to the kubeconfig, a file winning over inline data", async () => {
      writeFileSync(join(dir, "ca.crt"), "CA FROM FILE");
      writeFileSync(join(dir, "client.crt"), "CERT FROM FILE");
      const user = `    client-certificate: client.crt\n    client-certificate-data: ${b64("X")}\n    client-key-data: ${b64("KEY")}`;
      const cluster = "    server: https://example.test:6443\n    certificate-authority: ca.crt";
      const [theirs, ours] = await applyBoth(kubeconfig(user, cluster), dir);
      assert.deepEqual(ours, theirs);
      const o = ours as { ca: Buffer; cert: Buffer };
      assert.equal(o.ca.toString(), "CA FROM FILE");
      assert.equal(o.cert.toString(), "CERT FROM FILE");
    });

    it("a token-file user, read when the kubeconfig is loaded", async () => {
      writeFileSync(join(dir, "user-token"), "from-token-file");
      const [theirs, ours] = await applyBoth(
        kubeconfig(`    token-file: ${join(dir, "user-token")}`),
      );
      assert.deepEqual(ours, theirs);
      assert.deepEqual((ours as { headers: object }).headers, {
        Authorization: "Bearer from-token-file",
      });
    });

    it("reads clusters, users and contexts into the objects client-node holds", () => {
      const yaml = [
        "clusters:",
        "- name: a",
        "  cluster: {server: 'https://a.test/', insecure-skip-tls-verify: yes, proxy-url: 'http://p:3128'}",
        "- name: b",
        "  cluster: {server: https://b.test, tls-server-name: b, certificate-authority: /ca}",
        "contexts:",
        "- name: cx",
        "  context: {cluster: a}",
        "- name: cy",
        "  context: {cluster: b, user: u, namespace: ns}",
        "users:",
        "- name: bare",
        "- name: u",
        "  user: {token: t, as: bob, username: al, password: pw, client-key: /k}",
      ].join("\n");
      const theirs = new KubeConfig();
      theirs.loadFromString(yaml);
      const ours = new ClientConfig();
      ours.loadFromString(yaml);
      // YAML 1.1 (`yes`) is ours only: client-node reads YAML 1.2, where `yes` is a string.
      assert.deepEqual(ours.clusters, [
        { ...theirs.clusters[0], skipTLSVerify: true },
        theirs.clusters[1],
      ]);
      assert.deepEqual(ours.users, theirs.users);
      assert.deepEqual(ours.contexts, theirs.contexts);
    });

    it("reads the token file again once it is a minute old, as client-go does", async () => {
      const token = join(dir, "rotating");
      writeFileSync(token, "first");
      const kc = new ClientConfig();
      kc.loadFromString(
        kubeconfig(
          `    auth-provider:\n      name: tokenFile\n      config: {tokenFile: ${token}}`,
        ),
      );
      const header = async () => {
        const opts: https.RequestOptions = {};
        await kc.applyToHTTPSOptions(opts);
        return (opts.headers as Record<string, string>)["Authorization"];
      };
      assert.equal(await header(), "Bearer first");
      writeFileSync(token, "second");
      assert.equal(await header(), "Bearer first");
      const now = Date.now;
      Date.now = () => now() + 61_000;
      try {
        assert.equal(await header(), "Bearer second");
      } finally {
        Date.now = now;
      }
    });

    it("an OIDC auth provider (through client-node's public KubeConfig)", async () => {
      const part = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
      const exp = Math.floor(Date.now() / 1000) + 3600;
      const idToken = `${part({ alg: "none" })}.${part({ exp, sub: "u" })}.sig`;
      const oidc = `    auth-provider:\n      name: oidc\n      config: {client-id: c, idp-issuer-url: 'https://issuer.invalid', id-token: '${idToken}'}`;
      const [theirs, ours] = await applyBoth(kubeconfig(oidc));
      assert.deepEqual(ours, theirs);
      assert.deepEqual((ours as { headers: object }).headers, {
        Authorization: `Bearer ${idToken}`,
      });
    });

    it("a token file (the in-cluster provider) and an exec credential plugin", async () => {
      writeFileSync(join(dir, "token"), "from-file\n");
      const file = `    auth-provider:\n      name: tokenFile\n      config: {tokenFile: ${join(dir, "token")}}`;
      const [t1, o1] = await applyBoth(kubeconfig(file));
      assert.deepEqual(o1, t1);
      const plugin = join(dir, "plugin.mjs");
      writeFileSync(
        plugin,
        `process.stdout.write(JSON.stringify({apiVersion: "client.authentication.k8s.io/v1", kind: "ExecCredential", status: {token: "from-exec"}}));`,
      );
      const exec = `    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: ${process.execPath}\n      args: [${plugin}]\n      interactiveMode: Never`;
      const [t2, o2] = await applyBoth(kubeconfig(exec));
      assert.deepEqual(o2, t2);
      assert.deepEqual((o2 as { headers: object }).headers, { Authorization: "Bearer from-exec" });
    });
  });

  it("reads kubeconfig as YAML 1.1, like kubectl: `yes` is true", async () => {
    const kc = new ClientConfig();
    kc.loadFromString(
      kubeconfig("    token: t", "    server: https://h:6443\n    insecure-skip-tls-verify: yes"),
    );
    assert.equal(kc.getCurrentCluster()?.skipTLSVerify, true);
  });

  it("answers null for a context, cluster or user that is not there", () => {
    const kc = new ClientConfig();
    kc.loadFromString(
      kubeconfig("    token: t").replace("current-context: ctx", "current-context: nope"),
    );
    assert.equal(kc.getContextObject("nope"), null);
    assert.equal(kc.getCurrentCluster(), null);
    assert.equal(kc.getCurrentUser(), null);
  });

  it("rejects entries client-node rejects, naming them", () => {
    const kc = new ClientConfig();
    assert.throws(
      () => kc.loadFromString(kubeconfig("    token: t", "    insecure-skip-tls-verify: true")),
      /clusters\[0\]\.cluster\.server is missing/,
    );
  });

  (HAVE_KUBE ? describe : describe.skip)(`through a proxy-url${KUBE_SKIP_REASON}`, function () {
    this.timeout(60_000);
    let cluster: VgateCluster;
    let account: TestServiceAccount;
    let proxy: Server;
    const tunnels: string[] = [];
    before(async function () {
      this.timeout(120_000);
      cluster = await sharedCluster();
      account = await serviceAccountWith(cluster.plane, "client-config", []);
      // An HTTP CONNECT proxy, as corporate proxies and `kubectl proxy`-less setups use.
      proxy = createServer((client) => {
        client.once("data", (head) => {
          const [, target] = /^CONNECT (\S+) HTTP/.exec(head.toString()) ?? [];
          if (!target) return client.destroy();
          tunnels.push(target);
          const [host, port] = target.split(":");
          const upstream = connect(Number(port), host!, () => {
            client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
            upstream.pipe(client).pipe(upstream);
          });
          upstream.on("error", () => client.destroy());
          client.on("error", () => upstream.destroy());
        });
      });
      await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
    });
    after(async () => {
      proxy?.close();
      await account?.remove();
    });

    it("tunnels to the API server and still verifies its certificate", async () => {
      const port = (proxy.address() as AddressInfo).port;
      const clusterYaml = `    server: ${cluster.url}\n    certificate-authority-data: ${b64(cluster.caPem)}\n    proxy-url: http://127.0.0.1:${port}`;
      const kc = new ClientConfig();
      kc.loadFromString(kubeconfig(`    token: ${account.token}`, clusterYaml));
      const transport = new KubeTransport(kc, { timeoutMs: 10_000 });
      try {
        const res = await transport.request("GET", "/version");
        assert.equal(res.status, 200);
        assert.deepEqual(tunnels, [new URL(cluster.url).host]);
        // The API server says who it saw: the token went through the tunnel.
        const whoami = await transport.request(
          "POST",
          "/apis/authentication.k8s.io/v1/selfsubjectreviews",
          { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" },
        );
        assert.equal(whoami.status, 201);
        const review = whoami.body as { status: { userInfo: { username: string } } };
        assert.equal(review.status.userInfo.username, account.username);
      } finally {
        transport.close();
      }
      // Without the CA the same tunnel must fail certificate verification.
      const untrusted = new ClientConfig();
      untrusted.loadFromString(
        kubeconfig(
          `    token: ${account.token}`,
          clusterYaml.replace(/certificate-authority-data: \S+/, ""),
        ),
      );
      const t2 = new KubeTransport(untrusted, { timeoutMs: 10_000 });
      try {
        await assert.rejects(t2.request("GET", "/version"), /certificate|self.signed/i);
      } finally {
        t2.close();
      }
    });
  });

  it("vgate serve does not load client-node's generated API clients (70 MB resident)", () => {
    // client-node's package entry pulls in its generated clients: about 28 MB of live heap that
    // every major GC of the webhook would walk. Loading the serve code and a kubeconfig must not.
    const script = `
      const rt = await import(${JSON.stringify(join(repoRoot, "dist/webhook/src/cli/serve-runtime.js"))});
      const kc = await import(${JSON.stringify(join(repoRoot, "dist/webhook/src/shared/kubeconfig.js"))});
      void rt;
      await kc.loadKubeConfig({ allowMissing: true, env: {} });
      globalThis.gc();
      process.stdout.write(String(process.memoryUsage().heapUsed));`;
    const used = Number(
      execFileSync(process.execPath, ["--expose-gc", "--input-type=module", "-e", script], {
        encoding: "utf8",
      }),
    );
    const withClientNode = Number(
      execFileSync(
        process.execPath,
        [
          "--expose-gc",
          "--input-type=module",
          "-e",
          `${script.replace("void rt;", "await import('@kubernetes/client-node');")}`,
        ],
        { encoding: "utf8", cwd: repoRoot },
      ),
    );
    assert.ok(withClientNode - used > 15e6, `client-node adds ${withClientNode - used} bytes`);
    assert.ok(used < 25e6, `heap after loading vgate serve: ${used} bytes`);
  });
});
