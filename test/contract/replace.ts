// Update (replace): a PUT of the whole edited key. kube's optimistic concurrency (409 Conflict on a
// stale resourceVersion, 422 without one: custom resources allow no unconditional update), what
// kube does with server-owned metadata, and the validating webhook's 422 on a spec it rejects.

import assert from "node:assert/strict";
import type { AccessKeyType } from "../../webhook/src/shared/ownedaccesskey.js";
import { itClient, itKubectl, type Contract } from "./contract.js";
import { rejection } from "./keys.js";
import { stdinManifest } from "../support/kubectl.js";
import { invalidPrefix, qualified, staleConflict, validatingDenial } from "./messages.js";

/** Not an AccessKeyType: the CRD's enum for spec.type rejects it. */
const BOGUS = "Bogus" as unknown as AccessKeyType;
const SUPPORTED_TYPES =
  'supported values: "", "Login", "User", "Other", "Reset", "OIDCRefreshToken", "NetworkPeer", "Workspace"';

export function replaceTests(c: Contract): void {
  itClient("PUT with the current resourceVersion replaces the key", async () => {
    const name = c.name("put");
    const key = await c.createKey({ name });
    const edited = structuredClone(key);
    edited.spec = { ...edited.spec, displayName: "renamed", description: "rotated monthly" };
    const updated = await c.keys().replace(edited);
    assert.equal(updated.spec?.displayName, "renamed");
    assert.equal(updated.spec?.description, "rotated monthly");
    assert.equal(updated.spec?.key, key.spec?.key, "the key itself is kept");
    assert.equal(updated.metadata.uid, key.metadata.uid);
    assert.notEqual(updated.metadata.resourceVersion, key.metadata.resourceVersion);
    assert.equal(updated.metadata.generation, 2, "a spec change bumps generation");
  });

  itClient("PUT with a stale resourceVersion is 409 Conflict", async () => {
    const name = c.name("put");
    const key = await c.createKey({ name });
    await c.keys().replace({ ...key, spec: { ...key.spec, description: "first writer" } });
    const status = await rejection(
      c.keys().replace({ ...key, spec: { ...key.spec, description: "second writer" } }),
    );
    assert.equal(status.code, 409);
    assert.equal(status.reason, "Conflict");
    assert.equal(status.message, staleConflict(c.group, name));
    assert.deepEqual(status.details, { name, group: c.group, kind: "ownedaccesskeys" });
    assert.equal((await c.keys().get(name)).spec?.description, "first writer");
  });

  itClient("PUT without resourceVersion is 422: no unconditional update", async () => {
    const name = c.name("put");
    const key = await c.createKey({ name });
    delete key.metadata.resourceVersion;
    const status = await rejection(c.keys().replace(key));
    assert.equal(status.code, 422);
    assert.equal(status.reason, "Invalid");
    // kube's store names the resource where a kind belongs here (a TODO in registry/store.go); 1.36
    // prints the zero resourceVersion as 0 (older releases printed 0x0).
    assert.equal(
      status.message,
      `${qualified(c.group)} "${name}" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update`,
    );
    assert.equal(status.details?.kind, "ownedaccesskeys");
  });

  itClient("a changed uid fails kube's UID precondition: 409 Conflict", async () => {
    const name = c.name("put");
    const key = await c.createKey({ name });
    const uid = "00000000-0000-4000-8000-000000000000";
    const status = await rejection(
      c.keys().replace({ ...key, metadata: { ...key.metadata, uid } }),
    );
    assert.equal(status.code, 409);
    assert.equal(status.reason, "Conflict");
    assert.ok(
      status.message.startsWith(
        `Operation cannot be fulfilled on ${qualified(c.group)} "${name}": `,
      ),
      status.message,
    );
    assert.ok(
      status.message.endsWith(
        `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${key.metadata.uid}`,
      ),
      status.message,
    );
  });

  itClient("a changed creationTimestamp is restored, as kube's BeforeUpdate does", async () => {
    const name = c.name("put");
    const key = await c.createKey({ name });
    const edited = {
      ...key,
      metadata: { ...key.metadata, creationTimestamp: "2020-01-01T00:00:00Z" },
    };
    const updated = await c.keys().replace(edited);
    assert.equal(updated.metadata.creationTimestamp, key.metadata.creationTimestamp);
  });

  itClient("a body naming another object than the URL is 400 BadRequest", async () => {
    const name = c.name("put");
    const key = await c.createKey({ name });
    const other = `${name}-other`;
    const status = await rejection(
      c.keys().replace({ ...key, metadata: { ...key.metadata, name: other } }, name),
    );
    assert.equal(status.code, 400);
    assert.equal(status.reason, "BadRequest");
    assert.equal(
      status.message,
      `the name of the object (${other}) does not match the name on the URL (${name})`,
    );
  });

  itClient("a type outside the CRD's enum: the schema's 422", async () => {
    const name = c.name("put");
    const key = await c.createKey({ name });
    const status = await rejection(
      c.keys().replace({ ...key, spec: { ...key.spec, type: BOGUS } }),
    );
    assert.equal(status.code, 422);
    assert.equal(status.reason, "Invalid");
    assert.equal(
      status.message,
      `${invalidPrefix(c.group, name)}spec.type: Unsupported value: "Bogus": ${SUPPORTED_TYPES}`,
    );
    assert.deepEqual(status.details, {
      name,
      group: c.group,
      kind: "OwnedAccessKey",
      causes: [
        {
          reason: "FieldValueNotSupported",
          message: `Unsupported value: "Bogus": ${SUPPORTED_TYPES}`,
          field: "spec.type",
        },
      ],
    });
    assert.equal((await c.keys().get(name)).spec?.type, "User");
  });

  itClient("a spec the validating webhook rejects is its 422", async () => {
    const name = c.name("put");
    const key = await c.createKey({ name });
    const scope = { projects: [{ project: "" }] };
    const status = await rejection(c.keys().replace({ ...key, spec: { ...key.spec, scope } }));
    const field = "spec.scope.projects[0].project";
    assert.equal(status.code, 422);
    assert.equal(
      status.message,
      `${validatingDenial(c.group)}${invalidPrefix(c.group, name)}${field}: Required value`,
    );
    assert.deepEqual(status.details?.causes, [
      { reason: "FieldValueRequired", message: "Required value", field },
    ]);
    assert.equal((await c.keys().get(name)).spec?.scope, undefined);
  });

  itKubectl("replace -f: replaced, then Conflict for the stale copy", async () => {
    const name = c.name("put");
    const key = await c.createKey({ name });
    const first = await c.kubectl(
      ["replace", "-f", "-"],
      stdinManifest({ ...key, spec: { ...key.spec, description: "first" } }),
    );
    assert.equal(first.code, 0, first.stderr);
    assert.equal(first.stdout, `ownedaccesskey.${c.group}/${name} replaced\n`);
    const stale = await c.kubectl(
      ["replace", "-f", "-"],
      stdinManifest({ ...key, spec: { ...key.spec, description: "second" } }),
    );
    assert.equal(stale.code, 1);
    assert.equal(
      stale.stderr,
      `Error from server (Conflict): error when replacing "STDIN": ${staleConflict(c.group, name)}\n`,
    );
  });

  itKubectl("replace -f with a type outside the enum: The OwnedAccessKey is invalid", async () => {
    const name = c.name("put");
    const key = await c.createKey({ name });
    const run = await c.kubectl(
      ["replace", "-f", "-"],
      stdinManifest({ ...key, spec: { ...key.spec, type: BOGUS } }),
    );
    assert.equal(run.code, 1);
    assert.equal(
      run.stderr,
      `The OwnedAccessKey "${name}" is invalid: spec.type: Unsupported value: "Bogus": ${SUPPORTED_TYPES}\n`,
    );
  });
}
