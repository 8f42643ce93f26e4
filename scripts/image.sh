#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Build ibpulse's OCI image from Debian packages only: no registry pull.
# mmdebstrap builds a Debian 12 root file system from Debian's archive
# (the Essential set, the runtime libraries and ibverbs-providers) and
# installs ibpulse-probe, ibpulse-collector and ibpulse-exporter from the
# .debs of debian/ (built here by dpkg-buildpackage unless --debs is
# given) with dpkg, maintainer scripts and all; buildah turns the tree
# into an image from scratch. One image holds the three programs; it runs
# as the ibpulse user (uid/gid 9470) by default. The probe's user is
# ibpulse-probe (9471); in Kubernetes the probe runs as root with only
# CAP_IPC_LOCK (docs/kubernetes.md says why).
set -euo pipefail

usage() {
	cat <<'EOF'
usage: scripts/image.sh [--debs DIR] [--out DIR] [--tag NAME]
                        [--mirror URL] [--security URL] [--oci-archive FILE]
       scripts/image.sh --help

  --debs DIR          use the ibpulse-*.deb files in DIR instead of building
                      them (dpkg-buildpackage -b -us -uc, nocheck)
  --out DIR           work directory (default build-image/ in the tree)
  --tag NAME          image name (default localhost/ibpulse:VERSION)
  --mirror URL        Debian archive (default http://deb.debian.org/debian)
  --security URL      security archive (default .../debian-security)
  --oci-archive FILE  also write the image as an OCI archive
  -h, --help          this help

Downloaded packages are kept in OUT/apt-cache for the next build. Prints
the image's name and size when done.
EOF
}

root=$(cd "$(dirname "$0")/.." && pwd)
version=$(sed -n "s/^  version : '\(.*\)',$/\1/p" "$root/meson.build")
out=$root/build-image
debs=
tag=
archive=
mirror=http://deb.debian.org/debian
security=http://deb.debian.org/debian-security
suite=bookworm
while [ $# -gt 0 ]; do
	case "$1" in
	--debs) debs=$(cd "${2:?--debs needs a directory}" && pwd); shift 2 ;;
	--out) out=${2:?--out needs a directory}; shift 2 ;;
	--tag) tag=${2:?--tag needs a name}; shift 2 ;;
	--mirror) mirror=${2:?--mirror needs a URL}; shift 2 ;;
	--security) security=${2:?--security needs a URL}; shift 2 ;;
	--oci-archive) archive=${2:?--oci-archive needs a file}; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) echo "image.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
done
tag=${tag:-localhost/ibpulse:$version}
[ "$(id -u)" -eq 0 ] || { echo "image.sh: run as root (mmdebstrap, buildah)" >&2; exit 1; }
for t in mmdebstrap buildah podman; do
	command -v "$t" >/dev/null || {
		echo "image.sh: $t is missing: bash scripts/install-deps.sh" >&2
		exit 1
	}
done
mkdir -p "$out"
out=$(cd "$out" && pwd)
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$root" log -1 --format=%ct 2>/dev/null || date +%s)}

# 1. The packages, from a clean copy of the tree.
if [ -z "$debs" ]; then
	rm -rf "$out/src" "$out"/ibpulse*.deb "$out"/ibpulse_*
	mkdir -p "$out/src"
	if git -C "$root" rev-parse --git-dir >/dev/null 2>&1; then
		git -C "$root" ls-files -co --exclude-standard -z |
			(cd "$root" && xargs -0 tar -cf - --no-recursion) | tar -xf - -C "$out/src"
	else
		tar -C "$root" --exclude='./build*' --exclude=./.lab-cache -cf - . | tar -xf - -C "$out/src"
	fi
	echo "image.sh: building the .debs (dpkg-buildpackage -b -us -uc)"
	(cd "$out/src" && DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" \
		dpkg-buildpackage -b -us -uc >"$out/dpkg-buildpackage.log" 2>&1) || {
		tail -30 "$out/dpkg-buildpackage.log" >&2
		exit 1
	}
	debs=$out
fi

# 2. The three .debs; apt installs them with their dependencies. They
# are bind-mounted into the chroot at the same path (mmdebstrap's
# file-mirror-automount hook), so they sit in a directory under /tmp
# that the last hook empties. The explicit includes pick the small one
# of each alternative (systemd-standalone-sysusers for "systemd |
# systemd-sysusers", usr-is-merged for "usrmerge | usr-is-merged", which
# would pull perl).
include=()
stage=$(mktemp -d /tmp/ibpulse-image.XXXXXX)
trap 'rm -rf "$stage"' EXIT
chmod 0755 "$stage"
for p in ibpulse-probe ibpulse-collector ibpulse-exporter; do
	f=$(ls "$debs/${p}_"*.deb 2>/dev/null | head -1)
	[ -n "$f" ] || { echo "image.sh: no ${p}_*.deb in $debs" >&2; exit 1; }
	cp "$f" "$stage/"
	include+=("--include=$stage/$(basename "$f")")
