#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Interrupted runs on loop devices.  One GPT image (ext4 and vfat
# partitions) on a loop device; a reference run of
# `asyncprobe --fastboot --include-loop=LOOP --no-modules --dev-dir=TMP` gives
# the link tree.  Then:
#  - KILLS runs under ASYNC_CHAOS are killed with SIGKILL at random moments
#    into one --dev-dir, then one undisturbed rerun: the tree must equal
#    the reference, and no temporary link (.#asyncprobe.*) may be left;
#  - SIGINT and SIGTERM at random moments once the program catches them
#    (its SigCgt in /proc): exit status 130/143 (or 0/1 when the run had
#    ended first), no temporary link; the run stops early, and what it made
#    is a prefix in cookie order: no link from a device after the first one
#    it stopped, the links to our disk an initial part of the reference
#    run's (in the same order), the tree on disk what its manifest says; and
#    a rerun gives the reference again.  Two paths end with 130/143, and
#    only one is the engine stopping: the engine's "stopped on SIGx: N calls
#    not run to the end" (engine.c, with the manifest's exit_status 130/143)
#    versus the command line's "stopped on SIGx after the run was complete"
#    (cli.c: the signal came after the engine's last look, the manifest says
#    0/1).  The latter is accepted only as a race with the run's end, and
#    at least one of each signal's three runs must be a real stop;
#  - a driver that hangs (umockdev's scripted tree, a modprobe.d install
#    command that sleeps, --device-timeout=30): SIGINT and SIGTERM while it
#    hangs must stop the engine mid-run, within seconds, the hung call marked
#    stopped, never "after the run was complete".
#    A program that never catches the signal, or ends on it without the
#    engine stopping, fails: this is the only test of the command line's
#    stop handler on loop devices.
# Prints TAP; skips with a reason where loop devices cannot be made.
set -u

builddir=${top_builddir:-$(pwd)}
prog="$builddir/src/asyncprobe/asyncprobe"
PATH=$PATH:/sbin:/usr/sbin
KILLS=${KILLS:-12}

skip() { echo "1..0 # SKIP $*"; exit 0; }

export TSAN_OPTIONS="${TSAN_OPTIONS:-} suppressions=${top_srcdir:-$(dirname "$0")/../..}/tests/tsan.supp"

. "${top_srcdir:-$(dirname "$0")/../..}/tests/loopdev.sh"
loop_setup ap-kill mkfs.ext4 mkfs.vfat
work=$LOOP_WORK

mark=$(od -An -N2 -tx1 /dev/urandom | tr -d ' \n' | tr a-f A-F)
printf 'label: gpt\nsize=20M, type=L, name="kill %s"\ntype=U\n' "$mark" |
	loop_image "$work/disk.img" 40M
loop_attach "$work/disk.img" 2 || skip "cannot attach $work/disk.img with partitions p1 and p2 (losetup/partx)"
loopdev=$LOOP_DEV
mkfs.ext4 -q -F -L "K $mark" "${loopdev}p1" >/dev/null 2>&1 &&
	mkfs.vfat -n "KV$mark" "${loopdev}p2" >/dev/null 2>&1 || skip "mkfs failed"
name=${loopdev#/dev/}

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
nok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }

