#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The lab from a checkout under /tmp (issue 12, item 11): the guest's /tmp
# is a tmpfs of its own, which once hid such a checkout, its cache and its
# run directory. On the host this test copies tests/lab and the built probe
# into a fresh directory under /tmp, gives that copy a cache of its own
# there (the prepared kernel and initramfs linked in, so nothing is
# downloaded) and boots the lab with the copy's tool, from the copy's
# directory. Inside it asserts: the working directory and the copied probe
# are there at their host paths, read-only; /tmp is otherwise empty of the
# host's files (a directory made beside the copy stays hidden) and
# writable; the copied probe lists rxe0 ACTIVE. The run directory sits in
# the copy's cache, inside the shared directory: the lab's status coming
# back at all says it was mounted there.
#   test-tmp-clone.sh LAB_TOOL BUILD_DIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

if [ -n "${LAB:-}" ]; then
	[ "$PWD" = "$CLONE" ] || lab_fail "working directory is $PWD, not $CLONE"
	[ -x "$CLONE/bin/ibpulse-probe" ] || lab_fail "$CLONE/bin/ibpulse-probe not visible"
	lab_ok "the checkout under /tmp is visible at $CLONE"
	if touch "$CLONE/written" 2>/dev/null; then
		lab_fail "$CLONE is writable in the guest (the host's files are read-only there)"
	fi
	[ ! -e "/tmp/$HIDDEN" ] || lab_fail "/tmp/$HIDDEN, not named by the run, is visible"
	echo scratch >/tmp/scratch.$$ || lab_fail "the guest's /tmp is not writable"
	lab_ok "the guest's /tmp: writable, no host file it was not given"
	"$CLONE/bin/ibpulse-probe" devices >/dev/shm/devices.txt 2>&1 ||
		lab_fail "ibpulse-probe devices: $(cat /dev/shm/devices.txt)"
	grep -q 'rxe0' /dev/shm/devices.txt && grep -q 'ACTIVE' /dev/shm/devices.txt ||
		lab_fail "no rxe0 ACTIVE in: $(cat /dev/shm/devices.txt)"
	lab_ok "the probe from under /tmp lists rxe0 ACTIVE"
	exit 0
fi

tool=${1:?usage: test-tmp-clone.sh LAB_TOOL BUILD_DIR}
build=${2:?usage: test-tmp-clone.sh LAB_TOOL BUILD_DIR}
[ -x "$build/probe/ibpulse-probe" ] || lab_fail "$build/probe/ibpulse-probe not built"
lab_require "$tool"
"$tool" prepare >/dev/null || lab_fail "cannot prepare the lab's cache"
src_cache=${IBPULSE_LAB_CACHE:-$(cd "$(dirname "$tool")/../.." && pwd)/.lab-cache}

top=$(mktemp -d /tmp/ibpulse-lab-clone.XXXXXX) || lab_fail "mktemp under /tmp"
hidden=$(mktemp -d /tmp/ibpulse-lab-hidden.XXXXXX) || lab_fail "mktemp under /tmp"
trap 'rm -rf "$top" "$hidden"' EXIT
clone=$top/repo
mkdir -p "$clone/tests" "$clone/bin" "$clone/.lab-cache" || lab_fail "cannot fill $clone"
cp -r "$here" "$clone/tests/lab" && cp "$build/probe/ibpulse-probe" "$clone/bin/" ||
	lab_fail "cannot copy the lab and the probe into $clone"
# The copy's own cache: the big files linked, the stamps and the
# initramfs copied (a rebuild there must not touch the source cache).
for f in "$src_cache"/kernel "$src_cache"/kernel-*.deb; do
	ln -s "$f" "$clone/.lab-cache/"
done
cp "$src_cache"/kernel.stamp "$src_cache"/initrd.gz "$src_cache"/initrd.stamp \
	"$clone/.lab-cache/" || lab_fail "cannot copy $src_cache"
cp "$src_cache"/kvm.* "$clone/.lab-cache/" 2>/dev/null

cd "$clone" || lab_fail "cd $clone"
env -u IBPULSE_LAB_CACHE "$clone/tests/lab/ibpulse-lab" run --timeout 300 \
	--env "CLONE=$clone" --env "HIDDEN=${hidden##*/}" -- \
	bash "$clone/tests/lab/test-tmp-clone.sh"
rc=$?
[ -z "$(ls "$clone/.lab-cache/runs" 2>/dev/null)" ] ||
	lab_fail "the run directory was left in $clone/.lab-cache/runs"
if [ "$rc" -eq 77 ] && [ -n "${CI:-}" ]; then
	lab_fail "the lab could not run and CI is set"
fi
exit "$rc"
