// The playground checks must fail where a playground differs from manifests/: the comparisons
// themselves, on kube-apiserver arguments built the way the rigs build them.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { apiserverWiring, manifestServeFlags, manifestTokenCacheTtl } from "../cluster.js";
import { apiserverWiringDiffs, subsetDiffs } from "./as-installed.js";

describe("the playgrounds' as-installed checks", () => {
  let dir = "";
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "vgate-as-installed-"));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** kube-apiserver's arguments as the rigs make them, with the files written to `dir`. */
  const args = (ttl: string, edit: (files: Record<string, string>) => void = () => {}) => {
    const wiring = apiserverWiring(dir, "https://127.0.0.1:1", ttl, { cert: "c", key: "k" });
    edit(wiring.files);
    for (const [name, text] of Object.entries(wiring.files)) writeFileSync(join(dir, name), text);
    return ["/x/kube-apiserver", "--secure-port=1", ...wiring.args];
  };

  it("finds no difference in kube-apiserver wired as manifests/apiserver/ says", () => {
    assert.deepEqual(apiserverWiringDiffs(args(manifestTokenCacheTtl())), []);
  });

  it("names another token cache TTL, a missing flag, --authorization-mode, another authorizer", () => {
    assert.deepEqual(apiserverWiringDiffs(args("1s")), [
      `--authentication-token-webhook-cache-ttl: want ${manifestTokenCacheTtl()}, have 1s`,
    ]);
    const withoutVersion = args(manifestTokenCacheTtl()).filter(
      (a) => !a.startsWith("--authentication-token-webhook-version="),
    );
    assert.deepEqual(apiserverWiringDiffs(withoutVersion), [
      "--authentication-token-webhook-version: missing",
    ]);
    assert.deepEqual(
      apiserverWiringDiffs([...args(manifestTokenCacheTtl()), "--authorization-mode=RBAC"]),
      ["--authorization-mode is set"],
    );
    const cached = args(manifestTokenCacheTtl(), (files) => {
      files["authorization-config.yaml"] = files["authorization-config.yaml"]!.replace(
        "cacheAuthorizedRequests: false",
        "cacheAuthorizedRequests: true",
      );
    });
    assert.deepEqual(apiserverWiringDiffs(cached), [
      "authorization-config.yaml.authorizers[1].webhook.cacheAuthorizedRequests: want false, have true",
    ]);
  });

  it("takes the install's storage mode from the manifests", () => {
    assert.ok(manifestServeFlags().includes("--key-storage=hashed"));
    assert.ok(!manifestServeFlags().some((f) => f.includes("$(")));
  });

  it("compares a manifest as a subset of the live object", () => {
    assert.deepEqual(subsetDiffs({ a: 1, b: [{ c: 2 }] }, { a: 1, b: [{ c: 2, d: 3 }], e: 4 }), []);
    assert.deepEqual(subsetDiffs({ a: 1, b: [{ c: 2 }] }, { a: 2, b: [{ c: 2 }, { c: 3 }] }), [
      "a: want 1, have 2",
      'b: want [{"c":2}], have [{"c":2},{"c":3}]',
    ]);
  });
});
