#!/usr/bin/env bash
# `make release`: the release artifacts of this checkout in dist/release/, flat (as a GitHub
# release holds them), with a SHA256SUMS file over all of them:
#   vgate-<install>.yaml                     every install `make manifests` renders (kubectl kustomize)
#   kubectl-accesskey_<os>_<arch>.tar.gz     krew archives, linux and darwin, amd64 and arm64; this
#                                            machine's platform's holds make plugin-binary's
#                                            single executable, the others node's bundle
#   accesskey.yaml                           the krew manifest, their sha256 filled in
#   vgate-<version>.oci.tar                  the image, an OCI archive (`ctr images import`,
#                                            `skopeo copy oci-archive:…`), from make images
#   SHA256SUMS                               `sha256sum -c SHA256SUMS` checks them
# Usage: scripts/release.sh MANIFESTS_DIR [FILE...]: the Makefile renders the installs into
# MANIFESTS_DIR with make manifests, and brings the plugin bundle and make images up to date first;
# each FILE (the Helm chart package of make release-chart) is added as it is. Archives are
# reproducible: entries sorted, owner 0, modes normalised, every mtime the last commit's time
# (SOURCE_DATE_EPOCH overrides it), gzip without a name or a time stamp.
# REPO (owner/name on GitHub, default vgate/vgate) goes into the krew manifest's URLs.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"

say() { printf 'make release: %s\n' "$*"; }
die() { printf 'make release: error: %s\n' "$*" >&2; exit 1; }

manifests=${1:?usage: scripts/release.sh MANIFESTS_DIR [FILE...]}
shift
for file in "$@"; do [ -f "$file" ] || die "$file does not exist"; done
version=$(node -p 'require("./package.json").version')
REPO=${REPO:-vgate/vgate}
out=dist/release
images="${XDG_CACHE_HOME:-$HOME/.cache}/vgate/images"
epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}

[ -f plugin/dist/kubectl-accesskey.mjs ] || die "plugin/dist is not built: run make plugin-bundle"
[ -n "$(ls "$manifests"/*.yaml 2>/dev/null)" ] || die "$manifests holds no rendered install: run make release"
[ -f "$images/vgate.tar" ] && [ -f "$images/images.json" ] ||
  die "no image archive in $images: run make images (as root, with buildah and debootstrap)"
image_ref=$(node -p 'require(process.argv[1]).vgate.ref' "$images/images.json")
[ "$image_ref" = "ghcr.io/vgate/vgate:$version" ] ||
  die "$images/vgate.tar holds $image_ref, not vgate $version: run make images"

rm -rf "$out"
mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/tmp}/vgate-release.XXXXXX")
trap 'rm -rf "$work"' EXIT

# $1 archive, $2 directory, the rest: its entries (relative to it).
reproducible_tar() {
  local archive=$1 dir=$2
  shift 2
  tar -C "$dir" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" \
    --mode='u+rwX,go+rX,go-w' --format=gnu -cf - "$@" | gzip -n -9 >"$archive"
}

