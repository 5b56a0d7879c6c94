# Everything a person does with vgate goes through these targets.
SHELL := /bin/bash
NODE_BIN := node_modules/.bin
STAMP := node_modules/.install-stamp

.PHONY: install build plugin-bundle install-plugin install-plugin-files kube images images-if-possible test test-cluster cluster lint run bench soak fuzz apiserver e2e manifests image clean

install: $(STAMP)

# Reinstall only when the lock file changed (or nothing is installed yet).
$(STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $(STAMP)

build: install
	$(NODE_BIN)/tsc -p tsconfig.json
	$(MAKE) --no-print-directory plugin-bundle

# kubectl accesskey as one ESM file plus lazily loaded chunks (plugin/dist/, git-ignored), so a call
# starts about as fast as kubectl; plugin/bin/kubectl-accesskey loads it.
# It first records the git commit and build date for `version` (build/build-info.mjs): inlined
# into the bundle, and read from dist/build-info.json by the tsc output.
plugin-bundle: install
	rm -rf plugin/dist
	node build/build-info.mjs dist/build-info.json
	$(NODE_BIN)/esbuild plugin/src/main.ts --define:__VGATE_BUILD_INFO__="$$(cat dist/build-info.json)" --bundle --platform=node --format=esm --target=node20 \
	  --splitting --outdir=plugin/dist --entry-names=kubectl-accesskey --chunk-names=chunks/[name]-[hash] \
	  --out-extension:.js=.mjs --log-level=warning \
	  --banner:js="import { createRequire as __accesskeyRequire } from 'node:module'; const require = __accesskeyRequire(import.meta.url);"

# Installs kubectl-accesskey and kubectl_complete-accesskey into $(PREFIX)/bin (links into
# $(PREFIX)/lib/kubectl-accesskey, which holds the bundle); they need only node >= 20.
PREFIX ?= /usr/local
install-plugin: build
	$(MAKE) --no-print-directory install-plugin-files

# The copy alone, from an existing build (test/plugin/install.test.ts uses it).
install-plugin-files:
	@test -f plugin/dist/kubectl-accesskey.mjs || { echo "plugin/dist is missing: run make build"; exit 2; }
	install -d $(PREFIX)/bin $(PREFIX)/lib/kubectl-accesskey/bin
	rm -rf $(PREFIX)/lib/kubectl-accesskey/dist
	cp -R plugin/dist $(PREFIX)/lib/kubectl-accesskey/dist
	install -m 0755 plugin/bin/kubectl-accesskey plugin/bin/kubectl_complete-accesskey $(PREFIX)/lib/kubectl-accesskey/bin/
	ln -sf ../lib/kubectl-accesskey/bin/kubectl-accesskey $(PREFIX)/bin/kubectl-accesskey
	ln -sf ../lib/kubectl-accesskey/bin/kubectl_complete-accesskey $(PREFIX)/bin/kubectl_complete-accesskey

# The test rig's kube-apiserver and etcd, the node rig's kubelet and friends, and vCluster's syncer,
# built from the Go module proxy (versions in test/kube/versions.env) into
# ~/.cache/vgate/kube/<version>/; reused when up to date. Needs Go >= 1.26, or KUBEBUILDER_ASSETS
# pointing at envtest binaries. Without either, the cluster tests skip.
kube:
	bash test/kube/build.sh

# The node rig's images as OCI archives in ~/.cache/vgate/images/, made here with no registry:
# containerd's pause (pause.c from the kube module, which make kube downloads), a busybox test image,
# and vgate's own from the Dockerfile (buildah, on a node:20 base made from debootstrap and this
# machine's Node). Rebuilds only what changed. Needs root and apt-get install -y buildah
# debootstrap gcc libc6-dev busybox-static; without the archives the cluster tier skips.
images:
	bash test/image/build-images.sh

# A clean compile first, so a deleted test never runs from a stale dist/. Test files run two at a
# time (.mocharc.json: most wait on API servers and subprocesses), except the ones that measure
# latency or RSS under load: those run afterwards, alone.
LOAD_TESTS := dist/test/soak/soak.test.js dist/test/webhook/server/tls-reload-load.test.js \
  dist/test/webhook/server/slow-clients.test.js dist/test/webhook/patches/sandbox/hostile-server.test.js
test: install
	rm -rf dist
	$(NODE_BIN)/tsc -p tsconfig.json
	$(MAKE) --no-print-directory plugin-bundle
	$(NODE_BIN)/mocha $(addprefix --ignore ,$(LOAD_TESTS))
	$(NODE_BIN)/mocha --no-config --require dist/test/support/mocha-root.js --timeout 20000 $(LOAD_TESTS)

# The cluster tier: a real node (make kube's kubelet, kube-controller-manager, kube-scheduler and
# kube-proxy, Debian's containerd and runc: test/kube/node-setup.sh) inside a network namespace of
# its own, with the images of make images loaded and vgate installed as the README says. One test
# file at a time (each starts its own node). Needs root; without root, the binaries, the packages
# or the images, every test skips and says what to do.
test-cluster: install
	@$(MAKE) --no-print-directory images-if-possible
	rm -rf dist
	$(NODE_BIN)/tsc -p tsconfig.json
	$(MAKE) --no-print-directory plugin-bundle
	$(NODE_BIN)/mocha --no-config --require dist/test/support/mocha-root.js --timeout 600000 'dist/test/cluster/**/*.test.js'

# The same node with vgate installed, until Ctrl-C (or SIGTERM), which tears it all down; kubectl
# works from the host with .cluster/kubeconfig. Needs root, make kube and make images. VCLUSTER=1
# adds vCluster's own syncer (a virtual cluster vc, .cluster/virtual.kubeconfig) and vgate's
# Endpoints webhook.
cluster: build
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
lint: install
	$(NODE_BIN)/eslint .
	$(NODE_BIN)/prettier --check .
	$(NODE_BIN)/depcruise --config .dependency-cruiser.mjs webhook plugin/src test

# Starts `vgate serve --dev` on https://localhost:8443 with a self-signed certificate; it prints
# the URL and a curl line that sends the sample AdmissionReview.
run: build
	webhook/bin/vgate serve --dev $(ARGS)

# Admission webhook under load (vs an echo baseline), then OwnedAccessKey creates through a real
# kube-apiserver with vgate's webhooks vs without them, then the patch engine (vs goja and
# unsandboxed), the plugin (vs kubectl), and TokenReviews with 10 vs 100,000 keys and key logins vs
# client certificates through kube-apiserver, then vgate sync (5 patches vs none). All but the patch engine need the kube binaries
# (make kube) and skip without them.
bench: build
	node dist/test/bench/admission.js
	node dist/test/bench/e2e.js
	node dist/test/bench/patches.js
	node dist/test/bench/plugin.js
	node dist/test/bench/auth.js
	node dist/test/bench/sync.js

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

# kube-apiserver and etcd (make kube) with vgate installed from manifests/, until Ctrl-C; kubectl
# works against .apiserver/kubeconfig.
PORT ?= 6443
apiserver: build kube
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
manifests:
	@command -v kubectl >/dev/null || { echo "kubectl is not installed: make manifests renders manifests/ with kubectl kustomize; install kubectl (https://kubernetes.io/docs/tasks/tools/) and run it again" >&2; exit 2; }
	@rm -rf dist/manifests && mkdir -p dist/manifests
	@# kustomize wants relative paths: each kustomization sits in dist/manifests/.<name>/ meanwhile.
	@for name in $(MANIFEST_INSTALLS); do \
	  dir="dist/manifests/.$$name"; mkdir -p "$$dir"; \
	  case "$$name" in \
	    sync|sync+*) base=../../../manifests/sync; components="$${name#sync}"; at="$$base"; ;; \
	    *) base=../../../manifests; components="$$name"; at="$$base/overlays"; ;; \
	  esac; \
	  { echo "apiVersion: kustomize.config.k8s.io/v1beta1"; echo "kind: Kustomization"; \
	    echo "resources: [$$base]"; echo "components:"; \
	    for c in $${components//+/ }; do echo "  - $$at/$$c"; done; \
	  } >"$$dir/kustomization.yaml"; \
	  kubectl kustomize "$$dir" >"dist/manifests/$$name.yaml"; code=$$?; rm -rf "$$dir"; \
	  [ $$code -eq 0 ] || { rm -f "dist/manifests/$$name.yaml"; exit $$code; }; \
	  echo "dist/manifests/$$name.yaml"; \
	done

# The container image from the Dockerfile, tagged vgate:VERSION (package.json's version unless
# VERSION=... is given).
VERSION ?=
image:
	@command -v docker >/dev/null || { echo "docker is not installed: make image runs docker build -t vgate:VERSION . from the Dockerfile; install Docker (https://docs.docker.com/engine/install/) or build the Dockerfile with another OCI builder (podman build, buildah bud)" >&2; exit 2; }
	docker build $$(node build/build-info.mjs --build-args) -t vgate:$(or $(VERSION),$$(node -p 'require("./package.json").version')) .

clean:
	rm -rf dist plugin/dist
