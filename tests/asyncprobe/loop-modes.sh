#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Host test on loop devices: two partitioned images (GPT with ext4 and vfat,
# MBR with vfat and ext4, labels with a space and a slash), attached with
# losetup and partx -a (this kernel may have no partition parsers), probed
# by `asyncprobe --include-loop=A,B --no-modules --dev-dir=TMP --json`
# (its own two devices only: another program's loop devices are none of its
# business) sequentially, with --fastboot, and both again under ASYNC_CHAOS.  The
# manifests - devices with their cookies and parents, fs info, the links
# creation log - must be byte-identical once timings are taken out.
# Prints TAP; skips with a reason where loop devices cannot be made.
set -u

builddir=${top_builddir:-$(pwd)}
prog="$builddir/src/asyncprobe/asyncprobe"
PATH=$PATH:/sbin:/usr/sbin

skip() { echo "1..0 # SKIP $*"; exit 0; }

# Under ThreadSanitizer: libudev's own (uninstrumented) races are not ours (tests/tsan.supp).
export TSAN_OPTIONS="${TSAN_OPTIONS:-} suppressions=${top_srcdir:-$(dirname "$0")/../..}/tests/tsan.supp"

. "${top_srcdir:-$(dirname "$0")/../..}/tests/loopdev.sh"
loop_setup ap-loop mkfs.ext4 mkfs.vfat
tmp=$LOOP_WORK

# A tag in every label and identifier: nobody else's devices on this machine
# claim the same links.  The labels carry spaces and a slash.
tag=$(od -An -N2 -tx1 /dev/urandom | tr -d ' \n' | tr a-f A-F)
printf 'label: gpt\nsize=20M, type=L, name="root fs %s"\nsize=16M, type=U, name="EFI %s"\ntype=L\n' "$tag" "$tag" |
	loop_image "$tmp/a.img" 64M
printf 'label: dos\nsize=20M, type=c\ntype=83\n' | loop_image "$tmp/b.img" 48M

loop_attach "$tmp/a.img" 3 ||
	skip "cannot attach a loop device with partitions p1-p3 (losetup/partx; no devtmpfs?)"
A=$LOOP_DEV
loop_attach "$tmp/b.img" 2 || skip "cannot attach a second loop device with partitions p1, p2"
B=$LOOP_DEV
# the only loop devices the runs probe
ours=$(loop_list)
uuid=$(cat /proc/sys/kernel/random/uuid)
vid=$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n' | tr a-f A-F)
vfat_uuid="${vid:0:4}-${vid:4:4}"
mkfs.ext4 -q -F -L "My Root $tag" -U "$uuid" "${A}p1" >/dev/null 2>&1 &&
	mkfs.vfat -n "EFI$tag" -i "$vid" "${A}p2" >/dev/null 2>&1 &&
	mkfs.ext4 -q -F "${A}p3" >/dev/null 2>&1 &&
	mkfs.vfat -n "D X$tag" "${B}p1" >/dev/null 2>&1 &&
	mkfs.ext4 -q -F -L "a/b $tag" "${B}p2" >/dev/null 2>&1 || skip "mkfs failed"

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
nok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }

# What must not differ: drop the "run" line and every "time" object.
stable() { sed -e '/^  "run":/d' -e 's/,"time":{[^}]*}//g' "$1"; }
# Every block device and its disk sequence number: a loop device detached
# and attached again by someone else gets a new one.
devset() {
	local f
	for f in /sys/class/block/*; do
		printf '%s:%s ' "${f##*/}" "$(cat "$f/diskseq" 2>/dev/null)"
	done
}

runs=("--no-fastboot" "--fastboot" "--no-fastboot 4242" "--fastboot 4242" "--fastboot 77")
attempt=0
while :; do
	attempt=$((attempt + 1))
	before=$(devset)
	i=0
	for r in "${runs[@]}"; do
		set -- $r
		mode=$1 chaos=${2:-}
		rm -rf "$tmp/dev$i" && mkdir -p "$tmp/dev$i"
		if [ -n "$chaos" ]; then
			ASYNC_CHAOS=$chaos ASYNCPROBE_CMDLINE=/dev/null "$prog" --include-loop="$ours" --no-modules \
				--no-progress -v "$mode" --dev-dir="$tmp/dev$i" --json="$tmp/run$i.json" \
				2>"$tmp/run$i.log"
		else
			env -u ASYNC_CHAOS ASYNCPROBE_CMDLINE=/dev/null "$prog" --include-loop="$ours" --no-modules \
				--no-progress -v "$mode" --dev-dir="$tmp/dev$i" --json="$tmp/run$i.json" \
				2>"$tmp/run$i.log"
		fi
		echo $? >"$tmp/run$i.status"
		stable "$tmp/run$i.json" >"$tmp/run$i.stable"
		grep '^asyncprobe: link ' "$tmp/run$i.log" >"$tmp/run$i.links"
		i=$((i + 1))
	done
	after=$(devset)
	same=1
	for j in $(seq 1 $((i - 1))); do
		cmp -s "$tmp/run0.stable" "$tmp/run$j.stable" || same=0
	done
	# Other users of loop devices on a shared machine change the device set
	# (not probed, but a loop device of theirs detached may be reused for
	# one of ours only between runs of another test): try again.
	[ "$same" = 1 ] || [ "$before" = "$after" ] || [ "$attempt" -ge 3 ] || continue
	break
done

