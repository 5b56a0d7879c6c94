// dryRun=All (`kubectl --dry-run=server`): the request goes through both webhooks and schema
// validation, the answer is what would be stored, and nothing is stored.

import assert from "node:assert/strict";
import { itClient, itKubectl, type Contract } from "./contract.js";
import { GENERATED_KEY } from "./create.js";
import { rejection, type StoredKey } from "./keys.js";
import { stdinManifest } from "../support/kubectl.js";
import { alreadyExists, invalidPrefix, qualified, validatingDenial } from "./messages.js";

export function dryRunTests(c: Contract): void {
  itKubectl("create --dry-run=server answers the mutated key and stores nothing", async () => {
    const name = c.name("dry");
    const run = await c.kubectl(
      ["create", "--dry-run=server", "-o", "json", "-f", "-"],
      stdinManifest(c.manifest({ name })),
    );
    c.cleanup.key(c.keys(), name);
    assert.equal(run.code, 0, run.stderr);
    const key = JSON.parse(run.stdout) as StoredKey;
    assert.equal(key.metadata.name, name);
    assert.match(String(key.spec?.key), GENERATED_KEY);
    assert.equal(key.spec?.user, c.adminUser);
    assert.equal(key.spec?.type, "User");
    const get = await c.kubectl(["get", "oak", name]);
    assert.equal(get.code, 1);
    assert.equal(
      get.stderr,
      `Error from server (NotFound): ${qualified(c.group)} "${name}" not found\n`,
    );
  });

  itClient("dryRun=All answers the defaults and stores nothing", async () => {
    const name = c.name("dry");
    const key = await c.keys().create(c.manifest({ name }), { dryRun: true });
    c.cleanup.key(c.keys(), name);
    assert.match(String(key.spec?.key), GENERATED_KEY);
    assert.equal(key.spec?.displayName, name);
    assert.equal(await c.keys().find(name), null);
  });

  itClient("dryRun=All is still denied by the validating webhook", async () => {
    const name = c.name("dry");
    const spec = { scope: { projects: [{ project: "" }] } };
    const status = await rejection(c.keys().create(c.manifest({ name }, spec), { dryRun: true }));
    assert.equal(status.code, 422);
    assert.equal(
      status.message,
      `${validatingDenial(c.group)}${invalidPrefix(c.group, name)}` +
        "spec.scope.projects[0].project: Required value",
    );
  });

  itClient("dryRun=All of a name that exists is 409 AlreadyExists", async () => {
    const name = c.name("dry");
    await c.createKey({ name });
    const status = await rejection(c.keys().create(c.manifest({ name }), { dryRun: true }));
    assert.equal(status.reason, "AlreadyExists");
    assert.match(status.message, alreadyExists(c.group, name));
  });
}
