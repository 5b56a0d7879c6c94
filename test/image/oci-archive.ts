// OCI image archives (an OCI image layout in a tar, as `make images` writes them and `ctr images
// import` reads them) opened with no container tool: the index, each image's manifest and config,
// and the file tree its layers make, with whiteouts applied as a runtime applies them.

import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { posix } from "node:path";
import { gunzipSync } from "node:zlib";

export interface TarEntry {
  /** Absolute, normalised: "/app/package.json". */
  path: string;
  type: "file" | "dir" | "symlink" | "hardlink" | "other";
  mode: number;
  uid: number;
  gid: number;
  linkname: string;
  data: Buffer;
}

const TYPES: Record<string, TarEntry["type"]> = {
  "0": "file",
  "": "file",
  "7": "file",
  "5": "dir",
  "2": "symlink",
  "1": "hardlink",
};

/** The entries of a tar (ustar, with GNU long names and pax extended headers). */
export function readTar(buf: Buffer): TarEntry[] {
  const entries: TarEntry[] = [];
  let pax: Record<string, string> = {};
  let longName: string | undefined;
  let longLink: string | undefined;
  for (let off = 0; off + 512 <= buf.length;) {
    const header = buf.subarray(off, off + 512);
    if (header.every((b) => b === 0)) break;
    const str = (at: number, len: number): string => {
      const field = header.subarray(at, at + len);
      const end = field.indexOf(0);
      return field.subarray(0, end < 0 ? len : end).toString("utf8");
    };
    const octal = (at: number, len: number): number => parseInt(str(at, len).trim() || "0", 8);
    const flag = str(156, 1);
    const meta = flag === "x" || flag === "g" || flag === "L" || flag === "K";
    const size = !meta && pax["size"] !== undefined ? Number(pax["size"]) : octal(124, 12);
    const data = buf.subarray(off + 512, off + 512 + size);
    off += 512 + Math.ceil(size / 512) * 512;
    if (flag === "x") pax = parsePax(data);
    else if (flag === "L") longName = data.toString("utf8").replace(/\0[^]*$/, "");
    else if (flag === "K") longLink = data.toString("utf8").replace(/\0[^]*$/, "");
    if (meta) continue;
    const prefix = str(257, 5) === "ustar" ? str(345, 155) : "";
    const name = pax["path"] ?? longName ?? (prefix ? `${prefix}/${str(0, 100)}` : str(0, 100));
    const path = posix.normalize(`/${name}`).replace(/(.)\/$/, "$1");
    entries.push({
      path,
      type: TYPES[flag] ?? "other",
      mode: octal(100, 8) & 0o7777,
      uid: pax["uid"] !== undefined ? Number(pax["uid"]) : octal(108, 8),
      gid: pax["gid"] !== undefined ? Number(pax["gid"]) : octal(116, 8),
      linkname: pax["linkpath"] ?? longLink ?? str(157, 100),
      data,
    });
    pax = {};
    longName = longLink = undefined;
  }
  return entries;
}

/** "<length> <key>=<value>\n" records. */
function parsePax(data: Buffer): Record<string, string> {
  const out: Record<string, string> = {};
  for (let at = 0; at < data.length;) {
    const space = data.indexOf(0x20, at);
    if (space < 0) break;
    const length = Number(data.subarray(at, space).toString("utf8"));
    if (!(length > 0)) break;
    const record = data.subarray(space + 1, at + length - 1).toString("utf8");
    const eq = record.indexOf("=");
    out[record.slice(0, eq)] = record.slice(eq + 1);
    at += length;
  }
  return out;
}

export interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  annotations?: Record<string, string>;
}

export interface ImageConfig {
  architecture: string;
  os: string;
  config: {
    User?: string;
    Entrypoint?: string[];
    Cmd?: string[];
    Env?: string[];
    WorkingDir?: string;
    ExposedPorts?: Record<string, object>;
    Labels?: Record<string, string>;
  };
  rootfs: { type: string; diff_ids: string[] };
}

export interface OciImage {
  /** The manifest's descriptor in index.json. */
  descriptor: Descriptor;
  manifest: { mediaType: string; config: Descriptor; layers: Descriptor[] };
  config: ImageConfig;
}

export class OciArchive {
  readonly files: Map<string, Buffer>;
  readonly index: { manifests: Descriptor[] };

  constructor(path: string) {
    this.files = new Map(readTar(readFileSync(path)).map((e) => [e.path, e.data]));
    this.index = this.json("/index.json");
  }

  json<T>(path: string): T {
    const data = this.files.get(path);
    if (!data) throw new Error(`no ${path} in the archive`);
    return JSON.parse(data.toString("utf8")) as T;
  }

  blob(digest: string): Buffer {
    const data = this.files.get(`/blobs/${digest.replace(":", "/")}`);
    if (!data) throw new Error(`no blob ${digest} in the archive`);
    return data;
  }

  /** The image whose manifest is named `ref` (io.containerd.image.name). */
  image(ref: string): OciImage {
    const descriptor = this.index.manifests.find(
      (m) => m.annotations?.["io.containerd.image.name"] === ref,
    );
    if (!descriptor) throw new Error(`no image named ${ref} in the archive`);
    const manifest = JSON.parse(
      this.blob(descriptor.digest).toString("utf8"),
    ) as OciImage["manifest"];
    const config = JSON.parse(this.blob(manifest.config.digest).toString("utf8")) as ImageConfig;
    return { descriptor, manifest, config };
  }

  /** Each layer uncompressed, in order. */
  layers(image: OciImage): Buffer[] {
    return image.manifest.layers.map((layer) => {
      const data = this.blob(layer.digest);
      return layer.mediaType.endsWith("+gzip") ? gunzipSync(data) : data;
    });
  }

  /**
   * The image's file tree: every layer's entries applied in order, a `.wh.<name>` entry removing
   * <name> (and what is under it) from the layers below, `.wh..wh..opq` emptying its directory.
   * Contents are kept only for the paths `keep` asks for.
   */
  tree(image: OciImage, keep: (path: string) => boolean = () => false): Map<string, TarEntry> {
    const tree = new Map<string, TarEntry>();
    const removeUnder = (dir: string, self: boolean) => {
      for (const path of [...tree.keys()])
        if ((self && path === dir) || path.startsWith(dir === "/" ? "/" : `${dir}/`))
          tree.delete(path);
    };
    for (const layer of this.layers(image)) {
      const entries = readTar(layer);
      for (const e of entries) {
        const base = posix.basename(e.path);
        if (base === ".wh..wh..opq") removeUnder(posix.dirname(e.path), false);
        else if (base.startsWith(".wh."))
          removeUnder(posix.join(posix.dirname(e.path), base.slice(4)), true);
      }
      for (const e of entries)
        if (!posix.basename(e.path).startsWith(".wh.") && e.path !== "/")
          tree.set(e.path, { ...e, data: keep(e.path) ? Buffer.from(e.data) : Buffer.alloc(0) });
    }
    return tree;
  }
}

export const sha256 = (data: Buffer): string =>
  `sha256:${createHash("sha256").update(data).digest("hex")}`;
