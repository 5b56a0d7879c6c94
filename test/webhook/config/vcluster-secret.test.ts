// config/vcluster-secret.ts: what vgate takes from a Secret as a vCluster's config (KND-20).

import assert from "node:assert/strict";
import {
  MAX_DISCOVERED_CONFIG_BYTES,
  readConfigSecret,
} from "../../../webhook/src/config/vcluster-secret.js";

describe("readConfigSecret", () => {
  const secret = (name: string, data: Record<string, string>, labels = {}) => ({
    metadata: { name, namespace: "ns", labels },
    data,
  });
  const b64 = (s: string) => Buffer.from(s).toString("base64");

  it("reads config.yaml of vc-config-<name> as the config of vCluster <name>", () => {
    const r = readConfigSecret(
      secret("vc-config-my-vc", { "config.yaml": b64("sync: {}\n") }, { release: "my-vc" }),
    );
    assert.equal(r.kind, "config");
    assert.ok(r.kind === "config");
    assert.deepEqual(r.vcluster, { name: "my-vc", namespace: "ns" });
    assert.equal(r.text, "sync: {}\n");
  });

  it("ignores other Secrets of the chart, and one whose release label names another vCluster", () => {
    assert.equal(readConfigSecret(secret("vc-my-vc", { config: b64("x") })).kind, "other");
    assert.equal(readConfigSecret(secret("vc-config-", { "config.yaml": b64("x") })).kind, "other");
    const mislabelled = secret("vc-config-a", { "config.yaml": b64("x") }, { release: "b" });
    assert.equal(readConfigSecret(mislabelled).kind, "other");
  });

  it("refuses a missing key, and a config past the size limit before decoding it", () => {
    const missing = readConfigSecret(secret("vc-config-a", {}));
    assert.ok(missing.kind === "unreadable" && missing.reason === "MissingConfig");
    const big = b64("#".repeat(MAX_DISCOVERED_CONFIG_BYTES + 1));
    const r = readConfigSecret(secret("vc-config-a", { "config.yaml": big }));
    assert.ok(r.kind === "unreadable" && r.reason === "ConfigTooLarge");
    const atLimit = b64("#".repeat(MAX_DISCOVERED_CONFIG_BYTES));
    assert.equal(
      readConfigSecret(secret("vc-config-a", { "config.yaml": atLimit })).kind,
      "config",
    );
  });
});
