// Ownership (docs/decisions.md OAK-9) for a non-admin, reached by impersonation. RBAC decides
// whether a user may touch ownedaccesskeys at all (kube's 403); vgate's validating webhook decides
// whose keys (its 403). Admins are members of vgate's admin groups, system:masters by default.

import assert from "node:assert/strict";
import { itClient, itKubectl, type Contract } from "./contract.js";
import { rejection, type KeyClient } from "./keys.js";
import { stdinManifest } from "../support/kubectl.js";
import { escapeRegExp, qualified, validatingDenial } from "./messages.js";
import { grant, keyRules, type Grant } from "./rbac.js";

const MASTERS = "system:masters";

export function ownershipTests(c: Contract): void {
  const alice = (): string => c.user("alice");
  const bob = (): string => c.user("bob");
  let access: Grant | undefined;
  let aliceKeys: KeyClient;
  before(async () => {
    access = await grant(c, alice(), keyRules(c.group));
    aliceKeys = c.keysAs(alice());
  });
  after(() => access?.revoke());

  /**
   * vgate's 403: `<resource> "<name>" is forbidden: user "alice" may only manage access keys whose
   * spec.user is "alice"; <detail>; only <admins> <what>`. Who the admins are is vgate's setting.
   */
  const denied = (name: string, detail: string, what: string): RegExp =>
    new RegExp(
      `^${escapeRegExp(
        `${validatingDenial(c.group)}${qualified(c.group)} "${name}" is forbidden: ` +
          `user "${alice()}" may only manage access keys whose spec.user is "${alice()}"${detail}; only `,
      )}.* ${escapeRegExp(what)}$`,
    );

  itClient("a non-admin's own key: spec.user defaults to them", async () => {
    const name = c.name("own");
    const key = await c.createKey({ name }, {}, aliceKeys);
    assert.equal(key.spec?.user, alice());
    assert.equal(key.spec?.type, "User");
  });

  itClient("a non-admin creating a key for another user: the webhook's 403", async () => {
    const name = c.name("own");
    const status = await rejection(aliceKeys.create(c.manifest({ name }, { user: bob() })));
    assert.equal(status.code, 403);
    assert.equal(status.reason, "Forbidden");
    assert.match(status.message, denied(name, "", `may manage keys of user "${bob()}"`));
    assert.deepEqual(status.details, { name, group: c.group, kind: "ownedaccesskeys" });
    assert.equal(await c.keys().find(name), null);
  });

  itClient("a non-admin may not set spec.team: 403", async () => {
    const name = c.name("own");
    const status = await rejection(aliceKeys.create(c.manifest({ name }, { team: "platform" })));
    assert.equal(status.code, 403);
    assert.match(status.message, denied(name, "", "may set spec.team"));
  });

  itClient("a non-admin may not hand their key to another user: 403", async () => {
    const name = c.name("own");
    const key = await c.createKey({ name }, {}, aliceKeys);
    const status = await rejection(
      aliceKeys.replace({ ...key, spec: { ...key.spec, user: bob() } }),
    );
    assert.equal(status.code, 403);
    assert.match(status.message, denied(name, "", `may manage keys of user "${bob()}"`));
  });

  itClient("a non-admin may not delete another user's key: 403", async () => {
    const name = c.name("own");
    await c.createKey({ name });
    const status = await rejection(aliceKeys.delete(name));
    assert.equal(status.code, 403);
    assert.match(
      status.message,
      denied(name, `; this key belongs to user "${c.adminUser}"`, "may delete it"),
    );
    assert.ok(await c.keys().find(name), "the key is still there");
  });

  itClient("a member of system:masters may create a key for another user", async () => {
    const admin = c.keysAs(c.user("root"), [MASTERS]);
    const key = await c.createKey({ name: c.name("own") }, { user: bob() }, admin);
    assert.equal(key.spec?.user, bob());
  });

  itClient("without RBAC on ownedaccesskeys: kube's 403, before any webhook", async () => {
    const carol = c.user("carol");
    const status = await rejection(c.keysAs(carol).create(c.manifest({ name: c.name("own") })));
    assert.equal(status.code, 403);
    assert.equal(
      status.message,
      `${qualified(c.group)} is forbidden: User "${carol}" cannot create resource "ownedaccesskeys" ` +
        `in API group "${c.group}" at the cluster scope`,
    );
    assert.deepEqual(status.details, { group: c.group, kind: "ownedaccesskeys" });
  });

  itKubectl(
    "--as a non-admin creating a key for another user: Error from server (Forbidden)",
    async () => {
      const name = c.name("own");
      const run = await c.kubectl(
        ["create", "-f", "-", ...c.cluster.kubectlAs(alice())],
        stdinManifest(c.manifest({ name }, { user: bob() })),
      );
      assert.equal(run.code, 1);
      const message = run.stderr.trimEnd();
      const head = 'Error from server (Forbidden): error when creating "STDIN": ';
      assert.ok(message.startsWith(head), message);
      assert.match(
        message.slice(head.length),
        denied(name, "", `may manage keys of user "${bob()}"`),
      );
    },
  );
}
