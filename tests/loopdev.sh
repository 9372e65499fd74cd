# SPDX-License-Identifier: GPL-2.0-or-later
# Loop devices with partitions for the host tests; sourced, not run.
#
#   loop_setup TAG [TOOL...]   needs root, losetup, partx, sfdisk and each
#                              TOOL, else skips the whole test (TAP
#                              "1..0 # SKIP"); makes the work directory
#                              $LOOP_WORK and cleans up on EXIT, INT, TERM
#   loop_image FILE SIZE       a sparse image FILE of SIZE (truncate -s),
#                              partitioned by the sfdisk script on stdin
#   loop_attach FILE [NPARTS]  attach FILE, add its partitions with partx
#                              (the kernel may have no partition parsers)
#                              and check that nodes p1..pNPARTS exist; sets
#                              $LOOP_DEV; returns 1 on failure
#   loop_list                  print the attached devices' names for
#                              asyncprobe's --include-loop=: "loop3,loop7"
#                              (a test probes its own loop devices, never
#                              another program's)
#   loop_cleanup               detach every attached device, remove
#                              $LOOP_WORK (the trap does it)
#
# Nothing here runs in a subshell, so the cleanup knows every device.

PATH=$PATH:/sbin:/usr/sbin
LOOP_WORK=
LOOP_DEV=
LOOP_DEVS=()

loop_skip() { echo "1..0 # SKIP $*"; exit 0; }

loop_cleanup() {
	local l
	for l in ${LOOP_DEVS[@]+"${LOOP_DEVS[@]}"}; do
		partx -d "$l" >/dev/null 2>&1
		losetup -d "$l" >/dev/null 2>&1
	done
	LOOP_DEVS=()
	[ -z "$LOOP_WORK" ] || rm -rf "$LOOP_WORK"
	LOOP_WORK=
}

loop_list() {
	local IFS=,
	echo "${LOOP_DEVS[*]#/dev/}"
}

loop_setup() {
	local tag=$1 tool
	shift
	[ "$(id -u)" = 0 ] || loop_skip "needs root for losetup"
	for tool in losetup partx sfdisk "$@"; do
		command -v "$tool" >/dev/null 2>&1 || loop_skip "$tool not installed"
	done
	LOOP_WORK=$(mktemp -d "${TMPDIR:-/tmp}/$tag.XXXXXX") || loop_skip "mktemp failed"
	trap loop_cleanup EXIT
	trap 'loop_cleanup; exit 130' INT
	trap 'loop_cleanup; exit 143' TERM
}

loop_image() {
	truncate -s "$2" "$1" || loop_skip "cannot create an image $1"
	sfdisk -q "$1" >/dev/null 2>&1 || loop_skip "sfdisk cannot partition $1"
}

loop_attach() {
	local file=$1 nparts=${2:-0} i
	LOOP_DEV=$(losetup -f --show "$file" 2>/dev/null) || { LOOP_DEV=; return 1; }
	LOOP_DEVS+=("$LOOP_DEV")
	# a loop device may carry partitions a previous user added by hand
	partx -d "$LOOP_DEV" >/dev/null 2>&1
	partx -a "$LOOP_DEV" >/dev/null 2>&1 || partx -u "$LOOP_DEV" >/dev/null 2>&1 || return 1
	for ((i = 1; i <= nparts; i++)); do
		[ -b "${LOOP_DEV}p$i" ] || return 1
	done
}
