import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import {
  KubeConfigError,
  NO_KUBECONFIG_MESSAGE,
  kubeconfigFiles,
  loadKubeConfig,
} from "../../../webhook/src/shared/kubeconfig.js";
import { kubeconfigYaml } from "../../support/kube/kubeconfig-file.js";

const CA = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

async function rejectionOf(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof KubeConfigError, `expected a KubeConfigError, got ${String(err)}`);
    return err;
  }
  assert.fail("expected a rejection");
}

describe("loadKubeConfig", () => {
  let dir: string;
  let one: string;
  let two: string;
  let saDir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "vgate-kubeconfig-"));
    one = join(dir, "one");
    two = join(dir, "two");
    await writeFile(
      one,
      kubeconfigYaml({ server: "https://one.example:6443", caPem: CA, token: "t1", name: "one" }),
    );
    await writeFile(
      two,
      kubeconfigYaml({ server: "https://two.example:6443", caPem: CA, token: "t2", name: "two" }),
    );
    saDir = join(dir, "sa");
    await mkdir(saDir);
    await writeFile(join(saDir, "token"), "sa-token");
    await writeFile(join(saDir, "ca.crt"), CA);
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it("loads an explicit path, ahead of KUBECONFIG", async () => {
    const kc = await loadKubeConfig({ kubeconfig: one, env: { KUBECONFIG: two } });
    assert.equal(kc?.getCurrentCluster()?.server, "https://one.example:6443");
    assert.equal(kc?.getCurrentUser()?.token, "t1");
  });

  it("loads KUBECONFIG when no path is given", async () => {
    const kc = await loadKubeConfig({ env: { KUBECONFIG: two } });
    assert.equal(kc?.getCurrentCluster()?.server, "https://two.example:6443");
  });

  it("merges a KUBECONFIG list, the first file's current-context winning", async () => {
    const kc = await loadKubeConfig({
      env: { KUBECONFIG: `${two}${delimiter}${delimiter}${one}` },
    });
    assert.equal(kc?.getCurrentContext(), "two");
    assert.deepEqual(
      kc?.contexts.map((c) => c.name),
      ["two", "one"],
    );
  });

  it("keeps the first of duplicate names instead of failing", async () => {
    const kc = await loadKubeConfig({ env: { KUBECONFIG: `${one}${delimiter}${one}` } });
    assert.equal(kc?.clusters.length, 1);
  });

  it("uses the service account in a cluster", async () => {
    const env = { KUBERNETES_SERVICE_HOST: "10.0.0.1", KUBERNETES_SERVICE_PORT: "443" };
    const kc = await loadKubeConfig({ env, serviceAccountDir: saDir });
    assert.equal(kc?.getCurrentCluster()?.server, "https://10.0.0.1:443");
    assert.equal(kc?.getCurrentCluster()?.caFile, join(saDir, "ca.crt"));
    assert.equal(kc?.getCurrentUser()?.authProvider?.config?.tokenFile, join(saDir, "token"));
  });

  it("brackets an IPv6 service host", async () => {
    const env = { KUBERNETES_SERVICE_HOST: "fd00::1", KUBERNETES_SERVICE_PORT: "443" };
    const kc = await loadKubeConfig({ env, serviceAccountDir: saDir });
    assert.equal(kc?.getCurrentCluster()?.server, "https://[fd00::1]:443");
  });

  it("does not use the service account without KUBERNETES_SERVICE_HOST or the token file", async () => {
    assert.equal(
      await loadKubeConfig({ env: {}, serviceAccountDir: saDir, allowMissing: true }),
      null,
    );
    const env = { KUBERNETES_SERVICE_HOST: "10.0.0.1", KUBERNETES_SERVICE_PORT: "443" };
    const none = join(dir, "no-such-dir");
    assert.equal(await loadKubeConfig({ env, serviceAccountDir: none, allowMissing: true }), null);
  });

  it("fails with a clear message when nothing is configured", async () => {
    const err = await rejectionOf(
      loadKubeConfig({ env: {}, serviceAccountDir: join(dir, "none") }),
    );
    assert.equal(err.message, NO_KUBECONFIG_MESSAGE);
    assert.equal(
      err.message,
      "no kubeconfig: pass --kubeconfig, set KUBECONFIG, or run in a cluster",
    );
  });

  it("names a file that does not exist", async () => {
    const missing = join(dir, "missing");
    const err = await rejectionOf(loadKubeConfig({ kubeconfig: missing, env: {} }));
    assert.match(err.message, /^cannot read kubeconfig ".*missing": no such file; check the path$/);
    const viaEnv = await rejectionOf(
      loadKubeConfig({ env: { KUBECONFIG: missing }, allowMissing: true }),
    );
    assert.ok(viaEnv.message.includes(JSON.stringify(missing)));
  });

  it("names a file that is not a usable kubeconfig", async () => {
    const broken = join(dir, "broken");
    await writeFile(broken, "clusters: [ {");
    assert.match(
      (await rejectionOf(loadKubeConfig({ kubeconfig: broken }))).message,
      /^cannot parse kubeconfig ".*broken"/,
    );
    const empty = join(dir, "empty");
    await writeFile(empty, "apiVersion: v1\nkind: Config\n");
    assert.match(
      (await rejectionOf(loadKubeConfig({ kubeconfig: empty }))).message,
      /".*empty" has no current-context/,
    );
    const noServer = join(dir, "no-server");
    await writeFile(noServer, "clusters:\n- name: c\n  cluster: {}\n");
    assert.match(
      (await rejectionOf(loadKubeConfig({ kubeconfig: noServer }))).message,
      /no-server.*server is missing/,
    );
  });
});

describe("kubeconfigFiles", () => {
  it("prefers the explicit path and splits KUBECONFIG, skipping empty entries", () => {
    assert.deepEqual(kubeconfigFiles("/x", { KUBECONFIG: "/a" }), ["/x"]);
    assert.deepEqual(kubeconfigFiles(undefined, { KUBECONFIG: `/a${delimiter}${delimiter}/b` }), [
      "/a",
      "/b",
    ]);
    assert.deepEqual(kubeconfigFiles(undefined, { KUBECONFIG: "" }), []);
    assert.deepEqual(kubeconfigFiles(undefined, {}), []);
  });
});
