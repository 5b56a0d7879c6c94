// What a new user tries first with kubectl, which the emulator got wrong: strict field validation
// of a typo'd field, `kubectl create clusterrolebinding`, server-side apply through vgate's
// webhooks, and the server's version.

import assert from "node:assert/strict";
import { itKubectl, type Contract } from "./contract.js";
import { GENERATED_KEY } from "./create.js";
import { kubeVersions } from "../support/kube/binaries.js";
import { stdinManifest } from "../support/kubectl.js";

export function firstStepsTests(c: Contract): void {
  itKubectl("apply with a typo'd spec field is refused by strict field validation", async () => {
    const name = c.name("typo");
    c.cleanup.add(() => c.kubectl(["delete", "oak", name, "--ignore-not-found"]));
    const res = await c.kubectl(
      ["apply", "-f", "-"],
      stdinManifest(c.manifest({ name }, { usr: "alice" })),
    );
    assert.equal(res.code, 1, res.stdout);
    assert.equal(
      res.stderr.trim(),
      `Error from server (BadRequest): error when creating "STDIN": OwnedAccessKey in version "v1" cannot be handled as a OwnedAccessKey: strict decoding error: unknown field "spec.usr"`,
    );
    assert.equal((await c.kubectl(["get", "oak", name])).code, 1, "nothing was stored");
  });

  itKubectl("apply --server-side goes through vgate's webhooks", async () => {
    const name = c.name("ssa");
    c.cleanup.add(() => c.kubectl(["delete", "oak", name, "--ignore-not-found"]));
    const res = await c.kubectl(
      ["apply", "--server-side", "--field-manager=first-steps", "-f", "-"],
      stdinManifest(c.manifest({ name }, { displayName: "applied" })),
    );
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.stdout.trim(), `ownedaccesskey.${c.group}/${name} serverside-applied`);
    const stored = await c.keys().get(name);
    assert.equal(stored.spec?.displayName, "applied");
    assert.match(String(stored.spec?.key), GENERATED_KEY, "the mutating webhook filled the key");
    const managers = (stored.metadata.managedFields ?? []).map((m) => [m.manager, m.operation]);
    assert.deepEqual(managers, [["first-steps", "Apply"]]);
  });

  itKubectl("create clusterrolebinding, then the bound user may list keys", async () => {
    const binding = c.name("ci-read");
    const user = c.user("ci");
    c.cleanup.add(() => c.kubectl(["delete", "clusterrolebinding", binding, "--ignore-not-found"]));
    c.cleanup.add(() => c.kubectl(["delete", "clusterrole", binding, "--ignore-not-found"]));
    const role = await c.kubectl([
      "create",
      "clusterrole",
      binding,
      "--verb=get,list,watch",
      `--resource=ownedaccesskeys.${c.group}`,
    ]);
    assert.equal(role.code, 0, role.stderr);
    const res = await c.kubectl([
      "create",
      "clusterrolebinding",
      binding,
      `--clusterrole=${binding}`,
      `--user=${user}`,
    ]);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(
      res.stdout.trim(),
      `clusterrolebinding.rbac.authorization.k8s.io/${binding} created`,
    );
    const can = await c.kubectl([
      "auth",
      "can-i",
      "list",
      `ownedaccesskeys.${c.group}`,
      `--as=${user}`,
    ]);
    assert.equal(can.stdout.trim(), "yes", can.stderr);
  });

  itKubectl("version: the server reports the Kubernetes release it runs", async () => {
    const res = await c.kubectl(["version", "-o", "json"]);
    assert.equal(res.code, 0, res.stderr);
    const server = (JSON.parse(res.stdout) as { serverVersion: Record<string, string> })
      .serverVersion;
    assert.match(server["gitVersion"]!, /^v1\.\d+\.\d+/);
    assert.equal(server["major"], "1");
    if (c.cluster.target === "test-rig") assert.equal(server["gitVersion"], kubeVersions().kube);
  });
}
