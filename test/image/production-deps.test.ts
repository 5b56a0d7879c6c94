// The container image without Docker (these machines have none): the Dockerfile and .dockerignore
// read and checked as Docker reads them, then the image's file tree built here stage by stage
// (test/image/dockerfile.ts): the webhook compiled from the files the build stage copies, the
// production dependencies installed from the lock file with `npm ci --omit=dev`, and the runtime
// stage assembled by its COPY lines. That tree then runs `vgate --help`, `vgate serve --dev` and
// `vgate check-config` as UID 65532 with no other node_modules in reach: nothing at run time needs
// a devDependency, and nothing writes into the image's files. Not checked here: Docker's own
// build and the official base image. The image buildah builds from this Dockerfile (make images)
// is checked by rig-images.test.ts, and run by the node rig.

import assert from "node:assert/strict";
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmod, mkdtemp, readFile, rm, symlink } from "node:fs/promises";
import { existsSync } from "node:fs";
import { builtinModules } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { repoFile, repoRoot } from "../support/fixtures.js";
import { httpsRequest, postJson } from "../support/https-client.js";
import {
  dockerignore,
  exec,
  filesUnder,
  parseCopy,
  parseDockerfile,
  simulateBuild,
  type RunHandler,
  type Stage,
} from "./dockerfile.js";

const file = parseDockerfile(repoFile("Dockerfile"));
const ignored = dockerignore(repoFile(".dockerignore"));
const runtime = file.stages.at(-1)!;
const NON_ROOT = 65532;
const asRoot = process.getuid?.() === 0;

const lastArgs = (stage: Stage, op: string): string | undefined =>
  stage.instructions.filter((i) => i.op === op).at(-1)?.args;
const copies = (stage: Stage) =>
  stage.instructions.filter((i) => i.op === "COPY").map((i) => parseCopy(i));
const entrypoint = (): string[] =>
  JSON.parse(lastArgs(runtime, "ENTRYPOINT") ?? "null") as string[];

describe("Dockerfile and .dockerignore", () => {
  it("has a build stage, a production-dependency stage and a Node 20 runtime stage", () => {
    assert.ok(file.stages.length >= 2, "not multi-stage");
    assert.match(
      runtime.base,
      /^(node:20[.\d]*-bookworm-slim|gcr\.io\/distroless\/nodejs20-debian12)/,
    );
    const builds = file.stages.filter((s) =>
      s.instructions.some((i) => i.op === "RUN" && /\btsc\b/.test(i.args)),
    );
    assert.equal(builds.length, 1, "one stage compiles the TypeScript");
    assert.notEqual(builds[0], runtime, "the runtime stage compiles nothing");
  });

  it("runs as a numeric non-root user, exposes 8443 and starts webhook/bin/vgate", () => {
    const user = lastArgs(runtime, "USER") ?? "";
    const m = /^(\d+)(?::(\d+))?$/.exec(user);
    assert.ok(
      m,
      `USER ${JSON.stringify(user)} is not numeric (the kubelet cannot check runAsNonRoot)`,
    );
    assert.equal(Number(m[1]), NON_ROOT);
    assert.notEqual(Number(m[2] ?? m[1]), 0, "group 0");
    assert.deepEqual(lastArgs(runtime, "EXPOSE")?.split(/\s+/), ["8443"]);
    const [program] = entrypoint();
    const workdir = lastArgs(runtime, "WORKDIR") ?? "/";
    assert.ok(
      copies(runtime).some((c) => `${workdir}/${c.dest.replace(/^\.\//, "")}` === program),
      `ENTRYPOINT ${program} is not a file the runtime stage copies`,
    );
  });

  it("copies only files that exist and are in the build context; --from names earlier stages", () => {
    for (const stage of file.stages) {
      for (const c of copies(stage)) {
        if (c.from !== undefined) {
          const from = file.stages.find((s) => s.name === c.from);
          assert.ok(from && from.index < stage.index, `line ${c.line}: --from=${c.from}`);
          continue;
        }
        for (const source of c.sources) {
          assert.ok(existsSync(join(repoRoot, source)), `line ${c.line}: ${source} does not exist`);
          assert.ok(!ignored(source), `line ${c.line}: ${source} is in .dockerignore`);
        }
      }
    }
  });

  it("gives the runtime stage production dependencies only, and installs nothing in it", () => {
    assert.deepEqual(
      runtime.instructions.filter((i) => i.op === "RUN"),
      [],
      "the runtime stage runs commands",
    );
    for (const c of copies(runtime).filter((c) => c.from !== undefined)) {
      const from = file.stages.find((s) => s.name === c.from)!;
      for (const source of c.sources.filter((s) => s.includes("node_modules"))) {
        const install = from.instructions.find((i) => i.op === "RUN" && /npm ci/.test(i.args));
        assert.match(install?.args ?? "", /--omit=dev/, `${source} from stage ${c.from}`);
      }
    }
  });

  it(".dockerignore keeps local trees and secrets out of the build context", () => {
    for (const path of [
      "node_modules/express/package.json",
      "dist/webhook/src/cli/main.js",
      ".git/HEAD",
      "test/fixtures/x.json",
      "plugin/dist/kubectl-accesskey.mjs",
      ".apiserver/kubeconfig",
      "webhook/tls.key",
    ])
      assert.ok(ignored(path), `${path} is in the build context`);
    for (const path of ["package.json", "package-lock.json", "webhook/src/cli/main.ts"])
      assert.ok(!ignored(path), `${path} is left out`);
  });
});

