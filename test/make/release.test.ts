// `make release`: dist/release/ holds every install of make manifests, the four krew archives and
// the krew manifest with their sha256, the image as an OCI archive holding vgate:<version> alone,
// and a SHA256SUMS file over all of them; the archives are byte for byte the same when made again;
// an archive's plugin runs as krew installs it. LICENSE is the Apache License 2.0, unmodified.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { parse, parseAllDocuments } from "yaml";
import { repoRoot } from "../support/fixtures.js";
import { HAVE_ANY_KUBECTL } from "../support/kubectl.js";
import { rigImages } from "../support/node/images.js";
import { packageVersion, runIn, type Run } from "../manifests/make.js";

const out = join(repoRoot, "dist/release");
const PLATFORMS = ["linux_amd64", "linux_arm64", "darwin_amd64", "darwin_arm64"];
/** The platform whose archive holds make plugin-binary's single executable (scripts/release.sh). */
const NATIVE = ({ x64: "linux_amd64", arm64: "linux_arm64" } as Record<string, string | undefined>)[
  process.arch
];
/** The sha256 of the Apache License 2.0 as apache.org, Debian and k8s.io/kubernetes ship it. */
const APACHE_2_0_SHA256 = "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30";

const sha256 = (file: string): string =>
  createHash("sha256").update(readFileSync(file)).digest("hex");

function skipReason(): string {
  if (!HAVE_ANY_KUBECTL) return " (skipped: kubectl is not on PATH; make manifests needs it)";
  if (process.getuid?.() !== 0)
    return " (skipped: make release runs make images, which needs root)";
  const images = rigImages();
  return "missing" in images ? ` (skipped: ${images.missing})` : "";
}

/** `helm package`'s file name for charts/vgate, when this checkout has the chart. */
function chartPackage(): string[] {
  const file = join(repoRoot, "charts/vgate/Chart.yaml");
  if (!statSync(file, { throwIfNoEntry: false })) return [];
  const chart = parse(readFileSync(file, "utf8")) as { name: string; version: string };
  return [`${chart.name}-${chart.version}.tgz`];
}

function runOutside(cmd: string, args: string[], env: NodeJS.ProcessEnv, cwd: string) {
  return new Promise<Run>((resolve) =>
    execFile(cmd, args, { env, cwd, timeout: 60_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr }),
    ),
  );
}

interface Descriptor {
  digest: string;
  size: number;
  annotations?: Record<string, string>;
}

describe("LICENSE", () => {
  it("is the Apache License 2.0 (package.json's license), unmodified", () => {
    assert.equal(sha256(join(repoRoot, "LICENSE")), APACHE_2_0_SHA256);
    const pkg = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as {
      license: string;
    };
    assert.equal(pkg.license, "Apache-2.0");
  });
});

describe("make release-chart", () => {
  it("without charts/vgate: says there is no chart to package, exit 2", async function () {
    if (statSync(join(repoRoot, "charts/vgate"), { throwIfNoEntry: false })) this.skip();
    const r = await runIn("make", ["--no-print-directory", "release-chart"]);
    assert.equal(r.code, 2);
    assert.match(
      r.stderr,
      /charts\/vgate\/Chart\.yaml is missing: this checkout has no Helm chart/,
    );
  });
});

