// The node rig's images as `make images` left them (test/image/build-images.sh), read back from
// their OCI archives without any container tool: each archive names its images for containerd and
// holds every blob its manifests point at, with layers that match their configs' diff_ids; pause and
// the test image are static binaries alone; vgate's image is the Dockerfile's runtime stage (user
// 65532, the launcher, production dependencies only, no npm cache, build settings or secrets), of
// this checkout, under the name the manifests install, and vgate-next differs from it by one label.
// Importing and running them is the node rig's part.

import assert from "node:assert/strict";
import { parse } from "yaml";
import { repoFile } from "../support/fixtures.js";
import { rigImages, type RigImage, type RigImages } from "../support/node/images.js";
import { OciArchive, sha256, type OciImage, type TarEntry } from "./oci-archive.js";

const lookup = rigImages();
const SKIP_REASON = "missing" in lookup ? ` (skipped: ${lookup.missing})` : "";
const version = (JSON.parse(repoFile("package.json")) as { version: string }).version;

/** An ELF executable with no program interpreter: it needs no library from the image. */
function isStaticElf(data: Buffer): boolean {
  if (data.length < 64 || data.readUInt32BE(0) !== 0x7f454c46 || data[4] !== 2) return false;
  const phoff = Number(data.readBigUInt64LE(0x20));
  const phentsize = data.readUInt16LE(0x36);
  const phnum = data.readUInt16LE(0x38);
  for (let i = 0; i < phnum; i++) if (data.readUInt32LE(phoff + i * phentsize) === 3) return false;
  return true;
}

const executable = (e: TarEntry | undefined): boolean =>
  e?.type === "file" && (e.mode & 0o111) === 0o111;

