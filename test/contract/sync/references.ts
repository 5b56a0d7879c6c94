// Reference patches (docs/decisions.md EPS-1): virtual → host the annotation is rewritten to the
// referenced object's host name and the object is copied to the host under it; host → virtual a
// referenced host object (one with vCluster's bookkeeping) is imported into the virtual cluster.

import assert from "node:assert/strict";
import { until } from "../../support/until.js";
import { assertQuiet, BOOKKEEPING, sleep, type Obj, type SyncContext } from "./sync-context.js";

type Data = Obj & { data?: Record<string, string> };

export function referenceTests(ctx: SyncContext): void {
  before(() => ctx.main());

  const get = (side: "virtual" | "host", kind: string, namespace: string, name: string) =>
    (side === "virtual" ? ctx.virtual : ctx.host).get<Data>({
      apiVersion: "v1",
      kind,
      metadata: { name, namespace },
    });

  it("copies a referenced Secret and ConfigMap to the host under their translated names", async () => {
    const ns = await ctx.namespace();
    const secretData = { password: Buffer.from("s3cret").toString("base64") };
    await ctx.virtual.create({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "db-creds", namespace: ns },
      data: secretData,
    });
    await ctx.virtual.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "db-conf", namespace: ns },
      data: { mode: "ro" },
    });
    await ctx.syncable(ns, "db", {
      annotations: { "example.com/secret": "db-creds", "example.com/config": "db-conf" },
    });
    const secretHost = ctx.shortName("db-creds", ns);
    const configHost = ctx.shortName("db-conf", ns);
    const host = await ctx.waitForHost(ns, "db");
    assert.equal(host.metadata.annotations?.["example.com/secret"], secretHost);
    assert.equal(host.metadata.annotations?.["example.com/config"], configHost);
    let secret: Data | null = null;
    let config: Data | null = null;
    await until(async () => {
      secret = await get("host", "Secret", ctx.vc.namespace, secretHost);
      config = await get("host", "ConfigMap", ctx.vc.namespace, configHost);
      return secret !== null && config !== null;
    }, `Secret ${secretHost} and ConfigMap ${configHost} on the host`);
    assert.deepEqual(secret!.data, secretData);
    assert.deepEqual(config!.data, { mode: "ro" });
    for (const copy of [secret!, config!]) {
      const annotations = (copy.metadata["annotations"] ?? {}) as Record<string, string>;
      assert.equal(annotations[BOOKKEEPING.namespace], ns, "the copy names its virtual namespace");
    }
    assert.equal(
      ((secret!.metadata["annotations"] ?? {}) as Record<string, string>)[BOOKKEEPING.name],
      "db-creds",
    );
  });

  it("keeps the host copy of a referenced Secret in step with it: changed, then deleted", async () => {
    const ns = await ctx.namespace();
    await ctx.virtual.create({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "tok", namespace: ns },
      data: { t: "MQ==" },
    });
    await ctx.syncable(ns, "svc", { annotations: { "example.com/secret": "tok" } });
    const hostSecret = ctx.shortName("tok", ns);
    await until(
      async () => (await get("host", "Secret", ctx.vc.namespace, hostSecret)) !== null,
      "the Secret copied",
    );
    // Only the Secret changes: the Endpoints that references it stays as it is.
    await ctx.virtual.apply({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "tok", namespace: ns },
      data: { t: "Mg==" },
    });
    await until(
      async () =>
        (await get("host", "Secret", ctx.vc.namespace, hostSecret))?.data?.["t"] === "Mg==",
      "the host copy of the Secret updated",
    );
    await ctx.virtual.delete({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "tok", namespace: ns },
    });
    await until(
      async () => (await get("host", "Secret", ctx.vc.namespace, hostSecret)) === null,
      "the host copy of the deleted Secret deleted",
    );
    // The Endpoints' host copy is untouched by all this.
    const host = await ctx.waitForHost(ns, "svc");
    assert.equal(host.metadata.annotations?.["example.com/secret"], hostSecret);
  });

  it("imports a referenced host Secret into the virtual cluster", async () => {
    const ns = await ctx.namespace();
    await ctx.syncable(ns, "imp", {});
    await ctx.waitForHost(ns, "imp");
    // A Secret a host-side controller made for the virtual namespace, with vCluster's bookkeeping.
    const hostSecret = ctx.shortName("from-host", ns);
    await ctx.host.create({
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: hostSecret,
        namespace: ctx.vc.namespace,
        annotations: { [BOOKKEEPING.name]: "from-host", [BOOKKEEPING.namespace]: ns },
        labels: { "vcluster.loft.sh/managed-by": ctx.vc.name },
      },
      data: { key: Buffer.from("host value").toString("base64") },
    });
    await ctx.updateHost(ns, "imp", (h) => {
      h.metadata.annotations!["example.com/secret"] = hostSecret;
    });
    await ctx.waitForVirtual(
      ns,
      "imp",
      (v) => v.metadata.annotations?.["example.com/secret"] === "from-host",
      "the reference resolved to the virtual name",
    );
    let imported: Data | null = null;
    await until(
      async () => (imported = await get("virtual", "Secret", ns, "from-host")) !== null,
      `Secret ${ns}/from-host imported`,
    );
    assert.deepEqual(imported!.data, { key: Buffer.from("host value").toString("base64") });
    // The host Secret is the original, not vgate's copy of the import: deleting the import leaves
    // it alone.
    await ctx.virtual.delete({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "from-host", namespace: ns },
    });
    await sleep(1500);
    assert.notEqual(await get("host", "Secret", ctx.vc.namespace, hostSecret), null);
  });

  it("never overwrites a host Secret it does not manage at the translated name", async () => {
    const ns = await ctx.namespace();
    await ctx.virtual.create({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "clash", namespace: ns },
      data: { v: Buffer.from("tenant").toString("base64") },
    });
    const theirs = await ctx.host.create<Data>({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: ctx.shortName("clash", ns), namespace: ctx.vc.namespace },
      data: { v: Buffer.from("host team").toString("base64") },
    });
    await ctx.syncable(ns, "uses-clash", { annotations: { "example.com/secret": "clash" } });
    const event = await ctx.waitForSyncError(ns, "uses-clash");
    assert.match(event.message ?? "", new RegExp(ctx.shortName("clash", ns)));
    const after = await get("host", "Secret", ctx.vc.namespace, ctx.shortName("clash", ns));
    assert.equal(
      after?.metadata["resourceVersion"],
      theirs.metadata["resourceVersion"],
      "untouched",
    );
  });

  it("never overwrites a tenant's own Secret when importing one of the same name", async () => {
    const ns = await ctx.namespace();
    const mine = await ctx.virtual.create<Data>({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "shared-name", namespace: ns },
      data: { v: Buffer.from("tenant's own").toString("base64") },
    });
    await ctx.syncable(ns, "imp2", {});
    await ctx.waitForHost(ns, "imp2");
    const hostSecret = ctx.shortName("shared-name", ns);
    await ctx.host.create({
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: hostSecret,
        namespace: ctx.vc.namespace,
        annotations: { [BOOKKEEPING.name]: "shared-name", [BOOKKEEPING.namespace]: ns },
      },
      data: { v: Buffer.from("from the host").toString("base64") },
    });
    await ctx.updateHost(ns, "imp2", (h) => {
      h.metadata.annotations!["example.com/secret"] = hostSecret;
    });
    // The reference resolves to the tenant's Secret, which already exists: nothing is imported.
    await ctx.waitForVirtual(
      ns,
      "imp2",
      (v) => v.metadata.annotations?.["example.com/secret"] === "shared-name",
      "the reference resolved to the virtual name",
    );
    await sleep(1000);
    const after = await get("virtual", "Secret", ns, "shared-name");
    assert.deepEqual(after?.data, mine.data);
    assert.equal(after?.metadata["resourceVersion"], mine.metadata["resourceVersion"], "untouched");
  });

  it("imports a plain host Secret named on the host copy, and settles", async () => {
    const ns = await ctx.namespace();
    await ctx.syncable(ns, "imp3", {});
    await ctx.waitForHost(ns, "imp3");
    const data = { v: Buffer.from("made on the host").toString("base64") };
    await ctx.host.create({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "team-secret", namespace: ctx.vc.namespace },
      data,
    });
    await ctx.updateHost(ns, "imp3", (h) => {
      h.metadata.annotations!["example.com/secret"] = "team-secret";
    });
    let imported: Data | null = null;
    await until(
      async () => (imported = await get("virtual", "Secret", ns, "team-secret")) !== null,
      `Secret ${ns}/team-secret imported under its own name`,
    );
    assert.deepEqual(imported!.data, data);
    await assertQuiet(
      async () => [await ctx.getVirtual(ns, "imp3"), await ctx.getHost(ns, "imp3")],
      1500,
      "after the import",
    );
    assert.equal(
      (await ctx.getVirtual(ns, "imp3"))?.metadata.annotations?.["example.com/secret"],
      "team-secret",
    );
    // The host copy names a host Secret with that data (the one made there, or vgate's copy of the import).
    const named =
      (await ctx.getHost(ns, "imp3"))?.metadata.annotations?.["example.com/secret"] ?? "";
    assert.deepEqual((await get("host", "Secret", ctx.vc.namespace, named))?.data, data, named);
  });
}
