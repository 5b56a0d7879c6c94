// The node rig's container images, which `make images` (test/image/build-images.sh) makes on this
// machine into ${XDG_CACHE_HOME:-~/.cache}/vgate/images/ as OCI archives, listed in images.json
// there. The rig imports each archive into its containerd (`ctr -n k8s.io images import`, which
// names the images from the archive); a ref is the full name containerd and the kubelet then know
// the image by.

import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { repoFile } from "../fixtures.js";

export interface RigImage {
  /** The OCI archive. vgate and vgateNext share theirs: import each distinct archive once. */
  archive: string;
  /** The full reference, as containerd and the kubelet name the image. */
  ref: string;
}

export interface RigImages {
  /** containerd's sandbox image: this ref goes in the CRI plugin's `sandbox_image`. */
  pause: RigImage;
  /** busybox with a link per applet (sh, httpd, wget, …). */
  test: RigImage;
  /** vgate from the Dockerfile, under the name manifests/kustomization.yaml gives it. */
  vgate: RigImage;
  /** The same layers under another config (another image ID), for the rolling upgrade. */
  vgateNext: RigImage;
}

export type RigImageLookup = { found: RigImages } | { missing: string };

const NAMES = ["pause", "test", "vgate", "vgateNext"] as const;

const HOW =
  "run `make images` as root (it needs apt-get install -y buildah debootstrap gcc libc6-dev " +
  "busybox-static, and the k8s.io/kubernetes module that `make kube` downloads)";

/** Where `make images` writes. */
export function rigImagesDir(env: NodeJS.ProcessEnv = process.env): string {
  const cache = env["XDG_CACHE_HOME"] || join(env["HOME"] || homedir(), ".cache");
  return join(cache, "vgate", "images");
}

/** The images `make images` made, or what is missing and what to do about it. */
export function rigImages(env: NodeJS.ProcessEnv = process.env): RigImageLookup {
  const dir = rigImagesDir(env);
  let index: unknown;
  try {
    index = JSON.parse(readFileSync(join(dir, "images.json"), "utf8"));
  } catch {
    return { missing: `no rig images in ${dir}: ${HOW}` };
  }
  const found = {} as RigImages;
  for (const name of NAMES) {
    const entry = (index as Record<string, unknown> | null)?.[name] as
      Partial<Record<keyof RigImage, unknown>> | undefined;
    if (typeof entry?.archive !== "string" || typeof entry.ref !== "string")
      return { missing: `${dir}/images.json has no ${name} image: ${HOW}` };
    const archive = join(dir, entry.archive);
    if (!existsSync(archive)) return { missing: `${archive} is missing: ${HOW}` };
    found[name] = { archive, ref: entry.ref };
  }
  // The tag is package.json's version when the archive was made; after a version change the
  // manifests ask for an image the archive does not hold.
  const version = (JSON.parse(repoFile("package.json")) as { version: string }).version;
  if (!found.vgate.ref.endsWith(`:${version}`))
    return { missing: `${found.vgate.ref} is not vgate ${version}: ${HOW}` };
  return { found };
}
