#!/usr/bin/env bash
# Builds kubectl (k8s.io/kubernetes/cmd/kubectl at KUBE_VERSION from versions.env), a test tool: the
# parity tests compare `kubectl accesskey` with the kubectl of the cluster's own version, and the
# tests that run kubectl (plugin discovery, the README's blocks) find it first on their PATH
# (test/support/kubectl.ts). It goes into the same directory as the kube binaries:
#   ${XDG_CACHE_HOME:-$HOME/.cache}/vgate/kube/<KUBE_VERSION>/kubectl
# `make kube` runs it after build.sh (VGATE_KUBE_KUBECTL=0 skips it). It is a script of its own,
# like build-helm.sh, so adding it left build.sh's stamps, and so every other binary, alone. The
# wrapper module kubectl/ (test/kube/update-modules.sh) builds it as kube's release does; it is
# rebuilt only when that module (go.mod, go.sum) or this script changed.
# With KUBEBUILDER_ASSETS naming a directory that holds kubectl (setup-envtest's assets do),
# nothing is built and Go is not needed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=versions.env
source "$here/versions.env"

say() { printf 'make kube: %s\n' "$*"; }
die() { printf 'make kube: error: %s\n' "$*" >&2; exit 1; }

if [ -n "${KUBEBUILDER_ASSETS:-}" ] && [ -x "$KUBEBUILDER_ASSETS/kubectl" ]; then
  say "using kubectl in KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS; nothing to build"
  exit 0
fi

out="${XDG_CACHE_HOME:-$HOME/.cache}/vgate/kube/$KUBE_VERSION"
GO=${GO:-$(command -v go || true)}
[ -n "$GO" ] || [ ! -x /usr/local/go/bin/go ] || GO=/usr/local/go/bin/go
[ -n "$GO" ] || die "Go is not installed. Install Go >= 1.26 (https://go.dev/dl/) to build kubectl $KUBE_VERSION, or set VGATE_KUBE_KUBECTL=0 (the kubectl parity tests then skip)"
go_minor=$("$GO" env GOVERSION | sed -n 's/^go1\.\([0-9]*\).*/\1/p')
[ "${go_minor:-0}" -ge 26 ] || die "$("$GO" env GOVERSION) is too old; kubectl $KUBE_VERSION needs Go >= 1.26"

export GOTOOLCHAIN=local GOFLAGS="-mod=readonly -buildvcs=false" CGO_ENABLED=0
mkdir -p "$out"
stamp="$out/.kubectl.built-from"
key=$(cat "$here/kubectl/go.mod" "$here/kubectl/go.sum" "$here/build-kubectl.sh" | sha256sum | cut -c1-64)
if [ -x "$out/kubectl" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$key" ]; then
  say "kubectl is up to date in $out"
  exit 0
fi

# What kube's release build stamps (hack/lib/version.sh), as build.sh does for the servers, so
# `kubectl version` says KUBE_VERSION: the module proxy has no commit hash, and the build date is
# the release tag's time, so the binary is the same whenever it is built.
build_date=$(cd "$here/kubectl" && "$GO" list -m -f '{{with .Time}}{{.UTC.Format "2006-01-02T15:04:05Z"}}{{end}}' k8s.io/kubernetes)
minor=${KUBE_VERSION#v1.}
minor=${minor%%.*}
ldflags="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $p.gitVersion=$KUBE_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor"
  ldflags+=" -X $p.gitTreeState=clean -X $p.gitCommit= -X $p.buildDate=$build_date"
done

say "building kubectl (k8s.io/kubernetes/cmd/kubectl) into $out; about 1 minute after build.sh's binaries, several minutes cold"
start=$SECONDS
rm -f "$stamp"
count=0
# -v names each package as it is compiled; print a count now and then instead of hundreds of lines.
if ! (cd "$here/kubectl" && "$GO" build -v -trimpath -ldflags "$ldflags" -o "$out/kubectl.tmp" k8s.io/kubernetes/cmd/kubectl 2>&1) |
  while IFS= read -r line; do
    case $line in
      *" "* | "#"* | *:*) printf '%s\n' "$line" ;; # errors and download lines are shown as they are
      *) count=$((count + 1)); [ $((count % 250)) -ne 0 ] || say "kubectl: $count packages compiled ($((SECONDS - start)) s)" ;;
    esac
  done; then
  rm -f "$out/kubectl.tmp"
  die "building kubectl failed (the Go output above says why)"
fi
mv -f "$out/kubectl.tmp" "$out/kubectl"
echo "$key" >"$stamp"
say "built kubectl $KUBE_VERSION in $((SECONDS - start)) s ($(du -h "$out/kubectl" | cut -f1)): $out/kubectl"
