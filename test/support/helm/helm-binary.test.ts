// The Helm finder: a missing or stale helm in the kube cache is a reason to skip that says what to
// run, never a test run with the wrong Helm; the homes it gives helm are the test's own.

import assert from "node:assert/strict";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { kubeVersions } from "../kube/binaries.js";
import { findHelm, helmEnv } from "./helm-binary.js";

describe("the Helm finder", () => {
  let cache: string;
  beforeEach(() => {
    cache = mkdtempSync(join(tmpdir(), "vgate-helm-finder-"));
  });
  afterEach(() => rmSync(cache, { recursive: true, force: true }));

  const fakeHelm = (version: string): void => {
    const dir = join(cache, "vgate", "kube", kubeVersions().kube);
    mkdirSync(dir, { recursive: true });
    const bin = join(dir, "helm");
    writeFileSync(bin, `#!/bin/sh\nprintf '%s' '${version}'\n`);
    chmodSync(bin, 0o755);
  };

  it("says to run make helm when the cache has no helm", () => {
    const r = findHelm({ ...process.env, XDG_CACHE_HOME: cache });
    assert.ok("missing" in r);
    assert.match(r.missing, /^no .*\/vgate\/kube\/v[\d.]+\/helm: run `make helm`/);
  });

  it("refuses a helm of another version than versions.env pins", () => {
    fakeHelm("v4.2.0");
    const r = findHelm({ ...process.env, XDG_CACHE_HOME: cache });
    assert.ok("missing" in r);
    assert.match(
      r.missing,
      new RegExp(`is Helm v4\\.2\\.0, test/kube/versions\\.env pins ${kubeVersions().helm}`),
    );
  });

  it("takes the pinned version", () => {
    fakeHelm(kubeVersions().helm);
    const r = findHelm({ ...process.env, XDG_CACHE_HOME: cache });
    assert.ok("found" in r, JSON.stringify(r));
    assert.equal(r.found.binary, join(cache, "vgate", "kube", kubeVersions().kube, "helm"));
  });

  it("gives helm homes of the test's own, private, and no kubeconfig of the user's", () => {
    const env = helmEnv(join(cache, "home"));
    for (const k of ["HELM_CACHE_HOME", "HELM_CONFIG_HOME", "HELM_DATA_HOME"]) {
      assert.ok(env[k]!.startsWith(join(cache, "home")), k);
      assert.equal(statSync(env[k]!).mode & 0o777, 0o700, k);
    }
    assert.equal(env["KUBECONFIG"], join(cache, "home", "no-kubeconfig"));
    assert.equal(env["HOME"], join(cache, "home"));
  });
});
