# Everything a person does with vgate goes through these targets.
SHELL := /bin/bash
NODE_BIN := node_modules/.bin
STAMP := node_modules/.install-stamp

.PHONY: install build kube test lint run bench apiserver e2e clean

install: $(STAMP)

# Reinstall only when the lock file changed (or nothing is installed yet).
$(STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $(STAMP)

build: install
	$(NODE_BIN)/tsc -p tsconfig.json

# The test rig's kube-apiserver and etcd, built from the Go module proxy (versions in
# test/kube/versions.env) into ~/.cache/vgate/kube/<version>/; reused when up to date. Needs Go >= 1.26,
# or KUBEBUILDER_ASSETS pointing at envtest binaries. Without either, the cluster tests skip.
kube:
	bash test/kube/build.sh

# A clean compile first, so a deleted test never runs from a stale dist/.
test: install
	rm -rf dist
	$(NODE_BIN)/tsc -p tsconfig.json
	$(NODE_BIN)/mocha

# ESLint, Prettier, and dependency-cruiser (.dependency-cruiser.mjs): no import cycles between
# modules or folders, type-only imports included, and patches run only through the one pipeline.
lint: install
	$(NODE_BIN)/eslint .
	$(NODE_BIN)/prettier --check .
	$(NODE_BIN)/depcruise --config .dependency-cruiser.mjs webhook test

# Starts `vgate serve --dev` on https://localhost:8443 with a self-signed certificate; it prints
# the URL and a curl line that sends the sample AdmissionReview.
run: build
	webhook/bin/vgate serve --dev $(ARGS)

# Admission webhook under load (vs an echo baseline), then OwnedAccessKey creates through a real
# kube-apiserver with vgate's webhooks vs without them, then the patch engine (vs goja and
# unsandboxed). The first two need the kube binaries (make kube) and skip without them.
bench: build
	node dist/test/bench/admission.js
	node dist/test/bench/e2e.js
	node dist/test/bench/patches.js

# kube-apiserver and etcd (make kube) with vgate installed from manifests/, until Ctrl-C; kubectl
# works against .apiserver/kubeconfig.
PORT ?= 6443
apiserver: build kube
	node dist/test/support/playground.js --port=$(PORT)

# The contract suite against a real cluster (kind, k3d, minikube) with vgate installed.
e2e: build
	@if [ -z "$$KUBECONFIG" ]; then echo "make e2e needs KUBECONFIG pointing at a cluster with vgate installed (see README)"; exit 2; fi
	VGATE_E2E=1 $(NODE_BIN)/mocha --no-config --require dist/test/support/mocha-root.js --timeout 60000 'dist/test/contract/**/*.test.js'

clean:
	rm -rf dist