("found" in lookup ? describe : describe.skip)(
  `the node rig's images (make images)${SKIP_REASON}`,
  function () {
    this.timeout(60_000);
    let images: RigImages;
    const archives = new Map<string, OciArchive>();
    const open = (image: RigImage): { archive: OciArchive; image: OciImage } => {
      let archive = archives.get(image.archive);
      if (!archive) archives.set(image.archive, (archive = new OciArchive(image.archive)));
      return { archive, image: archive.image(image.ref) };
    };
    let vgateTree: Map<string, TarEntry>;

    before(function () {
      this.timeout(120_000);
      if (!("found" in lookup)) return;
      images = lookup.found;
      const { archive, image } = open(images.vgate);
      const kept = new Set([
        "/app/package.json",
        "/app/webhook/bin/vgate",
        "/app/dist/build-info.json",
      ]);
      vgateTree = archive.tree(image, (path) => kept.has(path));
    });

    it("names every image for containerd and holds every blob, each as its digest says", () => {
      for (const name of ["pause", "test", "vgate", "vgateNext"] as const) {
        const { archive, image } = open(images[name]);
        const ref = images[name].ref;
        assert.equal(image.descriptor.annotations?.["org.opencontainers.image.ref.name"], ref);
        assert.equal(image.manifest.mediaType, "application/vnd.oci.image.manifest.v1+json");
        assert.equal(sha256(archive.blob(image.descriptor.digest)), image.descriptor.digest);
        for (const d of [image.manifest.config, ...image.manifest.layers]) {
          assert.equal(sha256(archive.blob(d.digest)), d.digest, `${ref}: blob ${d.digest}`);
          assert.equal(archive.blob(d.digest).length, d.size, `${ref}: size of ${d.digest}`);
        }
        assert.deepEqual(
          archive.layers(image).map(sha256),
          image.config.rootfs.diff_ids,
          `${ref}: the layers are not what the config's diff_ids say`,
        );
        assert.equal(image.config.os, "linux");
        assert.equal(image.config.architecture, process.arch === "x64" ? "amd64" : process.arch);
      }
    });

    it("pause: the static pause binary alone, run as upstream's image runs it", () => {
      const { archive, image } = open(images.pause);
      const tree = archive.tree(image, (path) => path === "/pause");
      assert.deepEqual([...tree.keys()], ["/pause"]);
      assert.ok(executable(tree.get("/pause")), "/pause is not an executable file");
      assert.ok(isStaticElf(tree.get("/pause")!.data), "/pause is not a static executable");
      assert.equal(image.config.config.User, "65535:65535");
      assert.deepEqual(image.config.config.Entrypoint, ["/pause"]);
    });

    it("test: busybox-static with a link per applet, sh by default", () => {
      const { archive, image } = open(images.test);
      const tree = archive.tree(image, (path) => path === "/bin/busybox");
      assert.ok(isStaticElf(tree.get("/bin/busybox")!.data), "/bin/busybox is not static");
      for (const applet of ["/bin/sh", "/usr/sbin/httpd", "/usr/bin/wget", "/bin/sleep"])
        assert.equal(tree.get(applet)?.linkname, "/bin/busybox", applet);
      const files = [...tree.values()].filter((e) => e.type === "file").map((e) => e.path);
      assert.deepEqual(files, ["/bin/busybox"]);
      assert.equal(tree.get("/tmp")?.mode, 0o1777);
      assert.deepEqual(image.config.config.Cmd, ["sh"]);
    });

    it("vgate: the Dockerfile's runtime stage as its config (user 65532, the launcher)", () => {
      const { config } = open(images.vgate).image.config;
      assert.equal(config.User, "65532:65532");
      assert.deepEqual(config.Entrypoint, ["/app/webhook/bin/vgate"]);
      assert.deepEqual(config.Cmd, ["--help"]);
      assert.equal(config.WorkingDir, "/app");
      assert.deepEqual(Object.keys(config.ExposedPorts ?? {}), ["8443/tcp"]);
      assert.ok(config.Env?.includes("NODE_ENV=production"), String(config.Env));
      const path = config.Env?.find((e) => e.startsWith("PATH="))?.split(/[=:]/) ?? [];
      assert.ok(path.includes("/usr/local/bin"), "node is not on PATH");
    });

    it("vgate: node and npm where the official node image has them, of the Dockerfile's version", () => {
      const nodeImage = /^ARG NODE_IMAGE=node:(\d+\.\d+)-/m.exec(repoFile("Dockerfile"))![1]!;
      const { config } = open(images.vgate).image.config;
      const nodeVersion = config.Env?.find((e) => e.startsWith("NODE_VERSION="))?.slice(13);
      assert.ok(nodeVersion?.startsWith(`${nodeImage}.`), `NODE_VERSION ${nodeVersion}`);
      assert.ok(executable(vgateTree.get("/usr/local/bin/node")), "no /usr/local/bin/node");
      assert.equal(
        vgateTree.get("/usr/local/bin/npm")?.linkname,
        "../lib/node_modules/npm/bin/npm-cli.js",
      );
      assert.ok(vgateTree.has("/usr/local/lib/node_modules/npm/package.json"));
    });

    it("vgate: production dependencies only, no npm cache, build settings or secrets", () => {
      const lock = JSON.parse(repoFile("package-lock.json")) as {
        packages: Record<string, { dev?: boolean }>;
      };
      const dev = Object.entries(lock.packages).filter(([path, p]) => path !== "" && p.dev);
      assert.ok(dev.some(([path]) => path === "node_modules/typescript"));
      assert.deepEqual(
        dev.map(([path]) => `/app/${path}`).filter((path) => vgateTree.has(path)),
        [],
        "devDependencies in the image",
      );
      assert.ok(vgateTree.has("/app/node_modules/express/package.json"));
      const paths = [...vgateTree.keys()];
      assert.deepEqual(
        paths.filter(
          (p) =>
            /\/\.npm(\/|$)|\/_cacache(\/|$)|(^|\/)\.?npmrc$/.test(p) ||
            p.startsWith("/usr/local/etc/") ||
            (p.startsWith("/app/") && /\.(pem|key)$|\/kubeconfig$/.test(p)),
        ),
        [],
      );
      assert.deepEqual(paths.filter((p) => /^\/app\/[^/]+$/.test(p)).sort(), [
        "/app/dist",
        "/app/node_modules",
        "/app/package.json",
        "/app/webhook",
      ]);
      // Owned by root and not writable by the process (the Dockerfile: "read-only to the process").
      const writable = paths.filter((p) => {
        const e = vgateTree.get(p)!;
        return (
          p.startsWith("/app") && e.type !== "symlink" && (e.uid !== 0 || (e.mode & 0o022) !== 0)
        );
      });
      assert.deepEqual(writable, []);
    });

    it("vgate: holds this checkout's launcher and package.json (else run make images again)", () => {
      assert.ok(executable(vgateTree.get("/app/webhook/bin/vgate")));
      assert.ok(vgateTree.has("/app/dist/webhook/src/cli/main.js"));
      for (const file of ["package.json", "webhook/bin/vgate"])
        assert.equal(
          vgateTree.get(`/app/${file}`)?.data.toString("utf8"),
          repoFile(file),
          `the image's ${file} is not this checkout's: run make images`,
        );
    });

    it("vgate: records the commit it was built from (build arguments; the context has no .git)", () => {
      const entry = vgateTree.get("/app/dist/build-info.json");
      assert.ok(entry?.type === "file", "no /app/dist/build-info.json: run make images again");
      const info = JSON.parse(entry.data.toString("utf8")) as Record<string, string>;
      assert.match(info["gitCommit"] ?? "", /^[0-9a-f]{40}$/, "the image's commit is unknown");
      assert.match(info["gitTreeState"] ?? "", /^(clean|dirty)$/);
      assert.ok(Number.isFinite(Date.parse(info["buildDate"] ?? "")), info["buildDate"]);
    });

    it("vgate-next: the same manifest layers, a config that differs by its version label only", () => {
      const vgate = open(images.vgate);
      const next = open(images.vgateNext);
      assert.equal(images.vgateNext.ref, `${images.vgate.ref}-next`);
      assert.equal(images.vgateNext.archive, images.vgate.archive);
      assert.deepEqual(next.image.manifest.layers, vgate.image.manifest.layers);
      assert.notEqual(next.image.manifest.config.digest, vgate.image.manifest.config.digest);
      const { Labels = {}, ...rest } = next.image.config.config;
      const { "org.opencontainers.image.version": label, ...others } = Labels;
      assert.equal(label, `${version}-next`);
      const { Labels: vgateLabels = {}, ...vgateRest } = vgate.image.config.config;
      assert.deepEqual(others, vgateLabels);
      assert.deepEqual(rest, vgateRest);
      assert.deepEqual(next.image.config.rootfs, vgate.image.config.rootfs);
    });

    it("vgate: the image manifests/kustomization.yaml installs", () => {
      const kustomization = parse(repoFile("manifests/kustomization.yaml")) as {
        images: { name: string; newName: string; newTag: string }[];
      };
      const entry = kustomization.images.find((i) => i.name === "vgate")!;
      assert.equal(images.vgate.ref, `${entry.newName}:${entry.newTag}`);
      assert.equal(images.vgate.ref, `ghcr.io/vgate/vgate:${version}`);
    });
  },
);
