// The real kubectl against the emulator, through the kubeconfig it writes: what it prints must be
// what it prints against a real cluster.

import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HAVE_KUBECTL, KUBECTL_SKIP_REASON, kubectlFor, type KubectlRun } from "../kubectl.js";
import { startApiServer, type TestApiServer } from "./index.js";

const suite = HAVE_KUBECTL ? describe : describe.skip;
const title = `kubectl against the emulator${KUBECTL_SKIP_REASON}`;

const CRD_YAML = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, kind: Widget, shortNames: [wd]}
  versions:
  - name: v1
    served: true
    storage: true
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
              color: {type: string}
`;

const configMap = (value: string): string => `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: default
data:
  mode: ${value}
`;

suite(title, function () {
  this.timeout(60_000);
  let server: TestApiServer;
  let dir: string;

  before(async () => {
    server = await startApiServer({ crds: "manifests" });
    dir = await mkdtemp(join(tmpdir(), "vgate-kubectl-"));
    for (const name of ["default", "kube-system"]) {
      server.put({
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name },
        spec: { finalizers: ["kubernetes"] },
        status: { phase: "Active" },
      });
    }
  });
  after(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  function kubectl(...args: string[]): Promise<KubectlRun> {
    return kubectlFor(server.kubeconfigPath, join(dir, "cache"))(args);
  }

  async function file(name: string, text: string): Promise<string> {
    const path = join(dir, name);
    await writeFile(path, text);
    return path;
  }

  const lines = (text: string): string[][] =>
    text
      .trim()
      .split("\n")
      .map((l) => l.trim().split(/\s{2,}/));

  it("get namespaces prints NAME STATUS AGE", async () => {
    const run = await kubectl("get", "namespaces");
    assert.equal(run.code, 0, run.stderr);
    const rows = lines(run.stdout);
    assert.deepEqual(rows[0], ["NAME", "STATUS", "AGE"]);
    assert.deepEqual(
      rows.slice(1).map((r) => r.slice(0, 2)),
      [
        ["default", "Active"],
        ["kube-system", "Active"],
      ],
    );
  });

  it("api-resources lists built-ins and the OwnedAccessKey CRD", async () => {
    const run = await kubectl("api-resources");
    assert.equal(run.code, 0, run.stderr);
    const rows = lines(run.stdout);
    assert.deepEqual(rows[0], ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"]);
    assert.deepEqual(
      rows.find((r) => r[0] === "ownedaccesskeys"),
      ["ownedaccesskeys", "oak", "management.loft.sh/v1", "false", "OwnedAccessKey"],
    );
    assert.deepEqual(
      rows.find((r) => r[0] === "configmaps"),
      ["configmaps", "cm", "v1", "true", "ConfigMap"],
    );
    assert.ok(rows.some((r) => r[0] === "leases" && r[1] === "coordination.k8s.io/v1"));
  });

  it("apply creates a ConfigMap, then patches it, then leaves it unchanged", async () => {
    const path = await file("cm.yaml", configMap("a"));
    const first = await kubectl("apply", "-f", path);
    assert.equal(first.code, 0, first.stderr);
    assert.equal(first.stdout.trim(), "configmap/settings created");
    await file("cm.yaml", configMap("b"));
    const second = await kubectl("apply", "-f", path);
    assert.equal(second.code, 0, second.stderr);
    assert.equal(second.stdout.trim(), "configmap/settings configured");
    const cm = server.get("v1", "ConfigMap", "settings", "default");
    assert.deepEqual(cm?.["data"], { mode: "b" });
    const third = await kubectl("apply", "-f", path);
    assert.equal(third.stdout.trim(), "configmap/settings unchanged");
  });

  it("apply installs a CRD and then a custom resource of it; get prints its columns", async () => {
    const crd = await kubectl("apply", "-f", await file("crd.yaml", CRD_YAML));
    assert.equal(crd.code, 0, crd.stderr);
    assert.equal(
      crd.stdout.trim(),
      "customresourcedefinition.apiextensions.k8s.io/widgets.example.com created",
    );
    const wait = await kubectl(
      "wait",
      "--for=condition=Established",
      "crd/widgets.example.com",
      "--timeout=20s",
    );
    assert.equal(wait.code, 0, wait.stderr);
    const cr = `apiVersion: example.com/v1
kind: Widget
metadata: {name: w1, namespace: default}
spec: {size: 3, color: red}
`;
    const applied = await kubectl("apply", "-f", await file("w1.yaml", cr));
    assert.equal(applied.code, 0, applied.stderr);
    assert.equal(applied.stdout.trim(), "widget.example.com/w1 created");
    const table = await kubectl("get", "widgets");
    assert.equal(table.code, 0, table.stderr);
    const rows = lines(table.stdout);
    assert.deepEqual(rows[0], ["NAME", "SIZE"]);
    assert.deepEqual(rows[1], ["w1", "3"]);
    const again = await kubectl(
      "apply",
      "-f",
      await file("w1.yaml", cr.replace("size: 3", "size: 4")),
    );
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.stdout.trim(), "widget.example.com/w1 configured");
  });

  it("get -o yaml prints a custom resource", async () => {
    server.put({
      apiVersion: "management.loft.sh/v1",
      kind: "OwnedAccessKey",
      metadata: { name: "k1" },
      spec: { user: "alice", type: "User", ttl: 60 },
    });
    const run = await kubectl("get", "oak", "k1", "-o", "yaml");
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^apiVersion: management\.loft\.sh\/v1\nkind: OwnedAccessKey\n/);
    assert.match(run.stdout, /\n {2}name: k1\n/);
    assert.match(run.stdout, /\nspec:\n {2}ttl: 60\n {2}type: User\n {2}user: alice\n/);
    const table = await kubectl("get", "oak");
    const rows = lines(table.stdout);
    assert.deepEqual(rows[0], ["NAME", "DISPLAY NAME", "USER", "TYPE", "DISABLED", "TTL", "AGE"]);
  });

  it("describe prints a ConfigMap as on a real cluster", async () => {
    server.put({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "described", namespace: "default", labels: { app: "x" } },
      data: { key: "value" },
    });
    const run = await kubectl("describe", "configmap", "described");
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^Name: {9}described\nNamespace: {4}default\nLabels: {7}app=x\n/);
    assert.match(run.stdout, /\nData\n====\nkey:\n----\nvalue\n/);
  });

  it("delete removes an object and says so", async () => {
    server.put({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "doomed", namespace: "default" },
    });
    const run = await kubectl("delete", "configmap", "doomed");
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout.trim(), 'configmap "doomed" deleted');
    assert.equal(server.get("v1", "ConfigMap", "doomed", "default"), undefined);
    const missing = await kubectl("get", "configmap", "doomed");
    assert.equal(missing.code, 1);
    assert.equal(
      missing.stderr.trim(),
      'Error from server (NotFound): configmaps "doomed" not found',
    );
  });
});
