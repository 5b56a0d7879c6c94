// 422 Invalid as users see it, from each place that answers it: the CRD's schema (kube), kube's
// ObjectMeta rules and vgate's validating webhook (more than one controller ownerReference, a
// blockOwnerDeletion the user may not set: docs/decisions.md OAK-2 and OAK-3), and vgate's spec
// checks (docs/decisions.md OAK-7).

import assert from "node:assert/strict";
import type { OwnerReference } from "../../webhook/src/shared/ownedaccesskey.js";
import { itClient, itKubectl, type Contract } from "./contract.js";
import { rejection, type KeyClient } from "./keys.js";
import { stdinManifest } from "../support/kubectl.js";
import { escapeRegExp, invalidPrefix, validatingDenial, WEBHOOK_PREFIX } from "./messages.js";
import { grant, keyRules, type Grant } from "./rbac.js";

const BLOCK_DENIED =
  "cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't delete";
const TTL_TYPE = 'Invalid value: "string": spec.ttl in body must be of type integer: "string"';
const ONE_CONTROLLER =
  'Only one reference can have Controller set to true. Found "true" in references for ClusterRole/first and ClusterRole/second';

const controllerRef = (name: string, uid: string): OwnerReference => ({
  apiVersion: "rbac.authorization.k8s.io/v1",
  kind: "ClusterRole",
  name,
  uid,
  controller: true,
});

const TWO_CONTROLLERS = [
  controllerRef("first", "11111111-1111-4111-8111-111111111111"),
  controllerRef("second", "22222222-2222-4222-8222-222222222222"),
];

/**
 * kube rejects this in its own ObjectMeta validation, vgate's webhook too; the value is printed as
 * Go prints it (kube) or as JSON (vgate), so only the text around it is pinned.
 */
const twoControllers = (head: string): RegExp =>
  new RegExp(
    `^${head}metadata\\.ownerReferences: Invalid value: .*: ${escapeRegExp(ONE_CONTROLLER)}$`,
  );