for j in $(seq 0 $((${#runs[@]} - 1))); do
	st=$(cat "$tmp/run$j.status")
	# 1 is fine: the host's own disks may be unreadable (EPERM), which degrades the run
	if [ "$st" = 0 ] || [ "$st" = 1 ]; then ok "run ${runs[$j]}: status $st"
	else nok "run ${runs[$j]}: status $st: $(tail -3 "$tmp/run$j.log")"; fi
done

# The manifest knows our disks, partitions and filesystems.
a=${A#/dev/} b=${B#/dev/}
grep -q "\"kind\":\"disk\",\"name\":\"$a\".*\"pttype\":\"gpt\"" "$tmp/run0.stable" &&
	grep -q "\"name\":\"${a}p1\".*\"type\":\"ext4\".*\"uuid\":\"$uuid\",\"label\":\"My Root $tag\".*\"part_entry_name\":\"root fs $tag\"" "$tmp/run0.stable" &&
	grep -q "\"name\":\"${a}p2\".*\"type\":\"vfat\".*\"uuid\":\"$vfat_uuid\",\"label\":\"EFI$tag\"" "$tmp/run0.stable" &&
	grep -q "\"name\":\"${b}p2\".*\"label\":\"a/b $tag\"" "$tmp/run0.stable" &&
	grep -q "\"kind\":\"disk\",\"name\":\"$b\".*\"pttype\":\"dos\"" "$tmp/run0.stable" &&
	ok "disks, partitions and filesystems of $a and $b are in the manifest" ||
	nok "manifest lacks $a/$b details: $(grep loop "$tmp/run0.stable")"

# No other loop device: a foreign one (another test's, another program's)
# is not probed, whatever its label.
others=$(grep -o '"name":"loop[0-9p]*"' "$tmp/run0.stable" | sed 's/"name":"\(.*\)"/\1/' |
	grep -Ev "^(${A#/dev/}|${B#/dev/})(p[0-9]+)?\$" | sort -u | tr '\n' ' ')
[ -z "$others" ] && ok "no loop device but $ours in the manifest" ||
	nok "loop devices not ours in the manifest: $others"

# Partitions come after their disk, in partition-number order.
order=$(grep -o "\"cookie\":[0-9]*,\"parent\":[0-9]*,\"kind\":\"[a-z]*\",\"name\":\"${a}[p0-9]*\"" "$tmp/run0.stable" |
	sed 's/.*"name":"\(.*\)"/\1/' | tr '\n' ' ')
[ "$order" = "$a ${a}p1 ${a}p2 ${a}p3 " ] && ok "cookie order: $order" || nok "cookie order: $order"

# Our own devices' lines, cookie numbers taken out (their order stays).
ours() {
	local d="(${A#/dev/}|${B#/dev/})(p[0-9]+)?"
	grep -E "\"(name|target)\":\"$d\"| -> $d( |,|\$)" "$1" |
		sed -e 's/"cookie":[0-9]*,//; s/"parent":[0-9]*,//; s/ (cookie [0-9]*)//g; s/},$/}/'
}
cp "$tmp/run0.stable" "$tmp/run0.full"
if [ "$same" = 0 ] && [ "$before" != "$after" ]; then
	# Someone else's loop devices came and went during all three attempts:
	# compare what concerns ours, in order, without the absolute cookies.
	echo "# block devices changed during the runs (other loop users): comparing our devices only"
	for j in $(seq 0 $((${#runs[@]} - 1))); do
		ours "$tmp/run$j.stable" >"$tmp/run$j.stable.ours"
		ours "$tmp/run$j.links" >"$tmp/run$j.links.ours"
		mv "$tmp/run$j.stable.ours" "$tmp/run$j.stable"
		mv "$tmp/run$j.links.ours" "$tmp/run$j.links"
	done
fi
for j in $(seq 1 $((${#runs[@]} - 1))); do
	if cmp -s "$tmp/run0.stable" "$tmp/run$j.stable"; then
		ok "manifest of ${runs[$j]} identical to the sequential run"
	else
		nok "manifest of ${runs[$j]} differs from the sequential run"
		diff "$tmp/run0.stable" "$tmp/run$j.stable" | sed 's/^/# /' | head -20
	fi
done

# The links creation log (-v): a run that creates no link is a failure.
if [ -s "$tmp/run0.links" ]; then
	for j in $(seq 1 $((${#runs[@]} - 1))); do
		cmp -s "$tmp/run0.links" "$tmp/run$j.links" &&
			ok "link log of ${runs[$j]} identical ($(wc -l <"$tmp/run0.links") links)" ||
			nok "link log of ${runs[$j]} differs"
	done
	grep -q '"links": \[$' "$tmp/run0.full" && ok "links section of the manifest is not empty" ||
		nok "the -v log has links but the manifest has none"
else
	nok "the sequential run logged no link created for the loop devices"
	grep -E 'error|warning' "$tmp/run0.log" | head -5 | sed 's/^/# /'
fi

# A manifest that cannot be written is an error, on stdout too (a full disk
# shows only when the output is flushed): said, and the run is degraded.
mkdir -p "$tmp/devfull"
env -u ASYNC_CHAOS ASYNCPROBE_CMDLINE=/dev/null "$prog" --include-loop="$ours" --no-modules --no-progress \
	--dev-dir="$tmp/devfull" --json >/dev/full 2>"$tmp/full.log"
st=$?
if [ "$st" = 1 ] && grep -q 'cannot write the manifest to stdout: No space left on device' "$tmp/full.log"; then
	ok "--json on a full stdout: reported, status 1"
else
	nok "--json on a full stdout: status $st, $(tail -2 "$tmp/full.log")"
fi

echo "1..$n"
[ "$failed" = 0 ]
