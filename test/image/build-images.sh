#!/usr/bin/env bash
# `make images`: the real-node rig's container images, made on this machine with no registry and no
# daemon, as OCI archives that `ctr -n k8s.io images import` loads, in
#   ${XDG_CACHE_HOME:-$HOME/.cache}/vgate/images/
#     pause.tar  containerd's sandbox image: pause.c of k8s.io/kubernetes@KUBE_VERSION, gcc -static
#     test.tar   busybox-static with one link per applet, for the rig's own checks (sh, httpd)
#     vgate.tar  vgate's image, built from the repository's Dockerfile by buildah, under the name
#                manifests/kustomization.yaml gives it, and <that name>-next: the same layers, a
#                config with one label more (another image ID), for the rolling upgrade
#     images.json  which archive holds which image (test/support/node/images.ts reads it)
# The Dockerfile's base image (ARG NODE_IMAGE) is made here under the same name: Debian from
# debootstrap (the mirror apt uses) plus this machine's Node.js and npm, laid out as the official
# image lays them out. The build never pulls; its one network use is the Dockerfile's `npm ci`.
# Each image is rebuilt only when its inputs changed (a key in stamps/); buildah's layer cache
# makes a rebuild after a source change recompile only the webhook. Everything buildah keeps is
# under the cache directory: rm -rf it to start over.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=../kube/versions.env
source "$repo/test/kube/versions.env"

say() { printf 'make images: %s\n' "$*"; }
die() { printf 'make images: error: %s\n' "$*" >&2; exit 1; }

out="${XDG_CACHE_HOME:-$HOME/.cache}/vgate/images"
apt_line="apt-get install -y buildah debootstrap gcc libc6-dev busybox-static"

# What the Dockerfile names as its base: node:<major.minor>-<debian suite>-slim.
node_image=$(sed -n 's/^ARG NODE_IMAGE=//p' "$repo/Dockerfile")
[[ $node_image =~ ^node:([0-9]+\.[0-9]+)-([a-z]+)-slim$ ]] ||
  die "the Dockerfile's NODE_IMAGE ($node_image) is not node:<major.minor>-<suite>-slim; this script makes only that kind of base"
node_minor=${BASH_REMATCH[1]}
suite=${BASH_REMATCH[2]}
base_ref=docker.io/library/$node_image

