// Create (docs/reference.md#ownedaccesskey-operations): by name and by generateName, the CREATE
// defaults of the mutating webhook (docs/decisions.md OAK-8), and 409 AlreadyExists for a name that
// is taken (docs/decisions.md OAK-4).

import assert from "node:assert/strict";
import { itClient, itKubectl, type Contract } from "./contract.js";
import { rejection, type StoredKey } from "./keys.js";
import { stdinManifest, tableRows } from "../support/kubectl.js";
import { alreadyExists, escapeRegExp as escape, qualified, WEBHOOK_PREFIX } from "./messages.js";

/** 256 bits of base64url without padding: 43 characters. */
export const GENERATED_KEY = /^[A-Za-z0-9_-]{43}$/;
/** kube's names.SimpleNameGenerator alphabet (utilrand), 5 characters. */
const SUFFIX = "[bcdfghjklmnpqrstvwxz2456789]{5}";

function assertDefaults(key: StoredKey, user: string): void {
  assert.match(String(key.spec?.key), GENERATED_KEY);
  assert.equal(key.spec?.user, user);
  assert.equal(key.spec?.type, "User");
  assert.equal(key.spec?.displayName, key.metadata.name);
}

export function createTests(c: Contract): void {
  itClient("create by name stores the mutating webhook's defaults", async () => {
    const name = c.name("oak");
    const key = await c.createKey({ name });
    assert.equal(key.metadata.name, name);
    assertDefaults(key, c.adminUser);
    assert.equal(key.metadata.generation, 1);
    assert.ok(key.metadata.uid && key.metadata.resourceVersion && key.metadata.creationTimestamp);
    assert.deepEqual(await c.keys().get(name), key, "the answer is what was stored");
  });

  itClient("values the client sets are kept; only missing ones are defaulted", async () => {
    const name = c.name("oak");
    const spec = {
      displayName: "CI pipeline",
      description: "deploys from main",
      key: "k".repeat(43),
      ttl: 86_400,
      ttlAfterLastActivity: true,
    };
    const key = await c.createKey({ name }, spec);
    assert.deepEqual(key.spec, { ...spec, user: c.adminUser, type: "User" });
  });

  itClient("generateName: prefix + 5 random characters; two creates get two names", async () => {
    const prefix = `${c.name("gen")}-`;
    const first = await c.createKey({ generateName: prefix });
    const second = await c.createKey({ generateName: prefix });
    for (const key of [first, second]) {
      assert.match(key.metadata.name, new RegExp(`^${escape(prefix)}${SUFFIX}$`));
      assert.equal(key.metadata.generateName, prefix);
      assertDefaults(key, c.adminUser);
    }
    assert.notEqual(first.metadata.name, second.metadata.name);
    assert.notEqual(first.spec?.key, second.spec?.key);
  });

  itClient("generateName: a prefix over 58 characters is cut to 58", async () => {
    const prefix = `${c.name("long")}-`.padEnd(62, "x");
    const key = await c.createKey({ generateName: prefix });
    assert.match(key.metadata.name, new RegExp(`^${escape(prefix.slice(0, 58))}${SUFFIX}$`));
    assert.equal(key.metadata.name.length, 63);
  });

  itClient("a name that exists is 409 AlreadyExists; the stored key is unchanged", async () => {
    const name = c.name("oak");
    const existing = await c.createKey({ name });
    const status = await rejection(
      c.keys().create(c.manifest({ name }, { displayName: "other", key: "x".repeat(43) })),
    );
    assert.equal(status.code, 409);
    assert.equal(status.reason, "AlreadyExists");
    // The webhook answers it (it checks names against the API) with kube's message, so the
    // message may carry the webhook prefix; it ends as kube's own does.
    assert.match(status.message, alreadyExists(c.group, name));
    assert.deepEqual(status.details, { name, group: c.group, kind: "ownedaccesskeys" });
    assert.deepEqual(await c.keys().get(name), existing);
  });

  itKubectl("create -f - then get: the CRD's printer columns, never the key", async () => {
    const name = c.name("oak");
    const manifest = c.manifest({ name }, { ttl: 3600, disabled: false });
    const created = await c.kubectl(["create", "-f", "-"], stdinManifest(manifest));
    c.cleanup.key(c.keys(), name);
    assert.equal(created.code, 0, created.stderr);
    assert.equal(created.stdout, `ownedaccesskey.${c.group}/${name} created\n`);

    const get = await c.kubectl(["get", "oak", name]);
    assert.equal(get.code, 0, get.stderr);
    const [header, row, ...rest] = tableRows(get.stdout);
    assert.deepEqual(header, ["NAME", "DISPLAY NAME", "USER", "TYPE", "DISABLED", "TTL", "AGE"]);
    assert.deepEqual(row?.slice(0, 6), [name, name, c.adminUser, "User", "false", "3600"]);
    assert.match(row?.[6] ?? "", /^\d+s$/);
    assert.deepEqual(rest, []);

    const wide = await c.kubectl(["get", "oak", name, "-o", "wide"]);
    assert.equal(wide.code, 0, wide.stderr);
    assert.deepEqual(tableRows(wide.stdout)[0], [
      ...["NAME", "DISPLAY NAME", "USER", "TEAM", "SUBJECT", "TYPE", "DISABLED", "TTL"],
      ...["LAST ACTIVITY", "AGE"],
    ]);
    const key = String((await c.keys().get(name)).spec?.key);
    assert.match(key, GENERATED_KEY);
    assert.ok(!get.stdout.includes(key) && !wide.stdout.includes(key), "no column shows the key");
  });

  itKubectl("create with generateName prints the generated name", async () => {
    const prefix = `${c.name("gen")}-`;
    const run = await c.kubectl(
      ["create", "-f", "-"],
      stdinManifest(c.manifest({ generateName: prefix })),
    );
    const match = new RegExp(
      `^ownedaccesskey\\.${escape(c.group)}/(${escape(prefix)}${SUFFIX}) created\\n$`,
    ).exec(run.stdout);
    if (match?.[1]) c.cleanup.key(c.keys(), match[1]);
    assert.equal(run.code, 0, run.stderr);
    assert.ok(match, run.stdout);
  });

  itKubectl("a name that exists: Error from server (AlreadyExists)", async () => {
    const name = c.name("oak");
    await c.createKey({ name });
    const run = await c.kubectl(["create", "-f", "-"], stdinManifest(c.manifest({ name })));
    assert.equal(run.code, 1);
    assert.equal(run.stdout, "");
    assert.match(
      run.stderr,
      new RegExp(
        `^Error from server \\(AlreadyExists\\): error when creating "STDIN": (${WEBHOOK_PREFIX})?` +
          `${escape(`${qualified(c.group)} "${name}" already exists`)}\\n$`,
      ),
    );
  });
}
