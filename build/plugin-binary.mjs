// `make plugin-binary`: kubectl accesskey as one executable that needs no Node.js installed, a
// Node.js single-executable application (https://nodejs.org/api/single-executable-applications.html)
// made from this machine's node, for this machine's platform. It starts faster than the plugin
// run by node from plugin/dist: one CommonJS file whose V8 code cache is in the binary (the SEA
// config's useCodeCache) instead of an ES module graph that node parses and compiles on every
// call. The krew archive of this platform ships it (scripts/release.sh).
//
// The bundle holds the whole plugin but @kubernetes/client-node (14 MB of JavaScript, loaded only
// for the legacy Azure, GCP and OIDC auth providers): that is bundled apart and embedded as an
// asset of the executable, compiled only when a kubeconfig asks for one of those providers, so it
// costs the other calls nothing.
//
// Usage: node build/plugin-binary.mjs OUTPUT (e.g. plugin/dist/bin/kubectl-accesskey), after
// build/build-info.mjs wrote dist/build-info.json. Linux only: on macOS the executable would
// have to be signed again after the injection.

import { execFileSync } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const output = resolve(process.argv[2] ?? "plugin/dist/bin/kubectl-accesskey");
if (process.platform !== "linux") {
  console.error(`make plugin-binary: builds on Linux only (this is ${process.platform})`);
  process.exit(2);
}
// Node's own sentinel (SEA docs): postject flips it so that the executable runs the blob.
const FUSE = "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2";
const CLIENT_NODE_ASSET = "client-node.cjs";

const work = mkdtempSync(join(tmpdir(), "kubectl-accesskey-sea-"));
try {
  const buildInfo = readFileSync(join(repo, "dist/build-info.json"), "utf8");
  const common = {
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node20",
    logLevel: "warning",
    absWorkingDir: repo,
  };
  // A SEA's main script is CommonJS, and its require() loads Node's built-in modules only, so
  // everything else is in the bundle. import.meta.url (build-info.ts's files next to the tsc
  // output, unused once the build information is defined) becomes the executable's own URL.
  await build({
    ...common,
    stdin: {
      contents: [
        'import { main } from "./main.js";',
        "main(process.argv.slice(2)).then((code) => { process.exitCode = code; });",
      ].join("\n"),
      resolveDir: join(repo, "plugin/src"),
      sourcefile: "single-binary-main.ts",
      loader: "ts",
    },
    outfile: join(work, "main.cjs"),
    define: { __VGATE_BUILD_INFO__: buildInfo, "import.meta.url": "__accesskeyExecutableUrl" },
    banner: {
      js: 'const __accesskeyExecutableUrl = require("node:url").pathToFileURL(process.execPath).href;',
    },
    plugins: [clientNodeFromAsset()],
  });
  await build({
    ...common,
    entryPoints: ["@kubernetes/client-node"],
    outfile: join(work, CLIENT_NODE_ASSET),
  });
  const config = {
    main: "main.cjs",
    output: "sea.blob",
    disableExperimentalSEAWarning: true,
    useCodeCache: true,
    assets: { [CLIENT_NODE_ASSET]: CLIENT_NODE_ASSET },
  };
  const configFile = join(work, "sea-config.json");
  writeFileSync(configFile, JSON.stringify(config));
  // NODE_EXTRA_CA_CERTS changes nothing in the blob; unset, node starts faster.
  const env = { ...process.env };
  delete env["NODE_EXTRA_CA_CERTS"];
  // The same checkout makes the same executable, byte for byte (make release's archives are
  // reproducible): the config names files relative to the work directory, which the blob records,
  // and V8's random seed is fixed for this process, which else varies the code cache. The seed of
  // the process that builds the blob only: the executable seeds its own at every start.
  execFileSync(process.execPath, ["--random-seed=1", "--experimental-sea-config", configFile], {
    cwd: work,
    env,
    stdio: "pipe",
  });
  mkdirSync(dirname(output), { recursive: true });
  rmSync(output, { force: true });
  copyFileSync(process.execPath, output);
  chmodSync(output, 0o755);
  execFileSync(
    process.execPath,
    [
      join(repo, "node_modules/postject/dist/cli.js"),
      output,
      "NODE_SEA_BLOB",
      join(work, config.output),
      "--sentinel-fuse",
      FUSE,
    ],
    { env, stdio: "pipe" },
  );
  console.log(`make plugin-binary: ${output}`);
} catch (err) {
  rmSync(output, { force: true });
  throw err;
} finally {
  rmSync(work, { recursive: true, force: true });
}

/**
 * @kubernetes/client-node as a module that compiles the asset when it is first imported (the
 * plugin imports it lazily, for the legacy auth providers only).
 */
function clientNodeFromAsset() {
  return {
    name: "client-node-from-asset",
    setup(b) {
      b.onResolve({ filter: /^@kubernetes\/client-node$/ }, () => ({
        path: "client-node",
        namespace: "sea-asset",
      }));
      // The asset's own optional modules (ws's bufferutil, node-fetch's encoding) are not there:
      // it gets the error a missing module gives, and not the SEA's warning on stderr.
      b.onLoad({ filter: /.*/, namespace: "sea-asset" }, () => ({
        loader: "js",
        contents: `
          const { getAsset } = require("node:sea");
          const { isBuiltin } = require("node:module");
          const { dirname } = require("node:path");
          const { compileFunction } = require("node:vm");
          const builtinOnly = (id) => {
            if (isBuiltin(id)) return require(id);
            throw Object.assign(new Error("Cannot find module '" + id + "'"), { code: "MODULE_NOT_FOUND" });
          };
          const code = getAsset(${JSON.stringify(CLIENT_NODE_ASSET)}, "utf8");
          const params = ["exports", "require", "module", "__filename", "__dirname"];
          compileFunction(code, params, { filename: ${JSON.stringify(CLIENT_NODE_ASSET)} })(
            module.exports, builtinOnly, module, process.execPath, dirname(process.execPath));
        `,
      }));
    },
  };
}