# Everything missing is said at once, with what to do about it.
missing=()
[ "$(id -u)" = 0 ] || missing+=("root: buildah, debootstrap and the mounts they make need it (run sudo make images)")
absent=()
for cmd in buildah debootstrap gcc flock; do command -v "$cmd" >/dev/null || absent+=("$cmd"); done
[ ${#absent[@]} -eq 0 ] || missing+=("${absent[*]} ($apt_line)")
busybox=$(command -v busybox || true)
if [ -z "$busybox" ] || ldd "$busybox" >/dev/null 2>&1; then
  missing+=("a static busybox (apt-get install -y busybox-static)")
fi
node=$(command -v node || true)
if [ -z "$node" ]; then
  missing+=("node $node_minor (the base image $node_image is made from this machine's Node.js)")
elif [[ $("$node" --version) != v$node_minor.* ]]; then
  missing+=("node $node_minor: this machine has $("$node" --version), but the Dockerfile's base is $node_image")
fi
npm_dir=
if command -v npm >/dev/null; then
  npm_dir=$(cd "$(dirname "$(readlink -f "$(command -v npm)")")/.." && pwd)
  [ -f "$npm_dir/package.json" ] || missing+=("npm's package directory (found $npm_dir)")
else
  missing+=("npm (it goes into the base image with node)")
fi
GO=${GO:-$(command -v go || true)}
[ -n "$GO" ] || [ ! -x /usr/local/go/bin/go ] || GO=/usr/local/go/bin/go
modcache=${GOMODCACHE:-}
[ -n "$modcache" ] || [ -z "$GO" ] || modcache=$("$GO" env GOMODCACHE)
[ -n "$modcache" ] || modcache=$HOME/go/pkg/mod
pause_dir="$modcache/k8s.io/kubernetes@$KUBE_VERSION/build/pause"
[ -f "$pause_dir/linux/pause.c" ] ||
  missing+=("k8s.io/kubernetes@$KUBE_VERSION in the Go module cache ($pause_dir/linux/pause.c): run make kube, which downloads it")
if [ ${#missing[@]} -gt 0 ]; then
  printf 'make images: cannot build the rig images; missing:\n' >&2
  printf '  - %s\n' "${missing[@]}" >&2
  exit 1
fi

mkdir -p "$out/stamps"
exec 9>"$out/.lock"
flock -n 9 || { say "another make images is running; waiting for it"; flock 9; }

store="$out/buildah"
work="$out/work"
mkdir -p "$store/config"
export TMPDIR="$work/tmp"
# buildah's own configuration: storage in the cache directory, no network backend state in /etc or
# /run (the build uses the host network: `npm ci` needs the registry, nothing else is set up), the
# Docker Hub meaning for short names like the Dockerfile's node:… (resolved locally, never pulled).
cat >"$store/config/containers.conf" <<EOF
[network]
network_backend = "cni"
network_config_dir = "$store/config/cni"
EOF
cat >"$store/config/registries.conf" <<EOF
unqualified-search-registries = ["docker.io"]
short-name-mode = "disabled"
EOF
export CONTAINERS_CONF="$store/config/containers.conf" CONTAINERS_REGISTRIES_CONF="$store/config/registries.conf"
B=(buildah --root "$store/storage" --runroot "$store/run" --storage-driver overlay)

# The one path outside the cache directory that buildah writes whatever it is told: the
# blob-info cache of containers/image, /var/lib/containers/cache/blob-info-cache-v1.boltdb for
# root. The directories that did not exist are listed in host-paths; the file and those
# directories (when empty) are removed at the end, or by the next run when this one was killed.
host_paths="$out/host-paths"
remove_host_paths() {
  local dir
  if [ -f "$host_paths" ]; then
    while IFS= read -r dir; do
      rm -f "$dir/blob-info-cache-v1.boltdb"
      rmdir "$dir" 2>/dev/null || true
    done <"$host_paths"
    rm -f "$host_paths"
  fi
}
unmount_under() {
  local mnt
  # /proc/self/mounts escapes spaces and the like as octal; printf %b turns them back.
  awk -v dir="$1/" 'index($2, dir) == 1 { print $2 }' /proc/self/mounts | sort -r |
    while IFS= read -r mnt; do umount -l "$(printf '%b' "$mnt")" || true; done
}
# RUN steps run under runc in this cgroup (below this process's own, in each hierarchy), which
# runc removes after each step, and which is left only when a run is killed.
cgroup=vgate-images
# Run at the start and at the end: what a run leaves when it is killed (a working container and its
# mount, debootstrap's /proc and /sys, the RUN cgroup, buildah's run root and runc's state: a fresh
# run root resets them, as a reboot would), the work directory, and the host paths above.
cleanup() {
  "${B[@]}" rm --all >/dev/null 2>&1 || true
  unmount_under "$out"
  find /sys/fs/cgroup -depth -type d -name "$cgroup" -exec rmdir {} + 2>/dev/null || true
  rm -rf "$work" "$store/run" "$store/runc" "$out"/*.tmp
  remove_host_paths
}
cleanup
mkdir -p "$TMPDIR"
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
for path in /var/lib/containers/cache /var/lib/containers; do
  [ -e "$path" ] || echo "$path" >>"$host_paths"
done

# $1 name; the rest: what the key covers (function names, then files). Prints the key.
key_of() {
  local name=$1
  shift
  {
    while [ $# -gt 0 ] && declare -F "$1" >/dev/null; do declare -f "$1"; shift; done
    [ $# -eq 0 ] || sha256sum "$@"
    printf '%s\n' "$name" "${extra_key:-}"
  } | sha256sum | cut -c1-64
}
# $1 name, $2 key. When not up to date, the old stamp and images.json go at once: a run killed
# halfway leaves nothing that vouches for an image it was remaking.
up_to_date() {
  [ "$(cat "$out/stamps/$1" 2>/dev/null)" != "$2" ] || return 0
  rm -f "$out/stamps/$1" "$out/images.json"
  return 1
}
stamp() { echo "$2" >"$out/stamps/$1"; }
image_id() { "${B[@]}" inspect --type image --format '{{.FromImageID}}' "$1" 2>/dev/null; }

# Writes the image $2 as an OCI archive $1: layers gzip-compressed (level 1: a third of the time
# of the default, 10% larger), the manifest named for containerd (io.containerd.image.name, which
# `ctr images import` reads) and for OCI tools (org.opencontainers.image.ref.name). With $3, a
# second image under that name: the same manifest and layers, a config with one label more
# (org.opencontainers.image.version=<its tag>), so another image ID that shares every blob.
export_archive() {
  local archive=$1 ref=$2 next=${3:-} layout="$work/layout-$(basename "$1" .tar)"
  rm -rf "$layout"
  "${B[@]}" push --quiet --format oci --compression-level 1 "$ref" "oci:$layout:$ref" >/dev/null
  "$node" -e '
    const fs = require("node:fs");
    const { createHash } = require("node:crypto");
    const [layout, next] = process.argv.slice(1);
    const blob = (digest) => `${layout}/blobs/${digest.replace(":", "/")}`;
    const read = (digest) => JSON.parse(fs.readFileSync(blob(digest), "utf8"));
    const write = (value) => {
      const data = Buffer.from(JSON.stringify(value));
      const digest = "sha256:" + createHash("sha256").update(data).digest("hex");
      fs.writeFileSync(blob(digest), data);
      return { digest, size: data.length };
    };
    const index = JSON.parse(fs.readFileSync(`${layout}/index.json`, "utf8"));
    const refName = "org.opencontainers.image.ref.name";
    if (next) {
      const first = index.manifests[0];
      const manifest = read(first.digest);
      const config = read(manifest.config.digest);
      const version = next.slice(next.lastIndexOf(":") + 1);
      config.config.Labels = { ...config.config.Labels, "org.opencontainers.image.version": version };
      manifest.config = { ...manifest.config, ...write(config) };
      index.manifests.push({ ...first, ...write(manifest), annotations: { [refName]: next } });
    }
    for (const m of index.manifests) m.annotations["io.containerd.image.name"] = m.annotations[refName];
    fs.writeFileSync(`${layout}/index.json`, JSON.stringify(index));' "$layout" "$next"
  tar -C "$layout" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 \
    -cf "$archive.tmp" oci-layout index.json blobs
  mv -f "$archive.tmp" "$archive"
  rm -rf "$layout"
}

# A working container from scratch whose root is the directory $1 (copied with owners and modes),
# committed as $2 with the config flags that follow.
commit_rootfs() {
  local rootfs=$1 ref=$2 c mnt
  shift 2
  c=$("${B[@]}" from --pull=never scratch)
  mnt=$("${B[@]}" mount "$c")
  tar -C "$rootfs" -cf - . | tar -C "$mnt" -xpf - --numeric-owner
  "${B[@]}" umount "$c" >/dev/null
  "${B[@]}" config "$@" "$c"
  "${B[@]}" commit --quiet --rm "$c" "$ref" >/dev/null
}

build_pause() {
  local tag
  # The version the upstream Makefile stamps in (TAG ?= …); `pause -v` prints it.
  tag=$(sed -n 's/^TAG ?= *//p' "$pause_dir/Makefile")
  pause_ref=localhost/vgate-rig/pause:$tag
  extra_key="$pause_ref $(gcc --version | head -1)"
  key=$(key_of pause build_pause commit_rootfs export_archive "$pause_dir/linux/pause.c")
  if up_to_date pause "$key" && [ -f "$out/pause.tar" ]; then say "pause is up to date ($pause_ref)"; return; fi
  mkdir -p "$work/pause"
  # The upstream Makefile's flags: -Os -Wall -Werror -static -DVERSION=v$(TAG)-$(REV).
  gcc -Os -Wall -Werror -static -DVERSION="v$tag-vgate-rig" -o "$work/pause/pause" "$pause_dir/linux/pause.c" ||
    die "gcc could not build pause statically (the static C library is in libc6-dev: apt-get install -y libc6-dev)"
  # As upstream's image: the binary alone, a non-root user, no shell.
  commit_rootfs "$work/pause" "$pause_ref" --user 65535:65535 --entrypoint '["/pause"]'
  export_archive "$out/pause.tar" "$pause_ref"
  stamp pause "$key"
  say "built $pause_ref ($(du -h "$out/pause.tar" | cut -f1))"
}

build_test() {
  local version rootfs="$work/test" applet
  version=$("$busybox" | sed -n '1s/^BusyBox v\([0-9.]*\).*/\1/p')
  test_ref=localhost/vgate-rig/busybox:$version
  extra_key=$test_ref
  key=$(key_of test build_test commit_rootfs export_archive "$busybox")
  if up_to_date test "$key" && [ -f "$out/test.tar" ]; then say "test image is up to date ($test_ref)"; return; fi
  mkdir -p "$rootfs/bin" "$rootfs/tmp"
  chmod 1777 "$rootfs/tmp"
  cp "$busybox" "$rootfs/bin/busybox"
  # One link per applet; the `busybox` applet itself would replace the binary with a link to itself.
  for applet in $("$busybox" --list-full); do
    [ "${applet##*/}" != busybox ] || continue
    mkdir -p "$rootfs/$(dirname "$applet")"
    ln -sfn /bin/busybox "$rootfs/$applet"
  done
  commit_rootfs "$rootfs" "$test_ref" --cmd '["sh"]' \
    --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
  export_archive "$out/test.tar" "$test_ref"
  stamp test "$key"
  say "built $test_ref ($(du -h "$out/test.tar" | cut -f1))"
}

# The apt mirror this machine uses for the suite ($DEBIAN_MIRROR overrides it): deb822 .sources
# files and one-line sources.list entries.
debian_mirror() {
  if [ -n "${DEBIAN_MIRROR:-}" ]; then echo "$DEBIAN_MIRROR"; return; fi
  local found
  found=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk -v suite="$suite" '
      /^$/ { if (deb && uri != "" && has) { print uri; exit } deb = 0; uri = ""; has = 0; next }
      /^Types:/ { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1 }
      /^URIs:/ { uri = $2 }
      /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == suite) has = 1 }
      END { if (deb && uri != "" && has) print uri }' | head -1)
  [ -n "$found" ] || found=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
    awk -v suite="$suite" '$1 == "deb" {
      i = 2  # past [options], when there are any
      if ($i ~ /^\[/) { while (i < NF && $i !~ /\]$/) i++; i++ }
      if ($(i + 1) == suite) { print $i; exit } }')
  echo "${found:-http://deb.debian.org/debian}"
}

# Debian <suite>, minbase (what debian:<suite>-slim starts from), slimmed as the slim images are:
# no documentation but copyright files, no man pages, locales or apt lists, no device nodes (the
# runtime makes /dev), and nothing of this machine (hostname, resolv.conf).
build_debian() {
  local mirror rootfs="$work/debian" start=$SECONDS
  mirror=$(debian_mirror)
  debian_ref=localhost/vgate-rig/debian:$suite
  extra_key="$debian_ref $mirror"
  key=$(key_of debian build_debian commit_rootfs)
  if up_to_date debian "$key" && image_id "$debian_ref" >/dev/null; then
    say "debian base is up to date ($debian_ref)"
    return
  fi
  say "debootstrap $suite from $mirror (about a minute)"
  if ! debootstrap --variant=minbase "$suite" "$rootfs" "$mirror" >"$work/debootstrap.log" 2>&1; then
    tail -20 "$work/debootstrap.log" >&2
    die "debootstrap failed (its log above)"
  fi
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* "$rootfs"/dev/* \
    "$rootfs"/etc/hostname "$rootfs"/etc/resolv.conf "$rootfs"/var/log/bootstrap.log
  find "$rootfs/usr/share/doc" -mindepth 1 ! -type d ! -name copyright -delete
  find "$rootfs/usr/share/doc" -mindepth 1 -type d -empty -delete
  rm -rf "$rootfs"/usr/share/{man,locale,info,lintian,groff}/*
  commit_rootfs "$rootfs" "$debian_ref" --cmd '["bash"]' \
    --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
  rm -rf "$rootfs"
  stamp debian "$key"
  say "made $debian_ref in $((SECONDS - start)) s"
}

# The official node image's layout on top: node in /usr/local/bin, npm in
# /usr/local/lib/node_modules/npm with npm and npx linked next to node, a `node` user (1000), CMD
# node. Not copied: its docker-entrypoint.sh (the Dockerfile sets its own ENTRYPOINT), yarn.
build_node_base() {
  local c mnt version
  version=$("$node" --version)
  extra_key="$base_ref $(image_id "$debian_ref") $(cat "$npm_dir/package.json" | sha256sum)"
  key=$(key_of node-base build_node_base "$node")
  if up_to_date node-base "$key" && image_id "$base_ref" >/dev/null; then
    say "base image is up to date ($base_ref)"
    return
  fi
  c=$("${B[@]}" from --pull=never "$debian_ref")
  mnt=$("${B[@]}" mount "$c")
  install -D -m 0755 "$node" "$mnt/usr/local/bin/node"
  mkdir -p "$mnt/usr/local/lib/node_modules"
  cp -a "$npm_dir" "$mnt/usr/local/lib/node_modules/npm"
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$mnt/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$mnt/usr/local/bin/npx"
  chroot "$mnt" groupadd --gid 1000 node
  chroot "$mnt" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
  "${B[@]}" umount "$c" >/dev/null
  "${B[@]}" config --env "NODE_VERSION=${version#v}" --cmd '["node"]' "$c"
  "${B[@]}" commit --quiet --rm "$c" "$base_ref" >/dev/null
  stamp node-base "$key"
  say "made $base_ref (node $version, npm $(cat "$npm_dir/package.json" | "$node" -p 'JSON.parse(require("fs").readFileSync(0)).version'))"
}

# npm's settings for the Dockerfile's `npm ci`, from this machine's: the registry and the CA
# bundle it trusts (a TLS-inspecting proxy's CA, say). Mounted over /usr/local/etc (npm's global
# config directory in the image) during RUN steps only: never in a layer. No credentials are
# passed; a registry that needs them is not supported.
npm_build_config() {
  local dir="$work/npm-etc" cafile
  mkdir -p "$dir"
  {
    printf 'registry=%s\n' "$(npm config get registry)"
    printf 'update-notifier=false\n'
    cafile=$(npm config get cafile)
    if [ -n "$cafile" ] && [ "$cafile" != null ] && [ "$cafile" != undefined ] && [ -f "$cafile" ]; then
      cp "$cafile" "$dir/ca.crt"
      printf 'cafile=/usr/local/etc/ca.crt\n'
    fi
  } >"$dir/npmrc"
  echo "$dir"
}

# The Dockerfile as it is, with buildah: pulls forbidden, every step's layer cached, the build
# context filtered by .dockerignore as Docker filters it. The -next image is made by
# export_archive.
build_vgate() {
  local version sources start=$SECONDS npm_etc build_args
  version=$("$node" -p 'require(process.argv[1]).version' "$repo/package.json")
  vgate_ref=ghcr.io/vgate/vgate:$version
  next_ref=$vgate_ref-next
  # The files the Dockerfile copies from the build context (COPY lines without --from).
  mapfile -t sources < <(cd "$repo" && awk 'toupper($1) == "COPY" && $0 !~ /--from=/ {
      for (i = 2; i < NF; i++) if ($i !~ /^--/) print $i }' Dockerfile |
    xargs -I{} find {} -type f | sort)
  # The commit and tree state `vgate version` reports (the build context has no .git): a new
  # commit rebuilds from the Dockerfile's ARG lines on, the rest from the layer cache.
  build_args=$("$node" "$repo/build/build-info.mjs" --build-args) || die "build/build-info.mjs failed"
  extra_key="$vgate_ref $(image_id "$base_ref") $(cd "$repo" && stat -c '%a %n' "${sources[@]}" | sha256sum) ${build_args% --build-arg VGATE_BUILD_DATE=*}"
  key=$(cd "$repo" && key_of vgate build_vgate npm_build_config export_archive Dockerfile .dockerignore "${sources[@]}")
  if up_to_date vgate "$key" && [ -f "$out/vgate.tar" ]; then say "vgate image is up to date ($vgate_ref)"; return; fi
  npm_etc=$(npm_build_config)
  local bud=("${B[@]}" bud --layers --pull=never --network host --isolation oci
    --runtime-flag "root=$store/runc" --cgroup-parent "$cgroup" --volume "$npm_etc:/usr/local/etc:ro" --file Dockerfile)
  # shellcheck disable=SC2206 # --build-arg NAME=VALUE words; the values have no spaces.
  bud+=($build_args)
  say "building $vgate_ref from the Dockerfile (a minute the first time, npm ci included; then the layer cache)"
  # Each step and npm's summary as it goes; the whole output in the log, shown when it fails.
  if ! (cd "$repo" && "${bud[@]}" --tag "$vgate_ref" . 2>&1) | tee "$work/vgate-build.log" |
    { grep --line-buffered -E '^(\[[0-9]+/[0-9]+\] )?STEP|^--> Using cache|^added ' || true; } |
    sed -u -e 's/^--> Using cache.*/    (cached)/' -e 's/^/  /'; then
    tail -40 "$work/vgate-build.log" >&2
    die "buildah could not build $vgate_ref (the end of its output above)"
  fi
  say "built $vgate_ref in $((SECONDS - start)) s; writing vgate.tar with it and $next_ref"
  export_archive "$out/vgate.tar" "$vgate_ref" "$next_ref"
  stamp vgate "$key"
  say "wrote vgate.tar ($(du -h "$out/vgate.tar" | cut -f1)) in $((SECONDS - start)) s"
}

start=$SECONDS
build_pause
build_test
build_debian
build_node_base
build_vgate
"$node" -e '
  const [dir, pause, test, vgate, next] = process.argv.slice(1);
  const image = (archive, ref) => ({ archive, ref });
  const index = {
    pause: image("pause.tar", pause),
    test: image("test.tar", test),
    vgate: image("vgate.tar", vgate),
    vgateNext: image("vgate.tar", next),
  };
  require("node:fs").writeFileSync(dir + "/images.json.tmp", JSON.stringify(index, null, 2) + "\n");
' "$out" "$pause_ref" "$test_ref" "$vgate_ref" "$next_ref"
mv -f "$out/images.json.tmp" "$out/images.json"
say "ready in $((SECONDS - start)) s: $out (buildah's store: $(du -sh "$store/storage" | cut -f1))"
