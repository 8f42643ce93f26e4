#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The OCI image's size (scripts/image.sh), taken apart: the image as podman
# reports it, its one layer gzipped (what a registry would store), and
# dpkg's Installed-Size of the Debian Essential set (the anchor: what any
# dpkg-managed Debian image carries), of the runtime libraries and of the
# three ibpulse packages.
#
# usage: bench/image/run.sh [OUT_DIR [TAG]]   (defaults: build-image,
#        localhost/ibpulse:VERSION; run scripts/image.sh first)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
version=$(sed -n "s/^  version : '\(.*\)',$/\1/p" "$root/meson.build")
out=${1:-$root/build-image}
tag=${2:-localhost/ibpulse:$version}
[ -f "$out/rootfs.tar" ] || { echo "run.sh: no $out/rootfs.tar: run scripts/image.sh" >&2; exit 1; }
image=$(podman image inspect --format '{{.Size}}' "$tag")
gz=$(gzip -6 -c "$out/rootfs.tar" | wc -c)
status=$(tar -xOf "$out/rootfs.tar" ./var/lib/dpkg/status)
echo "# $(date -u +%FT%TZ) $tag"
printf '%-34s %12s\n' "what" "MB"
printf '%-34s %12.1f\n' "image (podman image inspect)" "$(echo "$image / 1000000" | bc -l)"
printf '%-34s %12.1f\n' "layer, gzip -6" "$(echo "$gz / 1000000" | bc -l)"
echo "$status" | awk -v RS= '
	{ pkg = ""; size = 0; ess = 0
	  n = split($0, l, "\n")
	  for (i = 1; i <= n; i++) {
		if (l[i] ~ /^Package: /) pkg = substr(l[i], 10)
		if (l[i] ~ /^Installed-Size: /) size = substr(l[i], 17) + 0
		if (l[i] ~ /^Essential: yes/) ess = 1
	  }
	  if (pkg ~ /^ibpulse-/) { ib += size; nib++ }
	  else if (ess) { es += size; nes++ }
	  else { rest += size; nrest++ } }
	END {
	  printf "%-34s %12.1f\n", "Essential set (" nes " packages)", es * 1024 / 1e6
	  printf "%-34s %12.1f\n", "libraries etc. (" nrest " packages)", rest * 1024 / 1e6
	  printf "%-34s %12.1f\n", "ibpulse-* (" nib " packages)", ib * 1024 / 1e6
	}'
echo "(Installed-Size counts before dpkg's path-exclude of docs, man pages and locales)"