export function invalidTests(c: Contract): void {
  const alice = (): string => c.user("alice");
  let access: Grant | undefined;
  let aliceKeys: KeyClient;
  before(async () => {
    access = await grant(c, alice(), keyRules(c.group));
    aliceKeys = c.keysAs(alice());
  });
  after(() => access?.revoke());

  /** An ownerReference to the ClusterRole the test created: alice may not delete it. */
  const blockingRef = (): OwnerReference => ({
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    name: access?.role.metadata?.name ?? "",
    uid: access?.role.metadata?.uid ?? "",
    blockOwnerDeletion: true,
  });

  itClient("blockOwnerDeletion on an owner the user may not delete: 422 Forbidden", async () => {
    const name = c.name("bod");
    const manifest = c.manifest({ name, ownerReferences: [blockingRef()] });
    const status = await rejection(aliceKeys.create(manifest));
    const field = "metadata.ownerReferences[0].blockOwnerDeletion";
    assert.equal(status.code, 422);
    assert.equal(status.reason, "Invalid");
    assert.equal(
      status.message,
      `${validatingDenial(c.group)}${invalidPrefix(c.group, name)}${field}: Forbidden: ${BLOCK_DENIED}`,
    );
    assert.deepEqual(status.details, {
      name,
      group: c.group,
      kind: "OwnedAccessKey",
      causes: [{ reason: "FieldValueForbidden", message: `Forbidden: ${BLOCK_DENIED}`, field }],
    });
    assert.equal(await c.keys().find(name), null);
  });

  itClient("blockOwnerDeletion on an owner the user may delete is accepted", async () => {
    const name = c.name("bod");
    const key = await c.createKey({ name, ownerReferences: [blockingRef()] });
    assert.equal(key.metadata.ownerReferences?.[0]?.blockOwnerDeletion, true);
  });

  itKubectl("blockOwnerDeletion as a user who may not delete the owner", async () => {
    const name = c.name("bod");
    const run = await c.kubectl(
      ["create", "-f", "-", ...c.cluster.kubectlAs(alice())],
      stdinManifest(c.manifest({ name, ownerReferences: [blockingRef()] })),
    );
    assert.equal(run.code, 1);
    assert.equal(
      run.stderr,
      `The OwnedAccessKey "${name}" is invalid: metadata.ownerReferences[0].blockOwnerDeletion: Forbidden: ${BLOCK_DENIED}\n`,
    );
  });

  itClient("two controller ownerReferences: 422", async () => {
    const name = c.name("ctl");
    const status = await rejection(
      c.keys().create(c.manifest({ name, ownerReferences: TWO_CONTROLLERS })),
    );
    assert.equal(status.code, 422);
    assert.equal(status.reason, "Invalid");
    const head = `(${WEBHOOK_PREFIX})?${escapeRegExp(invalidPrefix(c.group, name))}`;
    assert.match(status.message, twoControllers(head));
    assert.equal(status.details?.kind, "OwnedAccessKey");
    assert.equal(status.details?.causes?.[0]?.reason, "FieldValueInvalid");
    assert.equal(status.details?.causes?.[0]?.field, "metadata.ownerReferences");
  });

  itKubectl("two controller ownerReferences: The OwnedAccessKey is invalid", async () => {
    const name = c.name("ctl");
    const run = await c.kubectl(
      ["create", "-f", "-"],
      stdinManifest(c.manifest({ name, ownerReferences: TWO_CONTROLLERS })),
    );
    assert.equal(run.code, 1);
    assert.match(
      run.stderr.trimEnd(),
      twoControllers(escapeRegExp(`The OwnedAccessKey "${name}" is invalid: `)),
    );
  });

  itClient("a field of the wrong type: the CRD schema's 422", async () => {
    const name = c.name("schema");
    const status = await rejection(c.keys().create(c.manifest({ name }, { ttl: "abc" })));
    assert.equal(status.code, 422);
    assert.equal(status.reason, "Invalid");
    assert.equal(status.message, `${invalidPrefix(c.group, name)}spec.ttl: ${TTL_TYPE}`);
    assert.deepEqual(status.details?.causes, [
      { reason: "FieldValueTypeInvalid", message: TTL_TYPE, field: "spec.ttl" },
    ]);
  });

  itKubectl("a field of the wrong type: The OwnedAccessKey is invalid", async () => {
    const name = c.name("schema");
    const run = await c.kubectl(
      ["create", "-f", "-"],
      stdinManifest(c.manifest({ name }, { ttl: "abc" })),
    );
    assert.equal(run.code, 1);
    assert.equal(run.stderr, `The OwnedAccessKey "${name}" is invalid: spec.ttl: ${TTL_TYPE}\n`);
  });

  itClient("a project scope without a project: the validating webhook's 422", async () => {
    const name = c.name("scope");
    const spec = { scope: { projects: [{ project: "" }] } };
    const status = await rejection(c.keys().create(c.manifest({ name }, spec)));
    const field = "spec.scope.projects[0].project";
    assert.equal(status.code, 422);
    assert.equal(
      status.message,
      `${validatingDenial(c.group)}${invalidPrefix(c.group, name)}${field}: Required value`,
    );
    assert.deepEqual(status.details, {
      name,
      group: c.group,
      kind: "OwnedAccessKey",
      causes: [{ reason: "FieldValueRequired", message: "Required value", field }],
    });
  });

  itKubectl("a project scope without a project: The OwnedAccessKey is invalid", async () => {
    const name = c.name("scope");
    const spec = { scope: { projects: [{ project: "" }] } };
    const run = await c.kubectl(["create", "-f", "-"], stdinManifest(c.manifest({ name }, spec)));
    assert.equal(run.code, 1);
    assert.equal(
      run.stderr,
      `The OwnedAccessKey "${name}" is invalid: spec.scope.projects[0].project: Required value\n`,
    );
  });
}
