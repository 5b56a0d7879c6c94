#!/usr/bin/env bash
# Installs the Debian packages the node rig (make test-cluster, make cluster) needs, as root:
#   containerd                    the container runtime the kubelet talks to (CRI), with ctr
#   runc                          the OCI runtime containerd starts containers with
#   containernetworking-plugins   the CNI plugins (bridge, host-local, portmap, loopback)
#   iptables, conntrack           kube-proxy's rules and connection tracking
#   buildah                       builds vgate's image from the Dockerfile with no daemon or registry
#   debootstrap                   makes the Dockerfile's Debian base image locally
#   busybox-static, gcc, libc6-dev  the rig's small test image and its pause image
#   curl                          readiness checks inside the rig's network namespace
# Nothing is started or enabled: the rig starts its own containerd with a configuration under its
# own directory (apt's containerd.service is stopped and disabled if the package started it).
set -euo pipefail
[ "$(id -u)" = 0 ] || { echo "node-setup: run as root (apt-get install)" >&2; exit 2; }
pkgs=(containerd runc containernetworking-plugins iptables conntrack buildah debootstrap
  busybox-static gcc libc6-dev curl)
missing=()
for p in "${pkgs[@]}"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p"); done
if [ ${#missing[@]} -eq 0 ]; then
  echo "node-setup: every package is installed (${pkgs[*]})"
else
  echo "node-setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# A containerd.service started by the package would run outside the rig's network namespace.
if command -v systemctl >/dev/null && systemctl is-active --quiet containerd 2>/dev/null; then
  systemctl disable --now containerd
fi
echo "node-setup: done"