# run DIR [ENV...]: one run into DIR (manifest DIR.json), in the background; sets $pid
run() {
	local dir=$1
	shift
	mkdir -p "$dir"
	rm -f "$dir.json"
	env -u ASYNC_CHAOS ASYNCPROBE_CMDLINE=/dev/null "$@" "$prog" --include-loop="$name" --no-modules \
		--no-progress --fastboot --dev-dir="$dir" --json="$dir.json" 2>>"$work/log" &
	pid=$!
}
# prefix REF.json STOPPED.json TREE: the stopped run's manifest against the
# reference's and against the tree it left (tree's format); prints what it
# found, returns 1 when the stop did not leave a prefix.
prefix() {
	python3 - "$1" "$2" "$3" "$name" <<'PY'
import json, re, sys
ref, stp = (json.load(open(f)) for f in sys.argv[1:3])
tree = sorted(l.rstrip("\n") for l in open(sys.argv[3]))
ours = re.compile(r"(^|/)%s(p[0-9]+)?$" % re.escape(sys.argv[4]))
bad = []
# cookie 0: never scheduled (it would have come after every cookie given)
stopped = [d["cookie"] for d in stp["controllers"] + stp["devices"]
           if d.get("status", "").startswith("stopped") and d["cookie"]]
first = min(stopped) if stopped else None
late = [l for l in stp["links"] if first is not None and l["cookie"] > first]
if late:
    bad.append("%d links from cookies after the first stopped one (%d), e.g. %s"
               % (len(late), first, late[0]["name"]))
seq = lambda m: [(l["name"], l["target"]) for l in m["links"]
                 if ours.search(l["target"]) and l["action"] == "created"]
r, s = seq(ref), seq(stp)
if s != r[:len(s)]:
    bad.append("links to our disk not an initial part of the reference's: %s" % s)
made = sorted("%s -> %s" % (n, t if "/" in t else "../../" + t) for n, t in s)
if made != tree:
    bad.append("tree %s, manifest %s" % (tree, made))
print("%d of %d links to our disk, %d calls stopped (first cookie %s), summary.stopped %s, "
      "exit_status %s" % (len(s), len(r), len(stopped), first, stp["summary"]["stopped"],
                          stp["summary"]["exit_status"]))
for b in bad:
    print("# " + b)
sys.exit(1 if bad else 0)
PY
}
# The links that point at our disk and its partitions, with their targets.
tree() {
	find "$1" -type l -printf '%P -> %l\n' | grep -E -- "/$name(p[0-9]+)?\$" | sort
}
temps() { find "$1" -name '.#asyncprobe.*' | wc -l; }
# manifest_status JSON: its summary's exit_status, or nothing
manifest_status() {
	python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["summary"]["exit_status"])' \
		"$1" 2>/dev/null
}
# a random pause of 0 to $span ms: about as long as an undisturbed run
# (measured below), so that the signals land during runs
span=600
pause() {
	local ms=$((RANDOM % span))
	sleep "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))"
}
# ended PID: the process has exited (a zombie not yet waited for, or gone)
ended() {
	local k v state=
	while read -r k v _; do
		[ "$k" = State: ] && state=$v && break
	done 2>/dev/null <"/proc/$1/status" || return 0
	[ "$state" = Z ]
}
# catches PID SIGNUM: wait until the program has a handler for the signal
# (SigCgt in /proc/PID/status; not while PID is still the libtool wrapper
# script or env), up to 60 s.  Shell builtins only: a run lasts some tens
# of milliseconds.  1 when it ended first or never set one up.
catches() {
	local pid=$1 bit=$(($2 - 1)) k v state mask end=$((SECONDS + 60))
	while [ "$SECONDS" -lt "$end" ]; do
		state= mask=
		while read -r k v _; do
			case $k in
			State:) state=$v ;;
			SigCgt:) mask=$v ;;
			esac
		done 2>/dev/null <"/proc/$pid/status" || return 1
		[ "$state" = Z ] && return 1
		if [ -n "$mask" ] && [ $(((0x$mask >> bit) & 1)) = 1 ] &&
			! [ "/proc/$pid/exe" -ef "$BASH" ] && ! [ "/proc/$pid/exe" -ef /bin/sh ] &&
			! [ "/proc/$pid/exe" -ef /usr/bin/env ]; then
			return 0
		fi
	done
	return 1
}

t0=$(date +%s%N)
run "$work/ref"
wait "$pid"
st=$?
span=$((($(date +%s%N) - t0) / 1000000 * 3 / 2 + 10))
echo "# an undisturbed run takes about $((span * 2 / 3)) ms: signals within $span ms of a start"
tree "$work/ref" >"$work/ref.tree"
if { [ "$st" = 0 ] || [ "$st" = 1 ]; } && grep -q "by-label/K" "$work/ref.tree"; then
	ok "reference run: status $st, $(wc -l <"$work/ref.tree") links to $name"
