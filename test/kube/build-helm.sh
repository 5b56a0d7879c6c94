#!/usr/bin/env bash
# Builds Helm (helm.sh/helm/v4/cmd/helm at HELM_VERSION from versions.env), a test tool for the
# chart tests and `helm package`, from the Go module proxy into the same cache directory as the
# kube binaries:
#   ${XDG_CACHE_HOME:-$HOME/.cache}/vgate/kube/<KUBE_VERSION>/helm
# `make kube` runs it after build.sh (VGATE_KUBE_HELM=0 skips it); `make helm` runs it alone, so
# a release needs no Kubernetes build. Helm's go.mod has no replace directive, so `go install
# module@version` builds it as its own module with its own go.sum, checked against sum.golang.org:
# no wrapper module is needed. It is rebuilt only when HELM_VERSION, the Go version or this
# script changed. Being a separate script, adding it did not invalidate build.sh's stamps.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=versions.env
source "$here/versions.env"

say() { printf 'make helm: %s\n' "$*"; }
die() { printf 'make helm: error: %s\n' "$*" >&2; exit 1; }

out="${XDG_CACHE_HOME:-$HOME/.cache}/vgate/kube/$KUBE_VERSION"
GO=${GO:-$(command -v go || true)}
[ -n "$GO" ] || [ ! -x /usr/local/go/bin/go ] || GO=/usr/local/go/bin/go
[ -n "$GO" ] || die "Go is not installed. Install Go >= 1.26 (https://go.dev/dl/) to build Helm $HELM_VERSION"
go_minor=$("$GO" env GOVERSION | sed -n 's/^go1\.\([0-9]*\).*/\1/p')
[ "${go_minor:-0}" -ge 26 ] || die "$("$GO" env GOVERSION) is too old; Helm $HELM_VERSION needs Go >= 1.26"

export GOTOOLCHAIN=local GOFLAGS="-buildvcs=false" CGO_ENABLED=0
mkdir -p "$out"
stamp="$out/.helm.built-from"
key=$( (echo "$HELM_VERSION" && "$GO" env GOVERSION && cat "$here/build-helm.sh") | sha256sum | cut -c1-64)
if [ -x "$out/helm" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$key" ]; then
  say "helm $HELM_VERSION is up to date in $out"
  exit 0
fi
say "building helm $HELM_VERSION into $out; a cold build takes a few minutes"
start=$SECONDS
rm -f "$stamp"
tmp=$(mktemp -d "$out/.helm-build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# What Helm's own Makefile stamps (`helm version`); the module proxy has no commit hash.
v=helm.sh/helm/v4/internal/version
GOBIN=$tmp "$GO" install -trimpath \
  -ldflags "-s -w -X $v.version=$HELM_VERSION -X $v.gitTreeState=clean" \
  "helm.sh/helm/v4/cmd/helm@$HELM_VERSION" || die "building helm failed (the Go output above says why)"
mv -f "$tmp/helm" "$out/helm"
echo "$key" >"$stamp"
say "built helm $HELM_VERSION in $((SECONDS - start)) s ($(du -h "$out/helm" | cut -f1)): $out/helm"
