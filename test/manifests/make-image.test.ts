// `make image` on a machine without Docker: it must say that docker is missing and what to do,
// and exit 2, before anything else runs. PATH is an empty folder, so this holds whether or not
// docker is installed here (no image is ever built). test/image/ checks the Dockerfile itself.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { packageVersion, runIn, which } from "./make.js";

describe("make image", function () {
  this.timeout(60_000);

  it("without docker on PATH: says so and what to do, exit 2", async () => {
    const empty = mkdtempSync(join(tmpdir(), "vgate-no-docker-"));
    try {
      const make = await runIn(await which("make"), ["--no-print-directory", "image"], {
        PATH: empty,
      });
      assert.equal(make.code, 2, make.stdout + make.stderr);
      assert.match(make.stderr, /^docker is not installed: make image runs docker build/);
      assert.match(make.stderr, /install Docker \(https:\/\//);
      assert.ok(!make.stderr.includes("command not found"), make.stderr);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it("tags the image with package.json's version unless VERSION is given", async () => {
    const dry = await runIn("make", ["--no-print-directory", "-n", "image"]);
    assert.equal(dry.code, 0, dry.stderr);
    // The commit and build date go in as build arguments (build/build-info.mjs --build-args).
    const tag = /^docker build \$\(node build\/build-info\.mjs --build-args\) -t (.+) \.$/m.exec(
      dry.stdout,
    )?.[1];
    assert.ok(tag, dry.stdout);
    // The tag as the recipe's shell expands it.
    assert.equal(
      (await runIn("bash", ["-c", `echo ${tag}`])).stdout.trim(),
      `vgate:${packageVersion()}`,
    );
    const given = await runIn("make", ["--no-print-directory", "-n", "image", "VERSION=1.2.3"]);
    assert.match(
      given.stdout,
      /^docker build \$\(node build\/build-info\.mjs --build-args\) -t vgate:1\.2\.3 \.$/m,
    );
  });
});