else
	nok "reference run: status $st, tree: $(tr '\n' ' ' <"$work/ref.tree")"
fi

# SIGKILL at random moments, all into one tree, then an undisturbed rerun.
landed=0
for i in $(seq 1 "$KILLS"); do
	run "$work/k" ASYNC_CHAOS=$((RANDOM + 1))
	pause
	kill -9 "$pid" 2>/dev/null
	{ wait "$pid"; } 2>/dev/null
	[ $? = 137 ] && landed=$((landed + 1))
done
left=$(temps "$work/k")
run "$work/k"
wait "$pid"
st=$?
tree "$work/k" >"$work/k.tree"
if cmp -s "$work/ref.tree" "$work/k.tree"; then
	ok "after $KILLS SIGKILLs ($landed during a run) the rerun (status $st) leaves the reference tree"
else
	nok "after $KILLS SIGKILLs ($landed during a run) the tree differs"
	diff "$work/ref.tree" "$work/k.tree" | sed 's/^/# /'
fi
t=$(temps "$work/k")
[ "$t" = 0 ] && ok "no temporary link left after the rerun ($left left by the killed runs)" ||
	nok "$t temporary links left after the rerun"

# SIGINT and SIGTERM: a clean stop.  A run's last line, its summary
# (engine.c), is logged after its last look at the calls and before the
# program's last look at the signals (cli.c).
summary_re='[0-9]* controllers, [0-9]* devices, [0-9]* links, '
for sig in INT TERM; do
	want=130
	[ "$sig" = TERM ] && want=143
	stops=0
	for i in 1 2 3; do
		d="$work/s$sig$i"
		# the engine's stop (engine.c) and the command line's late one (cli.c)
		before=$(grep -c "stopped on SIG$sig: [0-9]* calls\? not run to the end" "$work/log")
		before_late=$(grep -c "stopped on SIG$sig after the run was complete" "$work/log")
		sums=$(grep -c "$summary_re" "$work/log")
		run "$d" ASYNC_CHAOS=$((RANDOM + 1))
		# The signal is sent only once the program catches it: a signal
		# before that (a slow sanitizer start) would test nothing.
		handler=0
		catches "$pid" "$(kill -l "$sig")" && handler=1
		# the first at once: the run is surely still going
		[ "$i" = 1 ] || pause
		first=0 complete=0
		ended "$pid" && first=1
		# its summary logged: the run is complete, only its exit is left
		# (the program's last look at the signals is behind it, and an
		# exit under LeakSanitizer takes a while)
		[ "$(grep -c "$summary_re" "$work/log")" -gt "$sums" ] && complete=1
		kill -s "$sig" "$pid" 2>/dev/null
		wait "$pid"
		st=$?
		t=$(temps "$d")
		caught=$(($(grep -c "stopped on SIG$sig: [0-9]* calls\? not run to the end" "$work/log") - before))
		late=$(($(grep -c "stopped on SIG$sig after the run was complete" "$work/log") - before_late))
		mst=$(manifest_status "$d.json")
		if [ "$handler" = 0 ]; then
			nok "SIG$sig #$i: the program never caught SIG$sig (no handler in /proc/PID/status SigCgt before it ended; status $st)"
		elif [ "$first" = 1 ]; then
			{ [ "$st" = 0 ] || [ "$st" = 1 ]; } && ok "SIG$sig #$i: the run ended before the signal: status $st" ||
				nok "SIG$sig #$i: the run ended before the signal with status $st"
		elif [ "$complete" = 1 ] && [ "$caught" = 0 ] && [ "$late" = 0 ]; then
			{ [ "$st" = 0 ] || [ "$st" = 1 ]; } &&
				ok "SIG$sig #$i: the run was complete (its summary logged) before the signal: status $st" ||
				nok "SIG$sig #$i: the run was complete before the signal, status $st"
		elif [ "$st" = "$want" ] && [ "$caught" = 1 ] && [ "$late" = 0 ] && [ "$mst" = "$want" ]; then
			stops=$((stops + 1))
			ok "SIG$sig #$i: the engine stopped: status $st, \"stopped on SIG$sig: ... not run to the end\", manifest exit_status $mst"
		elif [ "$st" = "$want" ] && [ "$caught" = 0 ] && [ "$late" = 1 ] &&
			{ [ "$mst" = 0 ] || [ "$mst" = 1 ]; }; then
			# the signal raced with the run's end: legitimate, but no stop
			ok "SIG$sig #$i: the signal came after the engine's last look: status $st, \"after the run was complete\", manifest exit_status $mst (not counted as a stop)"
		elif { [ "$st" = 0 ] || [ "$st" = 1 ]; } && [ "$caught" = 0 ] && [ "$late" = 0 ] &&
			[ "$st" = "$mst" ] && [ "$(grep -c "$summary_re" "$work/log")" -gt "$sums" ]; then
			# the run logged its summary between the look above and the
			# kill, and the signal came after the program's last look at
			# the signals: it ended as undisturbed; legitimate, no stop
			ok "SIG$sig #$i: the run completed as the signal was sent, after its last look at the signals: status $st, manifest exit_status $mst (not counted as a stop)"
		else
			nok "SIG$sig #$i: signalled while running, status $st (want $want), $caught engine stop lines, $late \"after the run was complete\" lines, manifest exit_status ${mst:-none}"
		fi
		[ "$t" = 0 ] && ok "SIG$sig #$i: no temporary link" || nok "SIG$sig #$i: $t temporary links"
		tree "$d" >"$d.stopped"
		if [ "$first" = 1 ] || [ "$st" != "$want" ] || [ "$caught" = 0 ]; then
			ok "SIG$sig #$i: no stop of the engine to check for a prefix (status $st)"
		elif [ ! -s "$d.json" ]; then
			nok "SIG$sig #$i: status $st and no manifest"
		elif out=$(prefix "$work/ref.json" "$d.json" "$d.stopped"); then
			ok "SIG$sig #$i: stopped with a prefix in cookie order: $out"
		else
			nok "SIG$sig #$i: the stopped run left no prefix: $out"
		fi
		run "$d"
		wait "$pid"
		tree "$d" >"$d.tree"
		cmp -s "$work/ref.tree" "$d.tree" && ok "SIG$sig #$i: the rerun leaves the reference tree" ||
			nok "SIG$sig #$i: the rerun's tree differs"
	done
	[ "$stops" -ge 1 ] && ok "SIG$sig: $stops of 3 runs stopped by the signal while running" ||
		nok "SIG$sig: the engine stopped in none of 3 runs (no \"stopped on SIG$sig: ... not run to the end\"): the stop path went untested or does not work"