const why = skipReason();
(why ? describe.skip : describe)(`make release${why}`, function () {
  this.timeout(600_000);
  const version = packageVersion();
  const scratch = mkdtempSync(join(tmpdir(), "vgate-release-test-"));
  after(() => rmSync(scratch, { recursive: true, force: true }));

  before(async () => {
    const r = await runIn("make", ["--no-print-directory", "release"], {}, 600_000);
    assert.equal(r.code, 0, r.stderr);
  });

  it("holds every install of make manifests, the krew archives and manifest, the image, SHA256SUMS", () => {
    // The installs make manifests renders (make-manifests.test.ts checks each against kustomize).
    const installs = /^MANIFEST_INSTALLS := (.+)$/m
      .exec(readFileSync(join(repoRoot, "Makefile"), "utf8"))![1]!
      .split(" ");
    const expected = [
      ...installs.map((name) => `vgate-${name}.yaml`),
      ...PLATFORMS.map((p) => `kubectl-accesskey_${p}.tar.gz`),
      "accesskey.yaml",
      `vgate-${version}.oci.tar`,
      ...chartPackage(),
      "SHA256SUMS",
    ];
    assert.deepEqual(readdirSync(out).sort(), expected.sort());
    for (const name of installs) {
      const docs = parseAllDocuments(readFileSync(join(out, `vgate-${name}.yaml`), "utf8"));
      for (const d of docs) assert.deepEqual(d.errors, [], `${name}: YAML errors`);
      const kinds = docs.map((d) => (d.toJS() as { kind: string }).kind);
      assert.ok(kinds.includes("Deployment"), `${name}: no Deployment`);
    }
  });

  it("SHA256SUMS holds the sha256 of every other file, in sha256sum -c's format", async () => {
    const lines = readFileSync(join(out, "SHA256SUMS"), "utf8").trimEnd().split("\n");
    const listed = lines.map((l) => {
      const m = /^([0-9a-f]{64}) {2}(\S+)$/.exec(l);
      assert.ok(m, `not a sha256sum line: ${l}`);
      assert.equal(m[1], sha256(join(out, m[2]!)), m[2]);
      return m[2]!;
    });
    assert.deepEqual(
      listed,
      readdirSync(out)
        .filter((f) => f !== "SHA256SUMS")
        .sort(),
    );
    const check = await runOutside("sha256sum", ["-c", "SHA256SUMS"], process.env, out);
    assert.equal(check.code, 0, check.stdout + check.stderr);
  });

  it("the krew manifest names each platform's archive with its sha256", () => {
    const manifest = parse(readFileSync(join(out, "accesskey.yaml"), "utf8")) as {
      kind: string;
      metadata: { name: string };
      spec: {
        version: string;
        platforms: {
          selector: { matchLabels: { os: string; arch: string } };
          uri: string;
          sha256: string;
          bin: string;
        }[];
      };
    };
    assert.equal(manifest.kind, "Plugin");
    assert.equal(manifest.metadata.name, "accesskey");
    assert.equal(manifest.spec.version, `v${version}`);
    const platforms = manifest.spec.platforms.map((p) => {
      const { os, arch } = p.selector.matchLabels;
      const archive = `kubectl-accesskey_${os}_${arch}.tar.gz`;
      assert.ok(p.uri.endsWith(`/releases/download/v${version}/${archive}`), p.uri);
      assert.equal(p.sha256, sha256(join(out, archive)), archive);
      assert.equal(p.bin, "bin/kubectl-accesskey");
      return `${os}_${arch}`;
    });
    assert.deepEqual(platforms.sort(), [...PLATFORMS].sort());
  });

  /** The archive of a platform unpacked as krew does, its `bin` linked into a PATH directory. */
  async function krewInstall(platform: string): Promise<{ store: string; bin: string }> {
    const store = join(scratch, `store-${platform}`);
    const bin = join(scratch, `krew-bin-${platform}`);
    mkdirSync(store);
    mkdirSync(bin);
    const untar = await runOutside(
      "tar",
      ["-xzf", join(out, `kubectl-accesskey_${platform}.tar.gz`), "-C", store],
      process.env,
      scratch,
    );
    assert.equal(untar.code, 0, untar.stderr);
    assert.equal(sha256(join(store, "LICENSE")), APACHE_2_0_SHA256);
    // krew links the manifest's `bin` into ~/.krew/bin, which the user puts on PATH.
    symlinkSync(join(store, "bin/kubectl-accesskey"), join(bin, "kubectl-accesskey"));
    symlinkSync(
      join(store, "bin/kubectl_complete-accesskey"),
      join(bin, "kubectl_complete-accesskey"),
    );
    return { store, bin };
  }

  async function runsWithCompletion(path: string): Promise<void> {
    const env: NodeJS.ProcessEnv = { ...process.env, PATH: path };
    delete env["KUBECONFIG"];
    const help = await runOutside("kubectl", ["accesskey", "--help"], env, scratch);
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /^ {2}create +Create an access key/m);
    const complete = await runOutside("kubectl", ["__complete", "accesskey", "dis"], env, scratch);
    assert.match(complete.stdout, /^disable\t/m);
  }

  it("an archive's plugin runs as krew installs it, with kubectl's completion", async () => {
    const { bin } = await krewInstall("darwin_arm64");
    await runsWithCompletion(`${bin}${delimiter}${process.env["PATH"] ?? ""}`);
  });

  it("this platform's archive holds the single executable, which runs without node", async function () {
    if (process.platform !== "linux" || !NATIVE) this.skip();
    const { store, bin } = await krewInstall(NATIVE);
    assert.deepEqual(readdirSync(store).sort(), ["LICENSE", "bin"]);
    // An ELF executable, not a script for node.
    assert.deepEqual(
      [...readFileSync(join(store, "bin/kubectl-accesskey")).subarray(0, 4)],
      [0x7f, 0x45, 0x4c, 0x46],
    );
    const manifest = readFileSync(join(out, "accesskey.yaml"), "utf8");
    assert.match(
      manifest,
      new RegExp(`On ${NATIVE.replace("_", "/")} the plugin is one executable`),
    );
    // PATH: the krew links, kubectl and the shell tools the completion helper uses; no node.
    const tools = join(scratch, "tools-without-node");
    mkdirSync(tools);
    for (const tool of ["kubectl", "sh", "dirname", "readlink"]) {
      const found = await runOutside("sh", ["-c", `command -v ${tool}`], process.env, scratch);
      symlinkSync(realpathSync(found.stdout.trim()), join(tools, tool));
    }
    const noNode = await runOutside(
      "sh",
      ["-c", "command -v node"],
      { PATH: `${bin}${delimiter}${tools}` },
      scratch,
    );
    assert.notEqual(noNode.code, 0, "node is on the test's PATH");
    await runsWithCompletion(`${bin}${delimiter}${tools}`);
  });

  it("the image archive holds vgate:<version> alone, every blob it names and no other", async () => {
    const layout = join(scratch, "image");
    mkdirSync(layout);
    const untar = await runOutside(
      "tar",
      ["-xf", join(out, `vgate-${version}.oci.tar`), "-C", layout],
      process.env,
      scratch,
    );
    assert.equal(untar.code, 0, untar.stderr);
    const read = (d: Descriptor) => {
      const file = join(layout, "blobs", d.digest.replace(":", "/"));
      assert.equal(`sha256:${sha256(file)}`, d.digest, "a blob's content is not its digest");
      assert.equal(statSync(file).size, d.size, `${d.digest}: size`);
      return readFileSync(file, "utf8");
    };
    const index = JSON.parse(readFileSync(join(layout, "index.json"), "utf8")) as {
      manifests: Descriptor[];
    };
    assert.equal(index.manifests.length, 1);
    const [top] = index.manifests;
    const ref = `ghcr.io/vgate/vgate:${version}`;
    assert.equal(top!.annotations?.["org.opencontainers.image.ref.name"], ref);
    assert.equal(top!.annotations?.["io.containerd.image.name"], ref);
    const manifest = JSON.parse(read(top!)) as { config: Descriptor; layers: Descriptor[] };
    const config = JSON.parse(read(manifest.config)) as { config: { Entrypoint: string[] } };
    assert.deepEqual(config.config.Entrypoint, ["/app/webhook/bin/vgate"]);
    for (const layer of manifest.layers) read(layer);
    const named = [top!, manifest.config, ...manifest.layers].map((d) => d.digest.slice(7));
    assert.deepEqual(readdirSync(join(layout, "blobs/sha256")).sort(), [...new Set(named)].sort());
  });

  it("made again, every file is the same, byte for byte", async () => {
    const first = readFileSync(join(out, "SHA256SUMS"), "utf8");
    const again = await runIn("make", ["--no-print-directory", "release"], {}, 600_000);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(readFileSync(join(out, "SHA256SUMS"), "utf8"), first);
  });
});
