#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Real udev keeps asyncprobe's choice of a contested link.  Two loop
# devices carry file systems with the same label and the same UUID; one
# run of `asyncprobe --no-modules --include-loop=A,B --dev-dir=TMP
# --udev-rules=TMP/rules.d` gives each contested link to its first
# claimant and leaves the rules file.  Then, in private mount namespaces
# with tmpfs on /dev and /run and that directory bind-mounted on
# /run/udev/rules.d, `udevadm test` (systemd 252's rules, link stack and
# link priorities) processes the two devices in both orders: the contested
# links must end at asyncprobe's winner either way.  Without the file the
# same udev gives them to whichever device came last, which is what the
# rules are for (checked too, so the oracle is known to see the contest),
# and so it does when the file is masked in /etc/udev/rules.d or its disk
# sequence numbers name other disks.
set -u

builddir=${top_builddir:-.}
prog="$builddir/src/asyncprobe/asyncprobe"

skip() {
	echo "1..0 # SKIP $*"
	exit 0
}

[ -x "$prog" ] || skip "asyncprobe not built"
[ -e /usr/lib/udev/rules.d/60-persistent-storage.rules ] || skip "udev rules not installed"
. "${top_srcdir:-$(dirname "$0")/../..}/tests/loopdev.sh"
loop_setup udev-claims udevadm mkfs.ext4 unshare mknod
work=$LOOP_WORK

# A tag in the label: nobody else's devices on this machine claim it.  The
# rest is hostile: a newline, a quote, a udev format specifier, a space.
# udev and asyncprobe encode them (\x0a...), and only comments of the rules
# file may show them.
tag=$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')
label=$'\n"%k '"$tag"
uuid=$(cat /proc/sys/kernel/random/uuid)
for x in a b; do
	loop_image "$work/$x.img" 24M <<'EOF'
label: gpt
type=L
EOF
	loop_attach "$work/$x.img" 1 || skip "no loop device with partition p1 (losetup/partx)"
	mkfs.ext4 -q -F -L "$label" -U "$uuid" "${LOOP_DEV}p1" >/dev/null 2>&1 || skip "mkfs.ext4 failed"
done
A=$(basename "${LOOP_DEVS[0]}")p1
B=$(basename "${LOOP_DEVS[1]}")p1
# the only loop devices asyncprobe probes: another program's are none of its business
ours=$(loop_list)
enc_label='\x0a\x22\x25k\x20'"$tag"
contested=("disk/by-label/$enc_label" "disk/by-uuid/$uuid")

mkdir -p "$work/dev" "$work/rules.d"
"$prog" --no-modules --include-loop="$ours" --no-progress --log-target=stderr --dev-dir="$work/dev" \
	--udev-rules="$work/rules.d" >"$work/run.out" 2>&1
status=$?
rules="$work/rules.d/97-asyncprobe-claims.rules"

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
nok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
show() { sed 's/^/#   /' "$@"; }

echo "1..16"
# 1 (degraded) is what a host with a device asyncprobe may not open gives;
# a sanitizer's report is a failure whatever the status
if [ "$status" -le 1 ] && ! grep -q 'Sanitizer' "$work/run.out"; then
	ok "asyncprobe ran (exit status $status)"
else
	nok "asyncprobe exit status $status"
	show "$work/run.out"
fi