/**
 * The build arguments `make image` passes (build/build-info.mjs --build-args): this checkout's
 * commit, as the image's build context has no .git.
 */
const buildArgs = (): Record<string, string> =>
  Object.fromEntries(
    execFileSync(process.execPath, ["build/build-info.mjs", "--build-args"], {
      cwd: repoRoot,
      encoding: "utf8",
    })
      .trim()
      .split(/\s*--build-arg\s+/)
      .filter(Boolean)
      .map((arg) => arg.split("=", 2) as [string, string]),
  );

/** Stand-ins for the Dockerfile's RUN lines on this machine. */
const runHandler: RunHandler = (command, { cwd }) => {
  const words = command.split(/\s+/);
  // As docker build runs it: the stage's ARGs in the environment, no git checkout around it.
  if (/^node build\/build-info\.mjs \S+$/.test(command))
    return exec(process.execPath, words.slice(1), {
      cwd,
      env: { PATH: process.env["PATH"], ...buildArgs() },
    }).then(() => {});
  // The full install of the build stage: the repository's node_modules is exactly that (make
  // install runs `npm ci` from the same lock file), so it is linked instead of installed again.
  if (/^npm ci( --no-audit| --no-fund)*$/.test(command))
    return symlink(join(repoRoot, "node_modules"), join(cwd, "node_modules"), "dir");
  if (/^npx tsc\b/.test(command))
    return exec(join(repoRoot, "node_modules/.bin/tsc"), words.slice(2), { cwd }).then(() => {});
  // The production install, as written, from npm's cache when it has the packages.
  if (/^npm ci\b.*--omit=dev\b/.test(command))
    return exec("npm", [...words.slice(1), "--prefer-offline"], { cwd }).then(() => {});
  return null;
};

interface Tree {
  root: string;
  /** The app directory (the runtime WORKDIR) on this machine. */
  app: string;
  /** Path and content hash of every file, for "nothing was written". */
  snapshot: string[];
}

async function snapshot(root: string): Promise<string[]> {
  const files = await filesUnder(root, ".");
  return Promise.all(
    files.sort().map(async (f) => {
      const hash = createHash("sha1");
      try {
        hash.update(await readFile(join(root, f)));
      } catch {
        hash.update("<link>");
      }
      return `${f} ${hash.digest("hex")}`;
    }),
  );
}

