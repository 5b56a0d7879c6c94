// Delete (docs/reference.md#ownedaccesskey-operations: the object goes once its finalizers are
// empty). A key with a finalizer gets deletionTimestamp and stays until its finalizers are gone;
// watchers see MODIFIED and then DELETED. While it is being deleted no finalizer may be added
// (kube's own rule).

import assert from "node:assert/strict";
import { itClient, itKubectl, type Contract } from "./contract.js";
import { rejection, type StoredKey } from "./keys.js";
import { qualified } from "./messages.js";
import { watchKey } from "./watch-events.js";

/** A finalizer with a domain: kube warns about ones without. */
const HOLD = "example.com/hold";

export function deleteTests(c: Contract): void {
  itClient(
    "a finalizer keeps a deleted key until it is removed; a watch sees MODIFIED, DELETED",
    async () => {
      const name = c.name("del");
      const key = await c.createKey({ name, finalizers: [HOLD] });
      const watch = await watchKey(c.cluster.admin(), c.group, name, key.metadata.resourceVersion!);
      try {
        const answer = (await c.keys().delete(name)) as StoredKey;
        assert.equal(
          answer.metadata.name,
          name,
          "kube answers the object while finalizers keep it",
        );
        const [modified] = await watch.waitFor(1);
        assert.equal(modified?.type, "MODIFIED");
        assert.ok(modified?.object.metadata.deletionTimestamp, "deletionTimestamp is set");
        assert.equal(modified?.object.metadata.deletionGracePeriodSeconds, 0);

        const stored = await c.keys().get(name);
        assert.ok(stored.metadata.deletionTimestamp);
        assert.deepEqual(stored.metadata.finalizers, [HOLD]);

        await c.keys().jsonPatch(name, [{ op: "remove", path: "/metadata/finalizers" }]);
        const events = await watch.waitFor(2);
        assert.deepEqual(
          events.map((e) => e.type),
          ["MODIFIED", "DELETED"],
        );
        assert.equal(events[1]?.object.metadata.name, name);
        assert.equal(await c.keys().find(name), null);
      } finally {
        watch.stop();
      }
    },
  );

  itClient("no finalizer can be added while the key is being deleted: 422", async () => {
    const name = c.name("del");
    await c.createKey({ name, finalizers: [HOLD] });
    await c.keys().delete(name);
    const status = await rejection(
      c
        .keys()
        .jsonPatch(name, [
          { op: "add", path: "/metadata/finalizers/-", value: "example.com/other" },
        ]),
    );
    assert.equal(status.code, 422);
    assert.equal(status.reason, "Invalid");
    assert.equal(
      status.message,
      `OwnedAccessKey.${c.group} "${name}" is invalid: metadata.finalizers: Forbidden: ` +
        'no new finalizers can be added if the object is being deleted, found new finalizers []string{"example.com/other"}',
    );
  });

  itKubectl("delete without finalizers: deleted, then NotFound", async () => {
    const name = c.name("del");
    await c.createKey({ name });
    const run = await c.kubectl(["delete", "oak", name]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, `ownedaccesskey.${c.group} "${name}" deleted\n`);
    const get = await c.kubectl(["get", "oak", name]);
    assert.equal(get.code, 1);
    assert.equal(
      get.stderr,
      `Error from server (NotFound): ${qualified(c.group)} "${name}" not found\n`,
    );
  });

  itKubectl(
    "delete --wait=false keeps a key with a finalizer; patching it away deletes",
    async () => {
      const name = c.name("del");
      await c.createKey({ name, finalizers: [HOLD] });
      const run = await c.kubectl(["delete", "oak", name, "--wait=false"]);
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stdout, `ownedaccesskey.${c.group} "${name}" deleted\n`);
      const get = await c.kubectl([
        "get",
        "oak",
        name,
        "-o",
        "jsonpath={.metadata.deletionTimestamp} {.metadata.finalizers[0]}",
      ]);
      assert.equal(get.code, 0, get.stderr);
      assert.match(get.stdout, new RegExp(`^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ ${HOLD}$`));
      const ops = JSON.stringify([{ op: "remove", path: "/metadata/finalizers" }]);
      const patch = await c.kubectl(["patch", "oak", name, "--type=json", "-p", ops]);
      assert.equal(patch.code, 0, patch.stderr);
      assert.equal(await c.keys().find(name), null);
    },
  );
}