# asyncprobe's winner: where its own link points, the same for both names
winner=$(readlink "$work/dev/${contested[0]}")
winner=${winner##*/}
if [ "$winner" = "$A" ] || [ "$winner" = "$B" ]; then
	ok "asyncprobe gave ${contested[0]} to $winner"
else
	nok "asyncprobe's ${contested[0]} points at '$winner', not $A or $B"
fi
[ "$winner" = "$A" ] && loser=$B || loser=$A
w2=$(readlink "$work/dev/${contested[1]}")
if [ "${w2##*/}" = "$winner" ] &&
	grep -F "${contested[0]} claimed by " "$work/run.out" | grep -q "$winner.*$loser\|$loser.*$winner"; then
	ok "${contested[1]} to $winner too, and the conflict was reported"
else
	nok "${contested[1]} points at '$w2'; conflict warning missing?"
	show "$work/run.out"
fi

# each matched by its disk's sequence number too: never reused in a boot
seq_w=$(cat "/sys/class/block/${winner%p1}/diskseq" 2>/dev/null)
seq_l=$(cat "/sys/class/block/${loser%p1}/diskseq" 2>/dev/null)
attr_w=${seq_w:+ATTRS\{diskseq\}==\"$seq_w\", }
attr_l=${seq_l:+ATTRS\{diskseq\}==\"$seq_l\", }
if [ -f "$rules" ] && grep -q "^SUBSYSTEM==\"block\", KERNEL==\"$winner\", ${attr_w}OPTIONS+=\"link_priority=0\"$" "$rules" &&
	grep -q "^SUBSYSTEM==\"block\", KERNEL==\"$loser\", ${attr_l}OPTIONS+=\"link_priority=-[1-9][0-9]*\"$" "$rules"; then
	ok "the rules file ranks $winner above $loser${seq_w:+ (diskseq $seq_w, $seq_l)}"
else
	nok "no rules file, or it does not rank $winner above $loser"
	[ -f "$rules" ] && show "$rules"
fi

# Inside a namespace: udevadm test for each device in the given order, then
# "<name> <target>" for each contested link as udev left it.
inner() {
	set -u
	local with=$1 d n
	shift
	mount -t tmpfs tmpfs /run || exit 1
	mount -t tmpfs tmpfs /dev || exit 1
	mknod /dev/null c 1 3
	if [ "$with" != none ]; then
		mkdir -p /run/udev/rules.d
		if [ "$with" = stale ]; then
			mount --bind "$work/stale.d" /run/udev/rules.d || exit 1
		else
			mount --bind "$work/rules.d" /run/udev/rules.d || exit 1
		fi
	fi
	if [ "$with" = masked ]; then
		# as asyncprobe(8) tells an administrator to
		mount -t tmpfs tmpfs /etc/udev/rules.d || exit 1
		ln -s /dev/null /etc/udev/rules.d/97-asyncprobe-claims.rules
	fi
	# the partitions and their disks (blkid reads the partition table there)
	for d in "$@"; do
		for n in "$d" "$(basename "$(readlink -f "/sys/class/block/$d/..")")"; do
			[ -e "/dev/$n" ] && continue
			IFS=: read -r ma mi <"/sys/class/block/$n/dev"
			mknod "/dev/$n" b "$ma" "$mi"
		done
	done
	for d in "$@"; do
		udevadm test "/sys/class/block/$d" >"$work/test-$d.out" 2>&1
		grep -i "97-asyncprobe-claims.rules.*\(invalid\|error\|fail\)" "$work/test-$d.out"
	done
	for d in "${contested[@]}"; do
		echo "$d $(readlink "/dev/$d")"
	done
}
export -f inner
export work
export contested_list="${contested[*]}"

run_udev() {
	unshare -m --propagation private bash -c 'contested=($contested_list); inner "$@"' \
		inner "$@" 2>&1
}

for with in rules none; do
	for order in "$winner $loser" "$loser $winner"; do
		out=$(run_udev "$with" $order) || { nok "unshare -m failed"; continue; }
		last=${order##* }
		if [ "$with" = rules ]; then
			want=$winner
			what="with the rules, events $order: every contested link at $winner"
		else
			want=$last
			what="without the rules, events $order: udev gives them to $last (the last event)"
		fi
		expect=$(for d in "${contested[@]}"; do echo "$d ../../$want"; done)
		if [ "$out" = "$expect" ]; then
			ok "$what"
		else
			nok "$what"
			echo "# got:"
			echo "$out" | sed 's/^/#   /'
		fi
	done
done

# The loser keeps every link nobody else claims (its by-partuuid): a
# priority, not a removal.
out=$(run_udev rules "$loser" "$winner")
if grep -q '^DEVLINKS=.*/dev/disk/by-partuuid/' "$work/test-$loser.out" &&
	grep '^DEVLINKS=' "$work/test-$loser.out" | grep -qF "/dev/${contested[0]}"; then
	ok "$loser still has its own by-partuuid link (it only ranks lower)"
else
	nok "$loser lost links it does not contest"
	grep '^DEVLINKS=' "$work/test-$loser.out" | show
fi

# The same kernel names on other disks (as after an unplug and a plug):
# the rules no longer apply, udev decides.
mkdir "$work/stale.d"
sed 's/ATTRS{diskseq}=="[0-9]*"/ATTRS{diskseq}=="999999999"/' "$rules" >"$work/stale.d/97-asyncprobe-claims.rules"
if [ -z "$seq_w" ]; then
	ok "# SKIP the kernel has no diskseq"
else
	out=$(run_udev stale "$winner" "$loser")
	expect=$(for d in "${contested[@]}"; do echo "$d ../../$loser"; done)
	if [ "$out" = "$expect" ]; then
		ok "rules for other disk sequence numbers do not apply to $winner and $loser"
	else
		nok "rules with other disk sequence numbers still applied"
		echo "$out" | sed 's/^/#   /'
	fi
fi

# Masked by a link to /dev/null in /etc/udev/rules.d: udev decides again.
out=$(run_udev masked "$winner" "$loser")
expect=$(for d in "${contested[@]}"; do echo "$d ../../$loser"; done)
if [ "$out" = "$expect" ]; then
	ok "masked in /etc/udev/rules.d, events $winner $loser: udev gives them to $loser again"
else
	nok "masking the rules file in /etc/udev/rules.d"
	echo "$out" | sed 's/^/#   /'
fi

# The default as an initramfs gets it: `asyncprobe --init` (the unit mode
# of a systemd initrd and initramfs-tools' script) with links in /dev, in
# a namespace with its own /dev and /run, writes
# /run/udev/rules.d/97-asyncprobe-claims.rules, and udev run after it
# keeps the winner; asyncprobe.udev_rules=0 on the kernel command line
# writes nothing.
inner_init() {
	set -u
	local d n
	mount -t tmpfs tmpfs /run || exit 1
	mount -t tmpfs tmpfs /dev || exit 1
	mknod /dev/null c 1 3
	for d in "$@"; do
		for n in "$d" "$(basename "$(readlink -f "/sys/class/block/$d/..")")"; do
			IFS=: read -r ma mi <"/sys/class/block/$n/dev"
			mknod "/dev/$n" b "$ma" "$mi"
		done
	done
	ASYNCPROBE_CMDLINE="$work/cmdline" "$prog" --init --no-modules --include-loop="$ours" --no-progress \
		--log-target=stderr >"$work/init.out" 2>&1
	echo "status $?"
	ls /run/udev/rules.d 2>/dev/null
	for d in "$@"; do
		udevadm test "/sys/class/block/$d" >/dev/null 2>&1
	done
	for d in "${contested[@]}"; do
		echo "$d $(readlink "/dev/$d")"
	done
}
export -f inner_init
export prog ours
for cmdline in "quiet" "quiet asyncprobe.udev_rules=0"; do
	echo "$cmdline" >"$work/cmdline"
	out=$(unshare -m --propagation private bash -c 'contested=($contested_list); inner_init "$@"' \
		inner_init "$winner" "$loser" 2>&1)
	if [ "$cmdline" = quiet ]; then
		want=$winner file="97-asyncprobe-claims.rules"
		what="--init: the default rules file in /run/udev/rules.d keeps the links at $winner"
	else
		want=$loser file=
		what="--init with asyncprobe.udev_rules=0: no rules file, udev gives them to $loser"
	fi
	expect=$(echo "status 1"; [ -z "$file" ] || echo "$file"
		for d in "${contested[@]}"; do echo "$d ../../$want"; done)
	# 1: devices of this host that the namespace's /dev has no node for
	if [ "$out" = "$expect" ] || [ "$out" = "${expect/status 1/status 0}" ]; then
		ok "$what"
	else
		nok "$what"
		echo "$out" | sed 's/^/#   /'
		show "$work/init.out"
	fi
done

# A run without contested links removes the file of the earlier one.
"$prog" --no-modules --no-progress --log-target=stderr --dev-dir="$work/dev" \
	--udev-rules="$work/rules.d" >"$work/run2.out" 2>&1
# --no-modules without --include-loop probes no loop device: whatever else
# this host has, our two are not contested in that run
if ! grep -q "KERNEL==\"$loser\"" "$rules" 2>/dev/null; then
	ok "a run where they are not contested leaves no rule for them"
else
	nok "stale rules for $loser after a run that did not see it"
	show "$rules"
fi

# --udev-rules=none writes nothing
rm -rf "$work/rules.d" && mkdir "$work/rules.d"
"$prog" --no-modules --include-loop="$ours" --no-progress --log-target=stderr --dev-dir="$work/dev" \
	--udev-rules=none >"$work/run3.out" 2>&1
if [ -z "$(ls -A "$work/rules.d")" ] && [ ! -e "$work/dev/97-asyncprobe-claims.rules" ]; then
	ok "--udev-rules=none writes no rules"
else
	nok "--udev-rules=none wrote something"
fi
# refused before anything is probed: exit status 2, nothing written
"$prog" --no-modules --include-loop="$ours" --no-progress --log-target=stderr --dev-dir="$work/dev" \
	--udev-rules="$work/missing.d" >"$work/run4.out" 2>&1
status=$?
if [ "$status" = 2 ] && grep -q "not a directory, and not a file name ending in .rules" "$work/run4.out" &&
	! grep -q "claimed by" "$work/run4.out" && [ ! -e "$work/missing.d" ]; then
	ok "--udev-rules=MISSING-DIR refused up front (exit status 2)"
else
	nok "--udev-rules=MISSING-DIR: exit status $status"
	show "$work/run4.out"
fi
[ "$failed" = 0 ]
