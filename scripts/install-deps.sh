#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install everything ibpulse needs to build, test and run its lab on
# Debian 12 / Ubuntu 22.04+. Safe to run again: apt skips what is there.
#
# RHEL / Fedora equivalents (dnf install):
#   meson ninja-build gcc clang pkgconf-pkg-config rdma-core-devel
#   libmicrohttpd-devel sqlite-devel libcurl-devel jansson-devel inih-devel
#   libcmocka-devel zlib-devel gnutls-devel libxcrypt-devel prometheus2 golang-github-prometheus-node-exporter
#   qemu-system-x86 busybox kmod rdma-core libibverbs-utils perftest infiniband-diags
#   valgrind
set -euo pipefail

build_pkgs=(
	meson ninja-build gcc clang llvm pkg-config
	libibverbs-dev libibumad-dev libibmad-dev libibnetdisc-dev libmicrohttpd-dev libsqlite3-dev sqlite3
	libcurl4-openssl-dev libjansson-dev libinih-dev libcmocka-dev zlib1g-dev
	libclang-rt-14-dev clang-format curl ca-certificates python3 libssl-dev
	libcrypt-dev
)
# The Debian packages (debian/, tests/package/), the OCI image
# (scripts/image.sh: mmdebstrap, buildah, podman with runc) and the
# Kubernetes manifests' offline checks (deploy/kubernetes/: kubectl
# kustomize, node for the pinned schema validator, promtool, PyYAML).
ship_pkgs=(
	debhelper dpkg-dev lintian go-md2man
	mmdebstrap buildah podman runc crun fuse-overlayfs uidmap
	python3-yaml
)
# gnuplot-nox: bench/regression/plot.py draws docs/regression.png.
# slurm-wlm, munge: tests/probe/test_health_slurm.py runs slurmctld,
# slurmd and munged of its own (ibpulse-probe health --drain-slurm).
# cppcheck, shellcheck: the lint suite; man-db, groff-base: the man pages'
# test (man -l).
test_pkgs=(
	prometheus prometheus-node-exporter
	qemu-system-x86 busybox-static kmod rdma-core ibverbs-utils
	ibverbs-providers perftest infiniband-diags iproute2
	openssl util-linux ibsim-utils opensm valgrind
	gnuplot-nox
	slurm-wlm munge
	cppcheck shellcheck man-db groff-base
)

want=("${build_pkgs[@]}")
[ "${1:-}" = "--build-only" ] || want+=("${test_pkgs[@]}" "${ship_pkgs[@]}")
# Debian's kubectl (kubernetes-client) and node/npm only where none is
# installed: another package's kubectl or nodejs (with its own npm) works
# as well, and Debian's npm would conflict with the latter.
if [ "${1:-}" != "--build-only" ]; then
	command -v kubectl >/dev/null || want+=(kubernetes-client)
	command -v node >/dev/null || want+=(nodejs)
	command -v npm >/dev/null || want+=(npm)
fi

missing=()
for p in "${want[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# --no-install-recommends keeps prometheus from pulling a web UI stack and
# keeps the packages' own services from mattering: tests start their own.
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
# Debian starts packaged daemons on install; the tests run their own
# instances on ephemeral ports, so stop the system ones (ignore failures
# where there is no systemd, as in containers and CI).
for s in prometheus prometheus-node-exporter opensm opensmd slurmctld slurmd munge; do
	$SUDO systemctl disable --now "$s" >/dev/null 2>&1 || true
done
