// Patch (docs/reference.md#ownedaccesskey-operations): a JSON patch, e.g. `add` under
// /metadata/annotations/<annotation_key>; and kubectl's patch --type=json and annotate. A patch is
// an UPDATE to the webhooks, so the validating webhook judges the patched key.

import assert from "node:assert/strict";
import { itClient, itKubectl, type Contract } from "./contract.js";
import { rejection } from "./keys.js";
import { invalidPrefix, validatingDenial } from "./messages.js";

const OWNER = "example.com/owner";
const ROTATED = "example.com/rotated-at";
/** RFC 6901: "/" in a key is written "~1". */
const ROTATED_PATH = "/metadata/annotations/example.com~1rotated-at";

export function patchTests(c: Contract): void {
  itClient("JSON patch adds /metadata/annotations/<key>", async () => {
    const name = c.name("patch");
    const key = await c.createKey({ name, annotations: { [OWNER]: "ci" } });
    const patched = await c
      .keys()
      .jsonPatch(name, [{ op: "add", path: ROTATED_PATH, value: "2025-01-01" }]);
    assert.deepEqual(patched.metadata.annotations, { [OWNER]: "ci", [ROTATED]: "2025-01-01" });
    assert.notEqual(patched.metadata.resourceVersion, key.metadata.resourceVersion);
    assert.equal(patched.metadata.generation, 1, "metadata changes leave generation alone");
    assert.deepEqual(patched.spec, key.spec);
    assert.deepEqual(await c.keys().get(name), patched);
  });

  itClient("JSON patch under /metadata/annotations of a key without any is 422", async () => {
    const name = c.name("patch");
    await c.createKey({ name });
    const status = await rejection(
      c.keys().jsonPatch(name, [{ op: "add", path: ROTATED_PATH, value: "2025-01-01" }]),
    );
    // kube hides the JSON patch library's error behind a generic text.
    assert.equal(status.code, 422);
    assert.equal(status.reason, "Invalid");
    assert.equal(status.message, "the server rejected our request due to an error in our request");
    // Adding the map first works.
    const patched = await c.keys().jsonPatch(name, [
      { op: "add", path: "/metadata/annotations", value: {} },
      { op: "add", path: ROTATED_PATH, value: "2025-01-01" },
    ]);
    assert.deepEqual(patched.metadata.annotations, { [ROTATED]: "2025-01-01" });
  });

  itClient("a JSON patch the validating webhook rejects is its 422", async () => {
    const name = c.name("patch");
    await c.createKey({ name });
    const status = await rejection(
      c.keys().jsonPatch(name, [{ op: "add", path: "/spec/ttl", value: -1 }]),
    );
    assert.equal(status.code, 422);
    assert.equal(
      status.message,
      `${validatingDenial(c.group)}${invalidPrefix(c.group, name)}spec.ttl: Invalid value: -1: must be greater than or equal to 0`,
    );
    assert.equal((await c.keys().get(name)).spec?.ttl, undefined);
  });

  itKubectl("patch --type=json adds the annotation", async () => {
    const name = c.name("patch");
    await c.createKey({ name, annotations: { [OWNER]: "ci" } });
    const ops = JSON.stringify([{ op: "add", path: ROTATED_PATH, value: "2025-01-01" }]);
    const run = await c.kubectl(["patch", "oak", name, "--type=json", "-p", ops]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, `ownedaccesskey.${c.group}/${name} patched\n`);
    assert.deepEqual((await c.keys().get(name)).metadata.annotations, {
      [OWNER]: "ci",
      [ROTATED]: "2025-01-01",
    });
  });

  itKubectl("patch --type=json to a missing annotations map: The request is invalid", async () => {
    const name = c.name("patch");
    await c.createKey({ name });
    const ops = JSON.stringify([{ op: "add", path: ROTATED_PATH, value: "2025-01-01" }]);
    const run = await c.kubectl(["patch", "oak", name, "--type=json", "-p", ops]);
    assert.equal(run.code, 1);
    assert.equal(
      run.stderr,
      "The request is invalid: the server rejected our request due to an error in our request\n",
    );
  });

  itKubectl("annotate sets an annotation; --overwrite changes it", async () => {
    const name = c.name("patch");
    await c.createKey({ name });
    const set = await c.kubectl(["annotate", "oak", name, `${ROTATED}=2025-01-01`]);
    assert.equal(set.code, 0, set.stderr);
    assert.equal(set.stdout, `ownedaccesskey.${c.group}/${name} annotated\n`);
    const again = await c.kubectl(["annotate", "oak", name, `${ROTATED}=2025-02-01`]);
    assert.equal(again.code, 1, "kubectl refuses to overwrite without --overwrite");
    const overwrite = await c.kubectl([
      "annotate",
      "--overwrite",
      "oak",
      name,
      `${ROTATED}=2025-02-01`,
    ]);
    assert.equal(overwrite.code, 0, overwrite.stderr);
    assert.deepEqual((await c.keys().get(name)).metadata.annotations, { [ROTATED]: "2025-02-01" });
  });
}
