// Certificate rotation without a restart: vgate serves the new certificate once the files change.

import assert from "node:assert/strict";
import { join } from "node:path";
import { Writable } from "node:stream";
import { startServe } from "../../../webhook/src/cli/serve-runtime.js";
import { createLogger } from "../../../webhook/src/server/logger.js";
import { selfSignedTls } from "../../../webhook/src/server/tls.js";
import { servedFingerprint, writeTlsFiles } from "../../support/tls-files.js";
import { testTempDir } from "../../support/temp-dir.js";

describe("TLS certificate reload", function () {
  this.timeout(20_000);

  it("serves a rotated certificate without a restart", async () => {
    const dir = testTempDir("vgate-tls-");
    writeTlsFiles(dir, await selfSignedTls());
    const serve = await startServe(
      {
        port: 0,
        bindAddress: "127.0.0.1",
        tlsCertFile: join(dir, "tls.crt"),
        tlsKeyFile: join(dir, "tls.key"),
        groupDomain: "loft.sh",
        adminGroups: ["system:masters"],
        logLevel: "info",
        dev: true,
        tlsReloadIntervalMs: 100,
      },
      createLogger("silent", new Writable({ write: (_c, _e, cb) => cb() })),
    );
    try {
      const before = await servedFingerprint(serve.server.port);
      writeTlsFiles(dir, await selfSignedTls());
      let after = before;
      for (let i = 0; i < 50 && after === before; i++) {
        await new Promise((r) => setTimeout(r, 100));
        after = await servedFingerprint(serve.server.port);
      }
      assert.notEqual(after, before, "the new certificate was never served");
    } finally {
      await serve.stop();
    }
  });
});
