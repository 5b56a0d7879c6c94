# Everything a person does with vgate goes through these targets.
SHELL := /bin/bash
NODE_BIN := node_modules/.bin
STAMP := node_modules/.install-stamp
PLUGIN_BUNDLE := plugin/dist/kubectl-accesskey.mjs
PLUGIN_BINARY := plugin/dist/bin/kubectl-accesskey

.PHONY: deps build plugin-bundle plugin-binary install kube helm images images-if-possible test test-cluster cluster lint run bench soak fuzz apiserver e2e manifests release release-chart image docs clean

# A target whose inputs did not change does nothing: the steps below are file targets with their
# real inputs as prerequisites, so `make build` twice costs the second time only make's own look.

# npm ci, only when package.json or package-lock.json changed in content (a checkout that only
# touched them, or a fresh worktree, keeps node_modules).
deps: $(STAMP)

$(STAMP): package.json package-lock.json
	@sum=$$(cat package.json package-lock.json | sha256sum | cut -c1-64); \
	if [ -d node_modules ] && [ "$$(cat $@ 2>/dev/null)" = "$$sum" ]; then touch $@; \
	else echo "npm ci --no-audit --no-fund"; npm ci --no-audit --no-fund && echo "$$sum" >$@; fi

# TypeScript to dist/ when a source, a source directory (a file added or removed) or tsconfig.json
# changed. tsc's incremental build info (dist/.tsbuildinfo) then recompiles only what the change
# touches (about 4 s of CPU instead of 16 s), and outputs whose source is gone are removed.
TS_ROOTS := webhook/src plugin/src test
# Found by make itself, not find: make image and make manifests must run with an empty PATH.
# Directories carry a trailing slash (the directory test/ is not the target test).
files_under = $(foreach d,$(wildcard $(1:=/*)),$(call files_under,$d,$2) $(filter $2,$d))
dirs_under = $(foreach d,$(wildcard $(1:=/*/)),$d $(call dirs_under,$(d:/=)))
TS_SOURCES := $(call files_under,$(TS_ROOTS),%.ts)
TS_DIRS := $(addsuffix /,$(TS_ROOTS)) $(call dirs_under,$(TS_ROOTS))
TSC_STAMP := dist/.tsc-stamp
$(TSC_STAMP): tsconfig.json $(STAMP) $(TS_SOURCES) $(TS_DIRS)
	@mkdir -p dist && touch $@.next
	$(NODE_BIN)/tsc -p tsconfig.json --incremental --tsBuildInfoFile dist/.tsbuildinfo
	@find $(addprefix dist/,$(TS_ROOTS)) -name '*.js' 2>/dev/null | while IFS= read -r out; do \
	  src=$${out#dist/}; [ -f "$${src%.js}.ts" ] || rm -f "$$out" "$$out.map"; done
	@mv -f $@.next $@

build: $(TSC_STAMP) $(PLUGIN_BUNDLE)

# kubectl accesskey as one ESM file plus lazily loaded chunks (plugin/dist/, git-ignored), so a call
# starts about as fast as kubectl; plugin/bin/kubectl-accesskey loads it. Rebuilt only when a file
# it bundled changed (esbuild's metafile lists them: plugin/dist/.deps.mk), the build information
# did, or this Makefile did.
plugin-bundle: $(PLUGIN_BUNDLE)

# The git commit, tree state and build date that `vgate version` and `kubectl accesskey version`
# print (build/build-info.mjs, into dist/build-info.json): inlined into the bundle, read by the tsc
# output. Looked at again when HEAD, the branch or git's index changed (a commit, a checkout, git
# add), not on every edit: a tree edited since then says the state it had then.
BUILD_INFO_STAMP := dist/.build-info-stamp
GIT_FILES := $(wildcard $(shell git rev-parse --git-path HEAD --git-path index 2>/dev/null) \
  $(shell ref=$$(git symbolic-ref -q HEAD 2>/dev/null) && git rev-parse --git-path "$$ref" 2>/dev/null))
$(BUILD_INFO_STAMP): build/build-info.mjs package.json $(GIT_FILES)
	@mkdir -p dist
	node build/build-info.mjs dist/build-info.json
	@touch $@

-include plugin/dist/.deps.mk
$(PLUGIN_BUNDLE): $(STAMP) Makefile $(BUILD_INFO_STAMP)
	rm -rf plugin/dist
	$(NODE_BIN)/esbuild plugin/src/main.ts --define:__VGATE_BUILD_INFO__="$$(cat dist/build-info.json)" --bundle --platform=node --format=esm --target=node20 \
	  --splitting --outdir=plugin/dist --entry-names=kubectl-accesskey --chunk-names=chunks/[name]-[hash] \
	  --out-extension:.js=.mjs --log-level=warning --metafile=plugin/dist/.meta.json \
	  --banner:js="import { createRequire as __accesskeyRequire } from 'node:module'; const require = __accesskeyRequire(import.meta.url);"
	@node scripts/bundle-deps.js plugin/dist/.meta.json $@ >plugin/dist/.deps.mk
	@rm -f plugin/dist/.meta.json

# kubectl accesskey as one executable that needs no Node.js (build/plugin-binary.mjs: a Node.js
# single-executable application with its code cache, about 110 MB, Linux only), with the
# completion helper beside it: the krew archive of this platform ships plugin/dist/bin/. It starts
# in about the time of `node -e 0`, where node and the bundle take some 30 ms more. Rebuilt with
# the bundle (which removes plugin/dist), from the same sources.
plugin-binary: $(PLUGIN_BINARY)
# What make test, make bench and make release build: the executable where it can be built.
PLUGIN_BINARY_HERE := $(if $(filter Linux,$(shell uname -s 2>/dev/null)),plugin-binary)

$(PLUGIN_BINARY): $(PLUGIN_BUNDLE) build/plugin-binary.mjs plugin/bin/kubectl_complete-accesskey
	node build/plugin-binary.mjs $@
	install -m 0755 plugin/bin/kubectl_complete-accesskey $(@D)/

# `make install PREFIX=dir` (default /usr/local) puts vgate, kubectl-accesskey and
# kubectl_complete-accesskey into dir/bin, as links into dir/lib, so they run from anywhere with
# only Node.js >= 20:
#   lib/vgate/             what the image holds in /app: package.json, dist/webhook, webhook/bin/vgate
#                          and the production dependencies of package-lock.json, copied from
#                          node_modules (no network)
#   lib/kubectl-accesskey/ bin/ and the esbuild bundle (dist/)
# Each part is copied again only when its inputs changed (a stamp in its lib directory).
PREFIX ?= /usr/local
VGATE_LIB := $(PREFIX)/lib/vgate
PLUGIN_LIB := $(PREFIX)/lib/kubectl-accesskey
WEBHOOK_SOURCES := $(filter webhook/%,$(TS_SOURCES)) $(filter webhook/%,$(TS_DIRS))
install: $(PREFIX)/bin/vgate $(PREFIX)/bin/kubectl-accesskey $(PREFIX)/bin/kubectl_complete-accesskey

$(VGATE_LIB)/.make-install-stamp: webhook/bin/vgate package.json package-lock.json $(WEBHOOK_SOURCES) $(BUILD_INFO_STAMP) | $(TSC_STAMP)
	rm -rf $(VGATE_LIB) && install -d $(VGATE_LIB)/webhook/bin $(VGATE_LIB)/dist $(VGATE_LIB)/node_modules
	cp -R dist/webhook dist/build-info.json $(VGATE_LIB)/dist/
	find $(VGATE_LIB)/dist -name '*.map' -delete
	install -m 0644 package.json $(VGATE_LIB)/
	install -m 0755 webhook/bin/vgate $(VGATE_LIB)/webhook/bin/
	node scripts/production-deps.js $(VGATE_LIB)
	@touch $@

$(PLUGIN_LIB)/.make-install-stamp: $(PLUGIN_BUNDLE) plugin/bin/kubectl-accesskey plugin/bin/kubectl_complete-accesskey
	rm -rf $(PLUGIN_LIB) && install -d $(PLUGIN_LIB)/bin
	cp -R plugin/dist $(PLUGIN_LIB)/dist
	rm -rf $(PLUGIN_LIB)/dist/.deps.mk $(PLUGIN_LIB)/dist/bin
	install -m 0755 plugin/bin/kubectl-accesskey plugin/bin/kubectl_complete-accesskey $(PLUGIN_LIB)/bin/
	@touch $@

$(PREFIX)/bin/vgate: | $(VGATE_LIB)/.make-install-stamp
	install -d $(PREFIX)/bin && ln -sfn ../lib/vgate/webhook/bin/vgate $@
$(PREFIX)/bin/kubectl-accesskey $(PREFIX)/bin/kubectl_complete-accesskey: | $(PLUGIN_LIB)/.make-install-stamp
	install -d $(PREFIX)/bin && ln -sfn ../lib/kubectl-accesskey/bin/$(@F) $@

# The test rig's kube-apiserver and etcd, the node rig's kubelet and friends, vCluster's syncer and
# cert-manager's controller and cainjector (VGATE_KUBE_CERT_MANAGER=0 leaves them out), kubectl of
# the same version (the parity tests' oracle: test/kube/build-kubectl.sh) and Helm, built from the
# Go module proxy (versions in test/kube/versions.env) into ~/.cache/vgate/kube/<version>/; reused
# when up to date. It also downloads a newer vCluster's module, whose chart schema the tests read
# (test/kube/fetch-vcluster-schema.sh). Needs Go >= 1.26, or KUBEBUILDER_ASSETS pointing at envtest binaries. Without
# either, the cluster tests skip. VGATE_KUBE_KUBECTL=0 leaves kubectl out (the parity tests then
# skip), VGATE_KUBE_HELM=0 Helm.
kube:
	bash test/kube/build.sh
	@if [ -z "$${KUBEBUILDER_ASSETS:-}" ]; then bash test/kube/fetch-vcluster-schema.sh; fi
	@if [ "$${VGATE_KUBE_KUBECTL:-1}" = 1 ]; then bash test/kube/build-kubectl.sh; fi
	@if [ "$${VGATE_KUBE_HELM:-1}" = 1 ]; then bash test/kube/build-helm.sh; fi

# Helm alone (the chart tests, `helm package`), without building Kubernetes: test/kube/build-helm.sh.
helm:
	bash test/kube/build-helm.sh

# The node rig's images as OCI archives in ~/.cache/vgate/images/, made here with no registry:
# containerd's pause (pause.c from the kube module, which make kube downloads), a busybox test image,
# and vgate's own from the Dockerfile (buildah, on a node:20 base made from debootstrap and this
# machine's Node). Rebuilds only what changed. Needs root and apt-get install -y buildah
# debootstrap gcc libc6-dev busybox-static; without the archives the cluster tier skips.
images:
	bash test/image/build-images.sh

# A clean compile first, so a deleted test never runs from a stale dist/ (the plugin bundle is
# exact: its inputs are its prerequisites). The clean keeps the build information: without it the
# bundle would be out of date, and the tests that run make would rebuild it under each other. Test files run two at a
# time (.mocharc.json: most wait on API servers and subprocesses), except the ones that measure
# latency or RSS under load: those run afterwards, alone.
CLEAN_DIST := [ ! -d dist ] || find dist -mindepth 1 -maxdepth 1 ! -name build-info.json ! -name .build-info-stamp -exec rm -rf {} +
LOAD_TESTS := dist/test/soak/soak.test.js dist/test/webhook/server/tls-reload-load.test.js \
  dist/test/webhook/server/slow-clients.test.js dist/test/webhook/patches/sandbox/hostile-server.test.js
test: deps plugin-bundle $(PLUGIN_BINARY_HERE)
	$(CLEAN_DIST)
	$(MAKE) --no-print-directory $(TSC_STAMP)
	$(NODE_BIN)/mocha $(addprefix --ignore ,$(LOAD_TESTS))
	$(NODE_BIN)/mocha --no-config --require dist/test/support/mocha-root.js --timeout 20000 $(LOAD_TESTS)

# The cluster tier: a real node (make kube's kubelet, kube-controller-manager, kube-scheduler and
# kube-proxy, Debian's containerd and runc: test/kube/node-setup.sh) inside a network namespace of
# its own, with the images of make images loaded and vgate installed as the README says. One test
# file at a time (each starts its own node). Needs root; without root, the binaries, the packages
# or the images, every test skips and says what to do.
test-cluster: deps plugin-bundle
	@$(MAKE) --no-print-directory images-if-possible
	$(CLEAN_DIST)
	$(MAKE) --no-print-directory $(TSC_STAMP)
	$(NODE_BIN)/mocha --no-config --require dist/test/support/mocha-root.js --timeout 600000 'dist/test/cluster/**/*.test.js'

# The same node with vgate installed, until Ctrl-C (or SIGTERM), which tears it all down; kubectl
# works from the host with .cluster/kubeconfig, and .cluster/key-login.sh logs in with a key. Needs
# root and make images; builds the binaries it runs (make kube's, but vCluster's syncer only with
# VCLUSTER=1). VCLUSTER=1 adds vCluster's own syncer (a virtual cluster vc,
# .cluster/virtual.kubeconfig) and vgate's Endpoints webhook.
cluster: build
	VGATE_KUBE_VCLUSTER=$(if $(filter 1,$(VCLUSTER)),1,0) bash test/kube/build.sh
	@$(MAKE) --no-print-directory images-if-possible
	node dist/test/support/play/node-cluster.js $(if $(filter 1,$(VCLUSTER)),--vcluster)

# The images as of this checkout before the node runs them (about 2 s when nothing changed); as
# non-root, or without buildah, the tier uses what make images built last, or skips.
images-if-possible:
	@if [ "$$(id -u)" = 0 ] && command -v buildah >/dev/null && command -v debootstrap >/dev/null; then \
	  $(MAKE) --no-print-directory images; \
	else echo "not building the node's images (make images needs root, buildah and debootstrap)"; fi

# ESLint, Prettier, and dependency-cruiser (.dependency-cruiser.mjs): no import cycles between
# modules or folders, type-only imports included, and patches run only through the one pipeline.
lint: deps
	$(NODE_BIN)/eslint .
	$(NODE_BIN)/prettier --check .
	$(NODE_BIN)/depcruise --config .dependency-cruiser.mjs webhook plugin/src test
	bash scripts/check-commits.sh

# Starts `vgate serve --dev` on https://localhost:8443 with a self-signed certificate; it prints
# the URL and a curl line that sends the sample AdmissionReview.
run: build
	webhook/bin/vgate serve --dev $(ARGS)

# Admission webhook under load (vs an echo baseline), then OwnedAccessKey creates through a real
# kube-apiserver with vgate's webhooks vs without them, then the patch engine (vs goja and
# unsandboxed), the plugin (vs kubectl), and TokenReviews with 10 vs 100,000 keys and key logins vs
# client certificates through kube-apiserver, then vgate sync (5 patches vs none), then one vgate
# serving 100 vClusters' configs vs 1 (memory, requests), then host Pod creates by vCluster's real
# syncer through vgate's webhook with its Pod patches vs without (on the node rig: root, make kube,
# make images), with the syncer's host client at vCluster's default limit and then lifted. All but the patch engine need the kube binaries (make kube) and skip without them.
bench: build $(PLUGIN_BINARY_HERE)
	@: >dist/bench-results.jsonl
	export BENCH_RESULTS=$(CURDIR)/dist/bench-results.jsonl; \
	node dist/test/bench/admission.js && \
	node dist/test/bench/e2e.js && \
	node dist/test/bench/patches.js && \
	node dist/test/bench/plugin.js && \
	node dist/test/bench/auth.js && \
	node dist/test/bench/sync.js && \
	node dist/test/bench/vclusters.js && \
	BENCH_PODS_SYNCER_QPS=40 BENCH_PODS=800 node dist/test/bench/pods-syncer.js && \
	BENCH_PODS_SYNCER_QPS=1000 node dist/test/bench/pods-syncer.js && \
	node dist/test/bench/summary.js $$BENCH_RESULTS

# 10 minutes of fixed-rate admission, TokenReview and SubjectAccessReview load on a rig of its own:
# 0 errors, RSS trend, p50/p99, a certificate rotation halfway, SIGTERM at the end. SOAK_SECONDS,
# SOAK_RATE (200/s), SOAK_RSS_SLOPE_LIMIT (1 MB/min). `make test` runs a 20-second version.
soak: build
	node dist/test/soak/run.js

# 100,000 generated requests (FUZZ_REQUESTS) to every review route of three real vgates (keys
# stored plain, keys stored hashed, a key cache that never syncs), with six client certificates
# and keys planted in the bodies; each answer judged. FUZZ_SEED replays a run; failing inputs go to
# dist/fuzz-failures.json. `make test` runs 3,000, fixed seed.
fuzz: build
	node dist/test/fuzz/run.js

# kube-apiserver and etcd with vgate installed from manifests/ (keys stored hashed, as installed),
# until Ctrl-C; kubectl works against .apiserver/kubeconfig, and .apiserver/key-login.sh logs in
# with a key. Builds only etcd and kube-apiserver of make kube.
PORT ?= 6443
apiserver: build
	VGATE_KUBE_NODE=0 bash test/kube/build.sh
	node dist/test/support/playground.js --port=$(PORT)

# The contract suite against a real cluster (kind, k3d, minikube) with vgate installed.
e2e: build
	@if [ -z "$$KUBECONFIG" ]; then echo "make e2e needs KUBECONFIG pointing at a cluster with vgate installed (see README)"; exit 2; fi
	VGATE_E2E=1 $(NODE_BIN)/mocha --no-config --require dist/test/support/mocha-root.js --timeout 60000 'dist/test/contract/**/*.test.js'

# Every supported install rendered by `kubectl kustomize` into dist/manifests/<name>.yaml, for
# `kubectl apply -f` without a kustomization of your own: the base with cert-manager or
# self-managed certificates, each with and without the Endpoints webhook; and vgate sync for the
# host cluster (manifests/sync), single- or multi-namespace, for the example vCluster of
# manifests/sync/vcluster.env.
MANIFEST_INSTALLS := cert-manager self-managed cert-manager+endpoints self-managed+endpoints sync sync+multi-namespace
# Two levels below the repository (the kustomizations refer to ../../../manifests); make release
# renders into a directory of its own, so it never races a make manifests.
MANIFESTS_DIR ?= dist/manifests
manifests:
	@command -v kubectl >/dev/null || { echo "kubectl is not installed: make manifests renders manifests/ with kubectl kustomize; install kubectl (https://kubernetes.io/docs/tasks/tools/) and run it again" >&2; exit 2; }
	@rm -rf $(MANIFESTS_DIR) && mkdir -p $(MANIFESTS_DIR)
	@# kustomize wants relative paths: each kustomization sits in $(MANIFESTS_DIR)/.<name>/ meanwhile.
	@for name in $(MANIFEST_INSTALLS); do \
	  dir="$(MANIFESTS_DIR)/.$$name"; mkdir -p "$$dir"; \
	  case "$$name" in \
	    sync|sync+*) base=../../../manifests/sync; components="$${name#sync}"; at="$$base"; ;; \
	    *) base=../../../manifests; components="$$name"; at="$$base/overlays"; ;; \
	  esac; \
	  { echo "apiVersion: kustomize.config.k8s.io/v1beta1"; echo "kind: Kustomization"; \
	    echo "resources: [$$base]"; echo "components:"; \
	    for c in $${components//+/ }; do echo "  - $$at/$$c"; done; \
	  } >"$$dir/kustomization.yaml"; \
	  kubectl kustomize "$$dir" >"$(MANIFESTS_DIR)/$$name.yaml"; code=$$?; rm -rf "$$dir"; \
	  [ $$code -eq 0 ] || { rm -f "$(MANIFESTS_DIR)/$$name.yaml"; exit $$code; }; \
	  echo "$(MANIFESTS_DIR)/$$name.yaml"; \
	done

# The release artifacts in dist/release/ with a SHA256SUMS file (scripts/release.sh says what each
# is): the manifests of make manifests, the krew archives and manifest (REPO=owner/name for its
# URLs, default vgate/vgate), the Helm chart package (make release-chart), and the image as an OCI archive from make images, which it brings up
# to date first (root, buildah). Nothing is pushed anywhere.
release: plugin-bundle $(PLUGIN_BINARY_HERE)
	@$(MAKE) --no-print-directory manifests MANIFESTS_DIR=dist/release-manifests >/dev/null
	@$(MAKE) --no-print-directory images
	@$(MAKE) --no-print-directory release-chart
	bash scripts/release.sh dist/release-manifests dist/chart/*.tgz

# The Helm chart package (charts/vgate) into dist/chart/, with the helm of make kube (its cache
# directory) or the one on PATH; scripts/release.sh takes it into dist/release/ when given it.
KUBE_CACHE = $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/vgate/kube/$(shell sed -n 's/^KUBE_VERSION=//p' test/kube/versions.env)
release-chart:
	@test -f charts/vgate/Chart.yaml || { echo "make release-chart: charts/vgate/Chart.yaml is missing: this checkout has no Helm chart to package" >&2; exit 2; }
	@helm=$$(if [ -x "$(KUBE_CACHE)/helm" ]; then echo "$(KUBE_CACHE)/helm"; else command -v helm; fi) || \
	  { echo "make release-chart: helm is not in $(KUBE_CACHE) nor on PATH: run make kube, which builds it, or install Helm (https://helm.sh/docs/intro/install/)" >&2; exit 2; }; \
	rm -rf dist/chart && mkdir -p dist/chart && "$$helm" package charts/vgate --destination dist/chart

# The container image from the Dockerfile, tagged vgate:VERSION (package.json's version unless
# VERSION=... is given).
VERSION ?=
image:
	@command -v docker >/dev/null || { echo "docker is not installed: make image runs docker build -t vgate:VERSION . from the Dockerfile; install Docker (https://docs.docker.com/engine/install/) or build the Dockerfile with another OCI builder (podman build, buildah bud)" >&2; exit 2; }
	docker build $$(node build/build-info.mjs --build-args) -t vgate:$(or $(VERSION),$$(node -p 'require("./package.json").version')) .

# docs/cli.md from the commands' --help (test/readme/cli-reference.test.ts checks it is current), and
# docs/architecture.svg and docs/layout.svg from their .dot sources when Graphviz's dot is installed.
docs: build
	node dist/test/support/cli-reference.js docs/cli.md
	@for pic in architecture layout; do \
	  if command -v dot >/dev/null; then dot -Tsvg docs/$$pic.dot -o docs/$$pic.svg && echo "wrote docs/$$pic.svg"; \
	  else echo "not rendering docs/$$pic.svg: Graphviz's dot is not installed (apt-get install graphviz)"; fi; \
	done

clean:
	rm -rf dist plugin/dist