done

# A driver that hangs, so the signal surely comes mid-run: umockdev's
# scripted tree (tests/asyncprobe/topology.umockdev), a module tree under a
# version no kernel runs (nothing counts as loaded), and a modprobe.d whose
# install command for virtio_scsi sleeps.  With --device-timeout=30 the run
# would wait 32 s for it; a stop request must end it within seconds, with
# the engine's stop, the hung call stopped, and the manifest saying so.
# The module tree: modindex.sh's cached Debian kernel, else one of
# /lib/modules that knows virtio_scsi.
hung_tree() {
	local d cache=${ASYNCPROBE_TEST_CACHE:-/var/cache/asyncprobe-test}
	for d in "$cache"/root-linux-image-*/lib/modules/* "${TMPDIR:-/tmp}"/asyncprobe-test/root-linux-image-*/lib/modules/* \
		/lib/modules/*; do
		[ -f "$d/modules.dep.bin" ] && [ -f "$d/modules.alias.bin" ] &&
			grep -q ' virtio_scsi$' "$d/modules.alias" 2>/dev/null && echo "$d" && return 0
	done
	return 1
}
srcdir=${top_srcdir:-$(dirname "$0")/../..}
hang="sleep 63.$$"
hung_skip() {
	n=$((n + 1)); echo "ok $n - # SKIP SIGINT and SIGTERM while a driver hangs: $*"
}
if ! command -v umockdev-run >/dev/null 2>&1; then
	hung_skip "umockdev-run not installed"
elif ldd "$prog" 2>/dev/null | grep -q libtsan; then
	hung_skip "umockdev under ThreadSanitizer (GLib is not instrumented)"
elif ! moddir=$(hung_tree); then
	hung_skip "no module tree with modules.dep.bin and virtio_scsi (modindex.sh caches one)"
else
	mkdir -p "$work/hung/lib/modules"
	ln -sfn "$moddir" "$work/hung/lib/modules/0.0.0-asyncprobe-test"
	cat >"$work/hung.conf" <<-EOF
	blacklist sd_mod
	blacklist sr_mod
	blacklist nvme
	install virtio_scsi exec $hang
	install * true
	EOF
	hung_kill() {
		local p
		for p in $(pgrep -fx "$hang"); do kill "$p" 2>/dev/null; done
	}
	for sig in INT TERM; do
		want=130 mode=--fastboot
		[ "$sig" = TERM ] && want=143 mode=--no-fastboot
		hung_kill
		rm -f "$work/hung.json"
		ASAN_OPTIONS="${ASAN_OPTIONS:-}:verify_asan_link_order=0:detect_leaks=0" \
		ASYNCPROBE_CMDLINE=/dev/null umockdev-run -d "$srcdir/tests/asyncprobe/topology.umockdev" -- \
			"$prog" --no-links --no-progress $mode -b "$work/hung" -S 0.0.0-asyncprobe-test \
			-C "$work/hung.conf" --device-timeout=30 --json="$work/hung.json" \
			>/dev/null 2>"$work/hung.err" &
		upid=$!
		for i in $(seq 1 300); do
			pgrep -fx "$hang" >/dev/null && break
			sleep 0.1
		done
		apid=$(pgrep -P "$upid" | head -1)     # umockdev-run runs it as its child
		hanging=0 handler=0
		pgrep -fx "$hang" >/dev/null && hanging=1
		[ -n "$apid" ] && catches "$apid" "$(kill -l "$sig")" && handler=1
		t0=$(date +%s%N)
		kill -s "$sig" "${apid:-$upid}" 2>/dev/null
		wait "$upid"
		st=$?
		ms=$((($(date +%s%N) - t0) / 1000000))
		hung_kill
		mst=$(manifest_status "$work/hung.json")
		why=
		[ "$hanging" = 1 ] || why="$why; the install command never ran"
		[ "$handler" = 1 ] || why="$why; no SIG$sig handler in the program"
		[ "$st" = "$want" ] || why="$why; status $st, want $want"
		[ "$ms" -lt 20000 ] || why="$why; $ms ms after the signal (the engine waited for the timeout)"
		grep -q "stopping on SIG$sig: [1-9][0-9]* calls\? in progress left unfinished" "$work/hung.err" ||
			why="$why; no \"stopping on SIG$sig: N calls in progress left unfinished\""
		grep -q "stopped on SIG$sig: [1-9][0-9]* calls\? not run to the end" "$work/hung.err" ||
			why="$why; no \"stopped on SIG$sig: N calls not run to the end\""
		! grep -q "stopped on SIG$sig after the run was complete" "$work/hung.err" ||
			why="$why; \"stopped on SIG$sig after the run was complete\": the engine ran to the end"
		[ "$mst" = "$want" ] || why="$why; manifest exit_status ${mst:-none}"
		grep -q '"name":"virtio2",.*"status":"stopped while loading its driver"' "$work/hung.json" ||
			why="$why; virtio2 not \"stopped while loading its driver\" in the manifest"
		if [ -z "$why" ]; then
			ok "SIG$sig while a driver hangs ($mode): the engine stops in $ms ms, status $st, the hung call stopped"
		else
			nok "SIG$sig while a driver hangs ($mode):${why#;}"
			tail -4 "$work/hung.err" | sed 's/^/# /'
		fi
	done
fi

echo "1..$n"
[ "$failed" = 0 ]
