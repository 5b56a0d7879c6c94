#!/usr/bin/env bash
# `make kube`: builds the test rig's kube-apiserver and etcd, the node rig's kubelet,
# kube-controller-manager, kube-scheduler and kube-proxy, vCluster's syncer, and cert-manager's
# controller and cainjector, from the Go module proxy, through the committed wrapper modules in
# apiserver/, node/, etcd/, vcluster/ and cert-manager/, into an envtest-style assets directory:
#   ${XDG_CACHE_HOME:-$HOME/.cache}/vgate/kube/<KUBE_VERSION>/{kube-apiserver,etcd,kubelet,...}
# A binary is rebuilt only when its wrapper module (go.mod, go.sum) or this script changed.
# KUBEBUILDER_ASSETS, envtest's convention, names a directory that already holds kube-apiserver and
# etcd; then nothing is built and Go is not needed (and the node tier skips, saying so).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=versions.env
source "$here/versions.env"

say() { printf 'make kube: %s\n' "$*"; }
die() { printf 'make kube: error: %s\n' "$*" >&2; exit 1; }

if [ -n "${KUBEBUILDER_ASSETS:-}" ]; then
  for bin in kube-apiserver etcd; do
    [ -x "$KUBEBUILDER_ASSETS/$bin" ] || die "KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS has no executable $bin"
  done
  say "using the binaries in KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS; nothing to build"
  exit 0
fi

out="${XDG_CACHE_HOME:-$HOME/.cache}/vgate/kube/$KUBE_VERSION"
GO=${GO:-$(command -v go || true)}
[ -n "$GO" ] || [ ! -x /usr/local/go/bin/go ] || GO=/usr/local/go/bin/go
[ -n "$GO" ] || die "Go is not installed. Install Go >= 1.26 (https://go.dev/dl/), or set KUBEBUILDER_ASSETS to a directory holding kube-apiserver and etcd $KUBE_VERSION-compatible binaries (for example from setup-envtest)"
go_minor=$("$GO" env GOVERSION | sed -n 's/^go1\.\([0-9]*\).*/\1/p')
[ "${go_minor:-0}" -ge 26 ] || die "$("$GO" env GOVERSION) is too old; kube-apiserver $KUBE_VERSION needs Go >= 1.26 (or set KUBEBUILDER_ASSETS)"

# The module proxy's copies are reproducible: go.sum is committed and verified, and the local
# toolchain is used whatever a dependency's toolchain line asks for.
export GOTOOLCHAIN=local GOFLAGS="-mod=readonly -buildvcs=false" CGO_ENABLED=0
mkdir -p "$out"

# $1 binary name, $2 wrapper directory, $3 main package, $4 ldflags.
build() {
  local bin=$1 dir=$2 pkg=$3 ldflags=$4 stamp key start count=0 line
  stamp="$out/.$bin.built-from"
  key=$(cat "$here/$dir/go.mod" "$here/$dir/go.sum" "$here/build.sh" | sha256sum | cut -c1-64)
  if [ -x "$out/$bin" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$key" ]; then
    say "$bin is up to date in $out"
    return
  fi
  say "building $bin ($pkg) into $out; a cold build takes minutes, progress follows"
  start=$SECONDS
  rm -f "$stamp"
  # -v names each package as it is compiled; print a count now and then instead of thousands of lines.
  if ! (cd "$here/$dir" && "$GO" build -v -trimpath -ldflags "$ldflags" -o "$out/$bin.tmp" "$pkg" 2>&1) |
    while IFS= read -r line; do
      case $line in
        *" "* | "#"* | *:*) printf '%s\n' "$line" ;; # errors and download lines are shown as they are
        *) count=$((count + 1)); [ $((count % 250)) -ne 0 ] || say "$bin: $count packages compiled ($((SECONDS - start)) s)" ;;
      esac
    done; then
    rm -f "$out/$bin.tmp"
    die "building $bin failed (the Go output above says why)"
  fi
  mv -f "$out/$bin.tmp" "$out/$bin"
  echo "$key" >"$stamp"
  say "built $bin in $((SECONDS - start)) s ($(du -h "$out/$bin" | cut -f1))"
}

# What kube's own release build stamps into /version (hack/lib/version.sh). The module proxy has
# no commit hash, so gitCommit stays empty rather than the "$Format:%H$" placeholder; the build
# date is the release tag's time, so the binary is the same whenever it is built.
build_date=$(cd "$here/apiserver" && "$GO" list -m -f '{{with .Time}}{{.UTC.Format "2006-01-02T15:04:05Z"}}{{end}}' k8s.io/kubernetes)
minor=${KUBE_VERSION#v1.}
minor=${minor%%.*}
kube_ldflags="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  kube_ldflags+=" -X $p.gitVersion=$KUBE_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor"
  kube_ldflags+=" -X $p.gitTreeState=clean -X $p.gitCommit= -X $p.buildDate=$build_date"
done
build etcd etcd go.etcd.io/etcd/server/v3 "-s -w"
build kube-apiserver apiserver k8s.io/kubernetes/cmd/kube-apiserver "$kube_ldflags"
# One binary at a time: kubelet and kube-controller-manager each take minutes cold, and most of
# what they compile is shared with kube-apiserver through the build cache.
if [ "${VGATE_KUBE_NODE:-1}" = 1 ]; then
  for bin in kube-scheduler kube-proxy kube-controller-manager kubelet; do
    build "$bin" node "k8s.io/kubernetes/cmd/$bin" "$kube_ldflags"
  done
fi
# vCluster's syncer, for the tests that run vgate next to it (make test-cluster). SyncerVersion is
# what vCluster's own release build stamps; the rig turns its telemetry off in the config.
if [ "${VGATE_KUBE_VCLUSTER:-${VGATE_KUBE_NODE:-1}}" = 1 ]; then
  build vcluster vcluster github.com/loft-sh/vcluster/cmd/vcluster \
    "-s -w -X github.com/loft-sh/vcluster/pkg/telemetry.SyncerVersion=$VCLUSTER_VERSION"
fi
# cert-manager's controller and cainjector, for the test of manifests/overlays/cert-manager (make
# test-cluster); its webhook is not built: it only validates and defaults cert-manager's own
# objects (docs/decisions.md OPS-10). AppVersion is what cert-manager's release build stamps.
if [ "${VGATE_KUBE_CERT_MANAGER:-${VGATE_KUBE_NODE:-1}}" = 1 ]; then
  for bin in controller cainjector; do
    build "cert-manager-$bin" cert-manager "github.com/cert-manager/cert-manager/cmd/$bin" \
      "-s -w -X github.com/cert-manager/cert-manager/pkg/util.AppVersion=$CERT_MANAGER_VERSION"
  done
fi
say "ready: $out (Kubernetes $KUBE_VERSION, etcd $ETCD_VERSION, vCluster $VCLUSTER_VERSION, cert-manager $CERT_MANAGER_VERSION)"
