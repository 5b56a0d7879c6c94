// kubectl accesskey as the single executable of make plugin-binary (what this platform's krew
// archive ships): it says and does what node with the bundle does, with no node involved, and
// loads @kubernetes/client-node from its embedded asset when a kubeconfig names a legacy auth
// provider. On Linux, where make test builds it, a missing executable fails the tests.

import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { selfSignedTls } from "../../webhook/src/server/tls.js";
import { HAVE_KUBE, KUBE_SKIP_REASON } from "../support/kube/binaries.js";
import { testTempDir } from "../support/temp-dir.js";
import { pluginCluster, RUN_ID, type PluginCluster } from "./plugin-cluster.js";
import { plugin, singleBinary, SINGLE_BINARY } from "./plugin-run.js";

const onLinux = process.platform === "linux" ? describe : describe.skip;

onLinux("kubectl accesskey as a single executable (make plugin-binary)", function () {
  this.timeout(60_000);

  before(() => {
    assert.ok(existsSync(SINGLE_BINARY), `${SINGLE_BINARY} is missing: run make plugin-binary`);
  });

  it("is an executable of its own, not a script for node", () => {
    const head = readFileSync(SINGLE_BINARY).subarray(0, 4);
    assert.deepEqual([...head], [0x7f, 0x45, 0x4c, 0x46]);
  });

  it("prints the same help, usage errors and version as node with the bundle", async () => {
    for (const args of [
      ["--help"],
      ["list", "--help"],
      ["version", "-o", "json"],
      ["lsit"],
      ["list", "--bogus"],
      ["completion", "zsh"],
      ["__complete", "dis"],
    ]) {
      const [ours, node] = await Promise.all([singleBinary(args), plugin(args)]);
      assert.deepEqual(ours, node, args.join(" "));
    }
  });

  it("sends a legacy OIDC auth provider's id-token, loading client-node from its asset", async () => {
    const tls = await selfSignedTls(["127.0.0.1"]);
    const seen: (string | undefined)[] = [];
    const server: Server = createServer({ cert: tls.cert, key: tls.key }, (req, res) => {
      seen.push(req.headers.authorization);
      res.setHeader("content-type", "application/json");
      res.end(
        JSON.stringify({
          apiVersion: "management.loft.sh/v1",
          kind: "OwnedAccessKeyList",
          items: [],
        }),
      );
    });
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    try {
      const { port } = server.address() as AddressInfo;
      const claims = Buffer.from(JSON.stringify({ exp: 4_102_444_800, sub: "o" })).toString(
        "base64url",
      );
      const idToken = `eyJhbGciOiJub25lIn0.${claims}.`;
      const kubeconfig = join(testTempDir("accesskey-single-binary-"), "oidc.kubeconfig");
      writeFileSync(
        kubeconfig,
        [
          "apiVersion: v1",
          "kind: Config",
          `clusters: [{name: c, cluster: {server: "https://127.0.0.1:${port}", insecure-skip-tls-verify: true}}]`,
          "users: [{name: u, user: {auth-provider: {name: oidc, config:",
          `  {client-id: c, idp-issuer-url: "https://issuer.invalid", id-token: "${idToken}"}}}}]`,
          "contexts: [{name: c, context: {cluster: c, user: u}}]",
          "current-context: c",
          "",
        ].join("\n"),
      );
      const r = await singleBinary(["list", "--all"], { kubeconfig });
      assert.equal(r.code, 0, r.stderr);
      // No warning from the executable's require (client-node's optional modules are absent).
      assert.equal(r.stderr, "No resources found\n");
      assert.deepEqual(seen, [`Bearer ${idToken}`]);
    } finally {
      await new Promise((done) => server.close(done));
    }
  });

  (HAVE_KUBE ? describe : describe.skip)(`against a real cluster${KUBE_SKIP_REASON}`, () => {
    let env: PluginCluster;
    let user: string;
    const name = `single-${RUN_ID}`;

    before(async function () {
      this.timeout(120_000);
      env = await pluginCluster();
      user = await env.userKubeconfig(`erin-${RUN_ID}`);
    });
    after(async () => env && (await env.cleanup([name])));

    it("creates, lists, gets and deletes a key as node with the bundle does", async () => {
      const create = await singleBinary(["create", name, "--ttl", "1h"], { kubeconfig: user });
      assert.equal(create.code, 0, create.stderr);
      assert.match(create.stdout, /^[A-Za-z0-9_-]{43}\n$/);
      for (const args of [
        ["list", "-o", "name"],
        ["get", name, "-o", "json"],
        ["list", "--all", "-o", "yaml"],
        ["whoami"],
      ]) {
        const [ours, node] = await Promise.all([
          singleBinary(args, { kubeconfig: env.admin }),
          plugin(args, { kubeconfig: env.admin }),
        ]);
        assert.equal(ours.code, 0, ours.stderr);
        assert.deepEqual(ours, node, args.join(" "));
      }
      const del = await singleBinary(["delete", name], { kubeconfig: user });
      assert.equal(del.stdout, `ownedaccesskey.management.loft.sh "${name}" deleted\n`);
    });
  });
});
