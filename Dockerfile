# syntax=docker/dockerfile:1
# vgate's container image: `vgate serve` (the admission, token and authorization webhooks) and the
# other `vgate` commands. Build it from the repository root:
#   docker build -t vgate:dev .
# Three stages: `build` compiles the TypeScript with every dependency, `deps` installs the
# production dependencies alone, and the runtime stage holds only those, the compiled webhook and
# its launcher. The kubectl plugin is not in the image (it runs on the user's machine).
# test/image/production-deps.test.ts checks what it can without Docker: that the production
# dependencies alone run `vgate --help` and `vgate serve`, and that this file's stages hold together.

# The Node.js of the repository (package.json engines, CI). Pin a digest for reproducible builds:
#   docker build --build-arg NODE_IMAGE=node:20.20-bookworm-slim@sha256:... .
ARG NODE_IMAGE=node:20.20-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY webhook/src webhook/src
# tsconfig.json also lists plugin/src and test/, which are not in this stage: only the webhook is
# compiled, to dist/webhook/src (rootDir "." keeps the paths webhook/bin/vgate imports).
RUN npx tsc -p tsconfig.json
# What `vgate version` prints besides the version: the build context has no .git, so the commit,
# tree state and date come in as build arguments (make image and make images pass the output of
# `node build/build-info.mjs --build-args`); without them the image says "unknown".
ARG VGATE_GIT_COMMIT=unknown
ARG VGATE_GIT_TREE_STATE=unknown
ARG VGATE_BUILD_DATE=
COPY build/build-info.mjs build/
RUN node build/build-info.mjs dist/build-info.json

FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# No production dependency has an install script; --ignore-scripts keeps it that way.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

FROM ${NODE_IMAGE}
ENV NODE_ENV=production
WORKDIR /app
# Owned by root and read-only to the process: nothing is written outside /tmp (an emptyDir in
# manifests/deployment.yaml), so the root filesystem can be read-only.
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY --from=build /src/dist/webhook ./dist/webhook
COPY --from=build /src/dist/build-info.json ./dist/build-info.json
COPY webhook/bin/vgate ./webhook/bin/vgate
# A numeric non-root user (distroless's "nonroot"), so the kubelet can check runAsNonRoot.
USER 65532:65532
EXPOSE 8443
# The launcher sets vgate's heap flags and glibc's malloc tunable (its #! line, run through
# /usr/bin/env -S).
ENTRYPOINT ["/app/webhook/bin/vgate"]
CMD ["--help"]