describe("the image's file tree, built here without Docker", function () {
  // Compiling the webhook (~15 s of CPU) and the production install (~25 s, from npm's cache) run
  // at the same time.
  this.timeout(60_000);
  let dir: string;
  let tree: Tree;

  before(async function () {
    this.timeout(180_000);
    dir = await mkdtemp(join(tmpdir(), "vgate-image-"));
    await chmod(dir, 0o755);
    const built = await simulateBuild(file, repoRoot, ignored, dir, runHandler);
    const root = built.roots.at(-1)!;
    tree = { root, app: join(root, built.workdir), snapshot: await snapshot(root) };
  });

  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** Runs the image's ENTRYPOINT with `args`, as UID 65532 when this runs as root. */
  const env = (): NodeJS.ProcessEnv => ({ PATH: process.env["PATH"], NODE_ENV: "production" });
  const user = () => (asRoot ? { uid: NON_ROOT, gid: NON_ROOT } : {});
  const program = () => join(tree.root, entrypoint()[0]!);

  it("has no node_modules anywhere above it (Node would search there)", () => {
    for (let d = dirname(tree.app); d !== dirname(d); d = dirname(d))
      assert.ok(!existsSync(join(d, "node_modules")), `${d}/node_modules exists`);
  });

  it("holds no package the lock file marks as a devDependency", async () => {
    const lock = JSON.parse(repoFile("package-lock.json")) as {
      packages: Record<string, { dev?: boolean }>;
    };
    const dev = Object.entries(lock.packages).filter(([path, p]) => path !== "" && p.dev);
    assert.ok(dev.length > 0);
    const present = dev.filter(([path]) => existsSync(join(tree.app, path)));
    assert.deepEqual(
      present.map(([path]) => path),
      [],
    );
    assert.ok(existsSync(join(tree.app, "node_modules/express/package.json")));
  });

  it("has every package the compiled webhook imports", async () => {
    const js = (await filesUnder(tree.app, "dist")).filter((f) => f.endsWith(".js"));
    assert.ok(
      js.some((f) => f.endsWith("dist/webhook/src/cli/main.js")),
      "main.js missing",
    );
    const packages = new Set<string>();
    for (const f of js) {
      const text = await readFile(join(tree.app, f), "utf8");
      for (const m of text.matchAll(
        /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)["']([^"'./][^"']*)["']/g,
      )) {
        const spec = m[1]!;
        if (spec.startsWith("node:") || builtinModules.includes(spec)) continue;
        const parts = spec.split("/");
        packages.add(spec.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!);
      }
    }
    assert.ok(packages.has("express") && packages.has("selfsigned"), [...packages].join(", "));
    const missing = [...packages].filter(
      (p) => !existsSync(join(tree.app, "node_modules", p, "package.json")),
    );
    assert.deepEqual(missing, []);
  });

  it(`runs vgate --help${asRoot ? " as UID 65532" : ""} with only production dependencies`, async () => {
    const cmd = JSON.parse(lastArgs(runtime, "CMD") ?? "[]") as string[];
    const { stdout } = await exec(program(), cmd, { cwd: tree.app, env: env(), ...user() });
    assert.match(stdout, /Usage:\n {2}vgate <command>/);
    assert.match(stdout, /\n {2}serve\s/);
    assert.match(stdout, /\n {2}certs\s/);
  });

  it("runs vgate version: the commit and date given as build arguments, not unknown", async () => {
    const { stdout } = await exec(program(), ["version", "-o", "json"], {
      cwd: tree.app,
      env: env(),
      ...user(),
    });
    const info = JSON.parse(stdout) as Record<string, string>;
    const head = execFileSync("git", ["rev-parse", "HEAD"], { cwd: repoRoot, encoding: "utf8" });
    assert.equal(info["gitCommit"], head.trim());
    assert.match(info["gitTreeState"]!, /^(clean|dirty)$/);
    assert.ok(Number.isFinite(Date.parse(info["buildDate"]!)), info["buildDate"]);
    assert.equal(
      info["version"],
      (JSON.parse(repoFile("package.json")) as { version: string }).version,
    );
  });

  it("runs vgate check-config (config loading and the patch grammar)", async () => {
    const example = join(repoRoot, "webhook/examples/vcluster.yaml");
    const { stdout } = await exec(program(), ["check-config", example], {
      cwd: tree.app,
      env: env(),
      ...user(),
    });
    // The same answer as the repository's vgate: OK, then a line per kind with patches.
    const here = spawnSync(join(repoRoot, "webhook/bin/vgate"), ["check-config", example], {
      encoding: "utf8",
    });
    assert.equal(here.status, 0, here.stderr);
    assert.match(stdout, /^OK\nsync\.toHost\.endpoints\.patches: \d+ patches /);
    assert.equal(stdout, here.stdout);
  });

  it("runs the patch sandbox (SES in sandbox processes) as the repository's vgate does", async () => {
    const args = [
      "patch",
      `--config=${join(repoRoot, "webhook/examples/vcluster.yaml")}`,
      "--direction=toHost",
      "--vcluster-name=my-vc",
      "--vcluster-namespace=vc-ns",
      join(repoRoot, "webhook/examples/endpoints.yaml"),
    ];
    const inImage = await exec(program(), args, { cwd: tree.app, env: env(), ...user() });
    const here = await exec(join(repoRoot, "webhook/bin/vgate"), args, { cwd: repoRoot });
    assert.match(inImage.stdout, /"kind": "Endpoints"/);
    assert.equal(inImage.stdout, here.stdout);
  });

  it("serves an AdmissionReview with vgate serve --dev and exits 0 on SIGTERM", async () => {
    const child = spawn(
      program(),
      ["serve", "--dev", "--port", "0", "--bind-address", "127.0.0.1"],
      { cwd: tree.app, env: env(), stdio: ["ignore", "pipe", "pipe"], ...user() },
    );
    let stderr = "";
    const exited = new Promise<number | null>((res) => child.once("exit", (code) => res(code)));
    try {
      const url = await new Promise<string>((res, rej) => {
        child.stderr.on("data", (c: Buffer) => {
          stderr += String(c);
          const m = /serving on (https:\/\/\S+)/.exec(stderr);
          if (m) res(m[1]!);
        });
        void exited.then((code) => rej(new Error(`vgate exited with ${code}: ${stderr}`)));
      });
      assert.equal((await httpsRequest(`${url}/readyz`)).status, 200);
      const review = JSON.parse(repoFile("webhook/examples/admission-review.json")) as {
        request: { uid: string };
      };
      const res = await postJson(`${url}/validate/ownedaccesskeys`, review);
      assert.equal(res.status, 200, res.text);
      const answer = res.json<{ kind: string; response: { uid: string; allowed: boolean } }>();
      assert.equal(answer.kind, "AdmissionReview");
      assert.equal(answer.response.uid, review.request.uid);
      assert.equal(typeof answer.response.allowed, "boolean");
    } finally {
      child.kill("SIGTERM");
    }
    assert.equal(await exited, 0, stderr);
  });

  it("was not written to by any of those runs (a read-only root filesystem is enough)", async () => {
    assert.deepEqual(await snapshot(tree.root), tree.snapshot);
  });
});