done
mkdir -p "$out/apt-cache"

# 3. The root file system. The users get fixed ids before the packages'
# sysusers run (which then keep them): Kubernetes needs numbers for
# runAsUser and fsGroup.
rootfs=$out/rootfs.tar
users='cat >>"$1/etc/passwd" <<EOF
ibpulse:x:9470:9470:ibpulse collector and exporter:/var/lib/ibpulse:/usr/sbin/nologin
ibpulse-probe:x:9471:9471:ibpulse probe:/var/lib/ibpulse-probe:/usr/sbin/nologin
EOF
cat >>"$1/etc/group" <<EOF
ibpulse:x:9470:
ibpulse-probe:x:9471:
EOF
printf "ibpulse:!*:1::::::\nibpulse-probe:!*:1::::::\n" >>"$1/etc/shadow"
printf "ibpulse:!*::\nibpulse-probe:!*::\n" >>"$1/etc/gshadow"'
dirs='install -d -o 9470 -g 9470 -m 0750 "$1/var/lib/ibpulse"
install -d -o 9471 -g 9471 -m 0700 "$1/var/lib/ibpulse-probe" "$1/var/lib/ibpulse-probe/spool"
install -d -o 9471 -g 9471 -m 0750 "$1/run/ibpulse"
rm -rf "$1"/var/cache/* "$1"/var/log/* "$1"/var/lib/dpkg/*-old "$1"/usr/share/doc/ibpulse
rm -rf "$1"/tmp/ibpulse-image.*'
echo "image.sh: mmdebstrap $suite from $mirror"
mmdebstrap --variant=essential --mode=root \
	--include=ibverbs-providers,systemd-standalone-sysusers "${include[@]}" \
	--hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
	--hook-dir=/usr/share/mmdebstrap/hooks/file-mirror-automount \
	--dpkgopt=force-unsafe-io \
	--dpkgopt='path-exclude=/usr/share/man/*' \
	--dpkgopt='path-exclude=/usr/share/locale/*' \
	--dpkgopt='path-exclude=/usr/share/info/*' \
	--dpkgopt='path-exclude=/usr/share/doc/*' \
	--dpkgopt='path-include=/usr/share/doc/*/copyright' \
	--setup-hook='mkdir -p "$1"/var/cache/apt/archives' \
	--setup-hook="sync-in '$out/apt-cache' /var/cache/apt/archives" \
	--essential-hook="$users" \
	--customize-hook="sync-out /var/cache/apt/archives '$out/apt-cache'" \
	--customize-hook="$dirs" \
	--skip=download/empty \
	"$suite" "$rootfs" \
	"deb $mirror $suite main" \
	"deb $mirror $suite-updates main" \
	"deb $security $suite-security main" >"$out/mmdebstrap.log" 2>&1 || {
	tail -30 "$out/mmdebstrap.log" >&2
	exit 1
}

# 4. The image, from scratch.
ctr=$(buildah from scratch)
trap 'rm -rf "$stage"; buildah rm "$ctr" >/dev/null 2>&1 || true' EXIT
buildah add --quiet "$ctr" "$rootfs" / >/dev/null
buildah config \
	--user 9470:9470 --workingdir / \
	--env PATH=/usr/sbin:/usr/bin:/sbin:/bin --env LANG=C.UTF-8 \
	--port 9470/tcp --port 9471/tcp --port 18515/tcp \
	--cmd '["/usr/bin/ibpulse-collector", "--help"]' \
	--label org.opencontainers.image.title=ibpulse \
	--label org.opencontainers.image.version="$version" \
	--label org.opencontainers.image.licenses=MIT \
	--label org.opencontainers.image.description="ibpulse probe, collector and exporter (Debian $suite packages)" \
	"$ctr"
buildah commit --quiet --rm "$ctr" "$tag" >/dev/null
trap 'rm -rf "$stage"' EXIT
if [ -n "$archive" ]; then
	rm -f "$archive"
	buildah push --quiet "$tag" "oci-archive:$archive:$tag" >/dev/null
fi
size=$(podman image inspect --format '{{.Size}}' "$tag" 2>/dev/null ||
	buildah inspect --type image --format '{{.FromImageDigest}}' "$tag")
echo "image.sh: $tag, $size bytes uncompressed"
