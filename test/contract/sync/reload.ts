// The config file is watched: a rewrite changes what later syncs do; a rewrite that does not
// validate keeps the last good config, and the log says why.

import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { SyncProcess } from "../../support/sync-rig.js";
import { until } from "../../support/until.js";
import { metric, sleep, type Obj, type SyncContext } from "./sync-context.js";

const config = (expression: string) => `sync:
  toHost:
    endpoints:
      patches:
        - path: metadata.annotations["example.com/owner"]
          expression: ${JSON.stringify(expression)}
`;

const INVALID = `sync:
  toHost:
    endpoints:
      patches:
        - path: metadata.annotations["example.com/owner"
          expression: '"broken"'
`;

export function reloadTests(ctx: SyncContext): void {
  let proc: SyncProcess | undefined;
  let file = "";
  before(async () => {
    await ctx.stopMain();
    proc = await ctx.controller("reload", config('"v1-" + value'));
    file = join(ctx.rig.dir, "reload.yaml");
  });
  after(() => proc?.stop());

  it("applies a rewritten config to later syncs, and keeps the last good one when invalid", async () => {
    const ns = await ctx.namespace();
    await ctx.syncable(ns, "one", { annotations: { "example.com/owner": "a" } });
    await ctx.waitForHost(
      ns,
      "one",
      (h) => h.metadata.annotations?.["example.com/owner"] === "v1-a",
    );

    await writeFile(file, config('"v2-" + value'));
    // When the new config is in use is up to the file watcher: new objects show it.
    let n = 0;
    await until(
      async () => {
        n += 1;
        await ctx.syncable(ns, `two-${n}`, { annotations: { "example.com/owner": "b" } });
        const host = await ctx.waitForHost(ns, `two-${n}`);
        return host.metadata.annotations?.["example.com/owner"] === "v2-b";
      },
      "a new object synced with the rewritten config",
      30_000,
    );

    const logBefore = (await proc!.log()).length;
    await writeFile(file, INVALID);
    await until(
      async () => /patches\[0\]/.test((await proc!.log()).slice(logBefore)),
      "the log says why the rewritten config is refused",
    );
    await ctx.syncable(ns, "three", { annotations: { "example.com/owner": "c" } });
    const host = await ctx.waitForHost(ns, "three");
    assert.equal(host.metadata.annotations?.["example.com/owner"], "v2-c", "the last good config");
    assert.ok(!proc!.exited(), "still running");
    assert.equal((await proc!.get("/readyz")).status, 200);
    assert.equal(await metric(proc!, "vgate_sync_config_reloads_total"), 1);
    assert.ok((await metric(proc!, "vgate_sync_config_reload_errors_total")) >= 1);
  });

  it("syncs what was created while disabled once a reload enables sync again", async () => {
    const ns = await ctx.namespace();
    await writeFile(file, "sync:\n  toHost:\n    endpoints:\n      enabled: false\n");
    await until(
      async () => (await metric(proc!, "vgate_sync_config_reloads_total")) >= 2,
      "the reload to enabled: false applied",
    );
    await ctx.syncable(ns, "while-off", { annotations: { "example.com/owner": "d" } });
    await sleep(1000);
    assert.equal(await ctx.getHost(ns, "while-off"), null, "not synced while disabled");
    await writeFile(file, config('"v3-" + value'));
    const host = await ctx.waitForHost(ns, "while-off");
    assert.equal(host.metadata.annotations?.["example.com/owner"], "v3-d");
  });

  it("watches a kind a reloaded config's reference patch names, so its copies follow their source", async () => {
    const ns = await ctx.namespace();
    await writeFile(
      file,
      `${config('"v4-" + value')}        - path: metadata.annotations["example.com/settings"]
          reference:
            apiVersion: v1
            kind: ConfigMap
`,
    );
    await ctx.virtual.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "settings", namespace: ns },
      data: { mode: "a" },
    });
    const copyName = ctx.shortName("settings", ns);
    const copy = () =>
      ctx.host.get<Obj & { data?: Record<string, string> }>({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: copyName, namespace: ctx.vc.namespace },
      });
    let n = 0;
    await until(
      async () => {
        n += 1;
        await ctx.syncable(ns, `ref-${n}`, { annotations: { "example.com/settings": "settings" } });
        const host = await ctx.waitForHost(ns, `ref-${n}`);
        return host.metadata.annotations?.["example.com/settings"] === copyName;
      },
      "an object synced with the reloaded config's reference patch",
      30_000,
    );
    await until(async () => (await copy())?.data?.["mode"] === "a", "the ConfigMap copied");
    await ctx.virtual.apply({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "settings", namespace: ns },
      data: { mode: "b" },
    });
    await until(async () => (await copy())?.data?.["mode"] === "b", "the copy follows its source");
  });

  it("refuses to start with an invalid config: exit status 1 and every problem logged", async () => {
    const bad = await ctx.rig.writeConfig("invalid.yaml", INVALID);
    const started = await ctx.rig.startSync({ name: "invalid", config: bad });
    await until(() => started.exited(), "vgate sync exiting");
    assert.equal(started.exitCode(), 1);
    assert.match(await started.log(), /patches\[0\]/);
  });
}