for file in "$manifests"/*.yaml; do
  cp "$file" "$out/vgate-$(basename "$file")"
done
say "manifests: $(cd "$out" && echo vgate-*.yaml)"

# The krew archives: what `make install` puts into lib/kubectl-accesskey (node and the bundle),
# and the license; the archive of this machine's platform holds instead the single executable of
# make plugin-binary, which needs no Node.js, with the completion helper beside it.
plugin="$work/kubectl-accesskey"
mkdir -p "$plugin/bin"
cp -R plugin/dist "$plugin/dist"
rm -rf "$plugin/dist/.deps.mk" "$plugin/dist/bin"
install -m 0755 plugin/bin/kubectl-accesskey plugin/bin/kubectl_complete-accesskey "$plugin/bin/"
install -m 0644 LICENSE "$plugin/LICENSE"
native=""
if [ -x plugin/dist/bin/kubectl-accesskey ]; then
  case "$(uname -s)_$(uname -m)" in
    Linux_x86_64) native=linux_amd64 ;;
    Linux_aarch64 | Linux_arm64) native=linux_arm64 ;;
  esac
fi
if [ -n "$native" ]; then
  single="$work/kubectl-accesskey-$native"
  mkdir -p "$single/bin"
  install -m 0755 plugin/dist/bin/kubectl-accesskey plugin/bin/kubectl_complete-accesskey "$single/bin/"
  install -m 0644 LICENSE "$single/LICENSE"
fi
declare -A sums
for platform in linux_amd64 linux_arm64 darwin_amd64 darwin_arm64; do
  archive="$out/kubectl-accesskey_$platform.tar.gz"
  if [ "$platform" = "$native" ]; then
    reproducible_tar "$archive" "$single" LICENSE bin
  else
    reproducible_tar "$archive" "$plugin" LICENSE bin dist
  fi
  sums[$platform]=$(sha256sum "$archive" | cut -c1-64)
done
# The caveats say which platform needs no Node.js.
if [ -n "$native" ]; then
  NODE_NOTE="On ${native/_//} the plugin is one executable; on the other platforms it needs"
else
  NODE_NOTE="This plugin needs"
fi
VERSION="v$version" REPO="$REPO" NODE_NOTE="$NODE_NOTE" SHA256_LINUX_AMD64=${sums[linux_amd64]} \
  SHA256_LINUX_ARM64=${sums[linux_arm64]} SHA256_DARWIN_AMD64=${sums[darwin_amd64]} \
  SHA256_DARWIN_ARM64=${sums[darwin_arm64]} \
  envsubst '${VERSION} ${REPO} ${NODE_NOTE} ${SHA256_LINUX_AMD64} ${SHA256_LINUX_ARM64} ${SHA256_DARWIN_AMD64} ${SHA256_DARWIN_ARM64}' \
  <plugin/krew/accesskey.yaml.tmpl | sed '1,/^apiVersion:/{/^#/d}' >"$out/accesskey.yaml"
say "krew: 4 archives (${native:+$native: the single executable, $(du -h "$out/kubectl-accesskey_$native.tar.gz" | cut -f1); }others $(du -h "$out/kubectl-accesskey_darwin_arm64.tar.gz" | cut -f1) each) and accesskey.yaml"

# The image: make images' archive holds vgate:<version> and, for the rig's rolling upgrade,
# vgate:<version>-next; the release holds the first alone, with only the blobs it references.
layout="$work/image"
mkdir -p "$layout"
tar -C "$layout" -xf "$images/vgate.tar"
node -e '
  const fs = require("node:fs");
  const [layout, ref] = process.argv.slice(1);
  const index = JSON.parse(fs.readFileSync(`${layout}/index.json`, "utf8"));
  const name = "org.opencontainers.image.ref.name";
  const chosen = index.manifests.filter((m) => m.annotations?.[name] === ref);
  if (chosen.length !== 1) throw new Error(`the archive holds ${chosen.length} images named ${ref}`);
  index.manifests = chosen;
  const blob = (d) => `blobs/${d.replace(":", "/")}`;
  const manifest = JSON.parse(fs.readFileSync(`${layout}/${blob(chosen[0].digest)}`, "utf8"));
  const keep = [chosen[0].digest, manifest.config.digest, ...manifest.layers.map((l) => l.digest)];
  fs.writeFileSync(`${layout}/index.json`, JSON.stringify(index));
  fs.writeFileSync(`${layout}/keep`, keep.map(blob).sort().join("\n") + "\n");
' "$layout" "$image_ref"
image="$out/vgate-$version.oci.tar"
mapfile -t blobs <"$layout/keep"
tar -C "$layout" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" \
  --mode='u+rwX,go+rX,go-w' --format=gnu -cf "$image" oci-layout index.json "${blobs[@]}"
say "image: $image_ref ($(du -h "$image" | cut -f1), $(uname -m) only)"

for file in "$@"; do
  cp "$file" "$out/"
  say "added $(basename "$file")"
done

(cd "$out" && find . -type f ! -name SHA256SUMS -printf '%P\n' | LC_ALL=C sort | xargs sha256sum >SHA256SUMS)
say "wrote $out ($(du -sh "$out" | cut -f1)); check it with: (cd $out && sha256sum -c SHA256SUMS)"
