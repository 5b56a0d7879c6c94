#!/usr/bin/env bash
# Part of `make kube`: a newer vCluster's Go module (VCLUSTER_SCHEMA_VERSION), for its chart schema
# and config only; nothing is built from it. test/webhook/config/patch-kinds-oracle.test.ts holds
# the Gateway API kinds to it. Downloaded outside any module from the Go module proxy, and held to
# the hash versions.env pins. A script of its own, not part of build.sh: build.sh's text is in the
# key of every binary it builds, so editing it would rebuild them all.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=versions.env
source "$here/versions.env"

die() { printf 'make kube: error: %s\n' "$*" >&2; exit 1; }

GO=${GO:-$(command -v go || true)}
[ -n "$GO" ] || [ ! -x /usr/local/go/bin/go ] || GO=/usr/local/go/bin/go
[ -n "$GO" ] || die "Go is not installed; the Gateway API kinds' schema test will skip"
module="github.com/loft-sh/vcluster@$VCLUSTER_SCHEMA_VERSION"
field() { printf '%s\n' "$out" | sed -n "s/^\t\"$1\": \"\(.*\)\",\{0,1\}\$/\1/p"; }
out=$(cd / && GOTOOLCHAIN=local GOFLAGS= "$GO" mod download -json "$module" 2>&1) ||
  die "go mod download $module failed: $(field Error)"
sum=$(field Sum)
[ "$sum" = "$VCLUSTER_SCHEMA_SUM" ] ||
  die "$module: go mod download gave hash '$sum', versions.env pins $VCLUSTER_SCHEMA_SUM"
printf 'make kube: %s is in the Go module cache (its chart schema, for the tests)\n' "$module"
