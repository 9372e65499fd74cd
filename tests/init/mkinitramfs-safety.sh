#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# asyncprobe-mkinitramfs refuses what it cannot do safely, before any work,
# and leaves nothing behind (asyncprobe-mkinitramfs(8), EXIT STATUS):
#   - the image is staged under a mktemp name beside OUTPUT: a symbolic
#     link planted at the old predictable name OUTPUT.tmp.PID is not
#     written through, and OUTPUT ends up a regular file;
#   - -o naming a directory or a FIFO, a missing directory, a name longer
#     than NAME_MAX or a path longer than PATH_MAX: status 2, with a message;
#   - --add SRC:DEST with a DEST that leaves the image after ".." is
#     normalised: status 100, nothing written outside;
#   - --root-fstype naming no file system of the target kernel: status 2;
#   - SIGTERM, SIGINT and SIGHUP during compression: the staged image and
#     the work tree are removed, the compressor stopped, status 128+signal;
#   - the default-prefix install (./configure && make && make install into
#     /usr/local, without ldconfig): the installed asyncprobe runs (it links
#     libasync in) and the generator makes an image of it.  Root only; the install goes to /usr/local
#     (the dracut module and initramfs-tools files, which would go to
#     /usr/lib and /etc, into a scratch directory), make uninstall and the
#     directories it created removed leave /usr/local as it was.
# Needs a kernel module tree: /lib/modules/VERSION, or the Debian kernel the
# VM tests cache (tests/vm/lib.sh); ASYNCPROBE_TEST_KVER picks the version.
set -u
: "${top_srcdir:?}" "${top_builddir:?}"
mk=$top_builddir/src/asyncprobe-mkinitramfs
ap=$top_builddir/src/asyncprobe/asyncprobe
lt=$top_builddir/libtool
: "${ASYNCPROBE_NOCRYPTO=$top_builddir/src/initramfs/nocrypto/.libs/libcrypto.so.3}"
export ASYNCPROBE_NOCRYPTO

n=0
ok() { n=$((n + 1)); if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi; }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
diag() { sed 's/^/# /'; }
note() { echo "# $*"; }

work=$(mktemp -d "${TMPDIR:-/tmp}/mkinitramfs-safety.XXXXXX")
cleanup_install=:
trap '$cleanup_install; rm -rf "$work"' EXIT

# A module tree: the host's, else the VM tests' cached Debian kernel.
kver=
base=
for d in /lib/modules/*/ "${ASYNCPROBE_TEST_CACHE:-/var/cache/asyncprobe-test}"/kernel-*/lib/modules/*/; do
	d=${d%/}
	[ -f "$d/modules.dep" ] || continue
	v=${d##*/}
	[ -z "${ASYNCPROBE_TEST_KVER:-}" ] || [ "$v" = "$ASYNCPROBE_TEST_KVER" ] || continue
	kver=$v
	base=${d%/lib/modules/*}
	base=${base:-/}
	break
done
echo "# module tree: $([ -n "$kver" ] && echo "${base%/}/lib/modules/$kver" || echo none)"

# The build tree's generator and program, a small image unless told otherwise.
gen() {
	"$lt" --mode=execute "$mk" --asyncprobe "$ap" -k "$kver" -b "$base" --root-path=none "$@"
}
small=(--no-default-modules -m virtio_blk --compress=none)
# files in DIR, one a line (hidden ones too)
list() { find "$1" -mindepth 1 -maxdepth 1 -printf '%f\n' 2>/dev/null | sort; }

need_tree() {
	local i
	[ -n "$kver" ] && return 0
	for ((i = 0; i < $1; i++)); do skip "$2" "no kernel module tree (/lib/modules/VERSION/modules.dep or the VM tests' cached kernel)"; done
	return 1
}

# 1: a symbolic link at the old staging name OUTPUT.tmp.PID (the generator
# keeps the PID of the shell that plants it: exec, and libtool execs too)
if need_tree 3 "image staging, output symlink, --add normalisation"; then
	d=$work/1
	mkdir -p "$d/out" "$d/tmp"
	TMPDIR=$d/tmp bash -c 'ln -s "$1" "$2.tmp.$$"; shift 2; exec "$@"' _ \
		"$d/victim" "$d/out/img" "$lt" --mode=execute "$mk" --asyncprobe "$ap" \
		-k "$kver" -b "$base" --root-path=none "${small[@]}" -o "$d/out/img" \
		--add /etc/hostname:/etc/x/../hostname2 >"$d/log" 2>&1
	rc=$?
	left=$(list "$d/out" | grep -vx 'img\|img\.tmp\.[0-9]*' | tr '\n' ' ')
	bad=0
	[ $rc -eq 0 ] || bad=1
	[ ! -e "$d/victim" ] || { note "the image was written into the planted link's target $d/victim"; bad=1; }
	if [ -L "$d/out/img" ] || [ ! -f "$d/out/img" ]; then
		note "OUTPUT is not a regular file: $(ls -l "$d/out/img" 2>&1)"; bad=1
	fi
	[ -z "$left" ] || { note "left in the output directory: $left"; bad=1; }
	{ [ $bad -eq 0 ] || cat "$d/log"; } | diag
	ok $bad "a symbolic link at OUTPUT.tmp.PID is not written through; OUTPUT is a regular file, nothing else left beside it (status $rc)"

	# 2: OUTPUT itself a symbolic link to a file: replaced, the file untouched
	mkdir "$d/x"
	(cd "$d/x" && cpio -id --quiet 2>/dev/null <"$d/out/img")
	d2=$work/2
	mkdir -p "$d2"
	echo precious >"$d2/target"
	ln -s "$d2/target" "$d2/img"
	gen "${small[@]}" -o "$d2/img" >"$d2/log" 2>&1
	rc=$?
	[ $rc -eq 0 ] && [ "$(cat "$d2/target")" = precious ] && [ ! -L "$d2/img" ] && [ -f "$d2/img" ]
	r=$?
	{ [ $r -eq 0 ] || { cat "$d2/log"; ls -l "$d2"; }; } | diag
	ok $r "OUTPUT a symbolic link: the link is replaced by the image, its target is untouched (status $rc)"

	# 3: a DEST with ".." that stays inside the image
	[ -f "$d/x/etc/hostname2" ] && cmp -s /etc/hostname "$d/x/etc/hostname2"
	ok $? "--add /etc/hostname:/etc/x/../hostname2 puts the file at /etc/hostname2"
fi

# 4, 5: -o naming a directory, or an existing file that is not a regular one
d=$work/4
mkdir -p "$d/dir" "$d/tmp"
TMPDIR=$d/tmp "$lt" --mode=execute "$mk" --asyncprobe "$ap" -k "${kver:-0}" -b "${base:-/}" \
	--root-path=none "${small[@]}" -o "$d/dir" >"$d/log" 2>&1
rc=$?
[ $rc -eq 2 ] && [ -z "$(list "$d/dir")" ] && [ -z "$(list "$d/tmp")" ] && grep -q 'is a directory' "$d/log"
r=$?
{ cat "$d/log"; [ $r -eq 0 ] || ls -la "$d/dir" "$d/tmp"; } | diag
ok $r "-o DIR: refused before any work, status 2, nothing left in DIR (status $rc)"
mkfifo "$d/fifo"
TMPDIR=$d/tmp "$lt" --mode=execute "$mk" --asyncprobe "$ap" -k "${kver:-0}" -b "${base:-/}" \
	--root-path=none "${small[@]}" -o "$d/fifo" >"$d/log" 2>&1
rc=$?
[ $rc -eq 2 ] && [ -p "$d/fifo" ] && [ "$(list "$d")" = "$(printf '%s\n' dir fifo log tmp)" ]
r=$?
diag <"$d/log"
ok $r "-o FIFO (not a regular file): refused, status 2, the FIFO stays (status $rc)"

# 6: --add SRC:DEST leaving the image
if need_tree 1 "--add destination leaving the image"; then
	d=$work/6
	mkdir -p "$d/a/b/tmp"
	# the staging tree is $d/a/b/tmp/asyncprobe-mkinitramfs.XXXXXX: three
	# ".." from its root reach $d/a
	TMPDIR=$d/a/b/tmp gen "${small[@]}" -o "$d/img" --add /etc/hostname:/../../../escaped >"$d/log" 2>&1
	rc=$?
	[ $rc -eq 100 ] && [ ! -e "$d/a/escaped" ] && [ ! -e "$d/img" ] && [ -z "$(list "$d/a/b/tmp")" ] &&
		grep -q 'leaves the image' "$d/log"
	r=$?
	{ cat "$d/log"; [ $r -eq 0 ] || find "$d"; } | diag
	ok $r "--add SRC:/../../../escaped: refused before any work, status 100, nothing written (status $rc)"
fi

# 7, 8: --root-fstype
if need_tree 2 "--root-fstype checked against the kernel"; then
	d=$work/7
	mkdir -p "$d/tmp"
	TMPDIR=$d/tmp gen "${small[@]}" -o "$d/img" --root-fstype=bogusfs >"$d/log" 2>&1
	rc=$?
	[ $rc -eq 2 ] && [ ! -e "$d/img" ] && [ -z "$(list "$d/tmp")" ] && grep -q bogusfs "$d/log"
	r=$?
	diag <"$d/log"
	ok $r "--root-fstype=bogusfs (no such file system in $kver): refused before any work, status 2 (status $rc)"

	# ext3 is the fs-ext3 alias of the ext4 module; a built-in one from
	# modules.builtin.modinfo when the kernel has one; none
	types=(ext3 none)
	m=$base/lib/modules/$kver
	bi=$(tr '\0' '\n' <"$m/modules.builtin.modinfo" 2>/dev/null | sed -n 's/^[^.]*\.alias=fs-\([a-z0-9_.-]*\)$/\1/p' | head -n 1)
	[ -z "$bi" ] || types+=("$bi")
	bad=0
	for t in "${types[@]}"; do
		gen "${small[@]}" -o "$d/img-$t" --root-fstype="$t" >"$d/log-$t" 2>&1
		rc=$?
		mkdir "$d/x-$t"
		(cd "$d/x-$t" && cpio -id --quiet 2>/dev/null <"$d/img-$t")
		got=$(cat "$d/x-$t/etc/asyncprobe/root-fstype" 2>/dev/null || echo none)
		if [ $rc -ne 0 ] || [ "$got" != "$t" ]; then
			{ echo "--root-fstype=$t: status $rc, recorded '$got'"; cat "$d/log-$t"; } | diag
			bad=1
		fi
	done
	tl=${types[*]}
	ok $bad "--root-fstype=${tl// /, } (a module's alias, none${bi:+, built in}) accepted and recorded"
fi

# 9-11: a signal during compression
desc() {	# the descendants of PID: "pid comm" lines
	local p
	for p in $(ps -o pid= --ppid "$1" 2>/dev/null); do
		echo "$p $(cat "/proc/$p/comm" 2>/dev/null)"
		desc "$p"
	done
}
alive() { [ -e "/proc/$1" ] && [ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" != Z ]; }
comp=
for c in xz zstd; do command -v "$c" >/dev/null && { comp=$c; break; }; done
for sig in TERM INT HUP; do
	if [ -z "$comp" ]; then
		skip "SIG$sig during compression" "neither xz nor zstd is installed"
		continue
	fi
	need_tree 1 "SIG$sig during compression" || continue
	d=$work/sig-$sig
	mkdir -p "$d/out" "$d/tmp"
	# job control: a background job of a script ignores SIGINT otherwise
	set -m
	# (libtool execs the generator: $! is its PID)
	TMPDIR=$d/tmp "$lt" --mode=execute "$mk" --asyncprobe "$ap" -k "$kver" -b "$base" \
		--root-path=none --compress="$comp" -o "$d/out/img" >"$d/log" 2>&1 &
	pid=$!
	set +m
	cpid=
	for ((i = 0; i < 1200; i++)); do
		cpid=$(desc "$pid" | awk -v c="$comp" '$2 == c { print $1; exit }')
		[ -z "$cpid" ] || break
		alive "$pid" || break
		sleep 0.1
	done
	if [ -z "$cpid" ]; then
		wait "$pid"
		{ echo "$comp never ran"; cat "$d/log"; } | diag
		ok 1 "SIG$sig during compression"
		continue
	fi
	kill "-$sig" "$pid"
	wait "$pid" 2>/dev/null
	rc=$?
	want=$((128 + $(kill -l "$sig")))
	for ((i = 0; i < 50; i++)); do alive "$cpid" || break; sleep 0.1; done
	bad=0
	[ $rc -eq $want ] || { note "status $rc, not $want"; bad=1; }
	[ -z "$(list "$d/out")" ] || { note "left in the output directory: $(list "$d/out" | tr '\n' ' ')"; bad=1; }
	[ -z "$(list "$d/tmp")" ] || { note "left in TMPDIR: $(list "$d/tmp" | tr '\n' ' ')"; bad=1; }
	if alive "$cpid"; then
		note "$comp ($cpid) still runs"; bad=1
		kill "$cpid" 2>/dev/null
	fi
	diag <"$d/log"
	ok $bad "SIG$sig during compression ($comp): status $want, no staged image, no work tree, $comp stopped (status $rc)"
done

# 12-14: the output's directory and name
d=$work/12
mkdir -p "$d"
o=(--asyncprobe "$ap" -k "${kver:-0}" -b "${base:-/}" --root-path=none "${small[@]}")
"$lt" --mode=execute "$mk" "${o[@]}" -o "$d/missing/img" >"$d/log" 2>&1
rc=$?
diag <"$d/log"
[ $rc -eq 2 ] && grep -q 'does not exist' "$d/log"
ok $? "-o into a missing directory: status 2, says so (status $rc)"

long=$(printf 'x%.0s' {1..256})
"$lt" --mode=execute "$mk" "${o[@]}" -o "$d/$long" >"$d/log" 2>&1
rc=$?
sed 's/x\{200,\}/x...x/' "$d/log" | diag
[ $rc -eq 2 ] && grep -q '255' "$d/log" && ! grep -qi 'too long$\|line [0-9]' "$d/log" && ! list "$d" | grep -qvx log
ok $? "-o with a 256-byte name: status 2, a message naming the 255-byte limit, no shell error (status $rc)"

deep=$d/$(printf 'a/%.0s' {1..2100})img
"$lt" --mode=execute "$mk" "${o[@]}" -o "$deep" >"$d/log" 2>&1
rc=$?
sed 's|\(a/\)\{10,\}|a/.../|' "$d/log" | diag
[ $rc -eq 2 ] && grep -q 'PATH_MAX' "$d/log" && ! grep -q 'line [0-9]' "$d/log"
ok $? "-o with a path of $((${#deep} + 1)) bytes: status 2, a message naming PATH_MAX (status $rc)"

# 15, 16: ./configure && make && make install with the default prefix
# /usr/local, then the installed generator, without ldconfig
inst_files=(/usr/local/sbin/asyncprobe /usr/local/sbin/asyncprobe-mkinitramfs /usr/local/lib/libasync.so.1
	/usr/local/lib/asyncprobe/libcrypto.so.3 /usr/local/include/async.h)
why=
[ "$(id -u)" -eq 0 ] || why="not root: the test installs into /usr/local"
for f in "${inst_files[@]}"; do
	[ -n "$why" ] || [ ! -e "$f" ] || why="$f exists: asyncprobe is installed in /usr/local already"
done
[ -n "$why" ] || [ -n "$kver" ] || why="no kernel module tree"
# It builds a tree of its own: once, in the default build, is enough.
[ -n "$why" ] || ! ldd "${top_builddir:-.}/src/asyncprobe/asyncprobe" 2>/dev/null | grep -q 'lib[at]san' ||
	why="the build under test uses a sanitizer; the install builds its own tree and runs in the default build"
[ -n "$why" ] || command -v make >/dev/null || why="make is not installed"
[ -n "$why" ] || command -v zstd >/dev/null || why="zstd is not installed"
if [ -n "$why" ]; then
	skip "default-prefix install makes an image, make uninstall leaves /usr/local as it was" "$why"
else
	b=$work/inst
	mkdir -p "$b/build" "$b/elsewhere"
	find /usr/local -xdev | sort >"$b/before"
	installed=0
	uninstall() {
		[ "$installed" = 1 ] || return 0
		make -C "$b/build" uninstall >"$b/uninstall.out" 2>&1
		local st=$?
		# the directories make install created, deepest first
		find /usr/local -xdev | sort >"$b/installed"
		comm -13 "$b/before" "$b/installed" | sort -r | while IFS= read -r p; do
			[ ! -d "$p" ] || [ -L "$p" ] || rmdir "$p" 2>/dev/null
		done
		installed=0
		return $st
	}
	cleanup_install=uninstall
	(
		cd "$b/build" &&
		"$top_srcdir/configure" --with-dracutmoddir="$b/elsewhere/dracut" \
			--with-initramfstoolsdir="$b/elsewhere/initramfs-tools" >configure.out 2>&1 &&
		make -j"${JOBS:-2}" >make.out 2>&1 &&
		{ touch install.started; make install >install.out 2>&1; }
	)
	rc=$?
	[ ! -e "$b/build/install.started" ] || installed=1
	bad=$rc
	if [ $rc -ne 0 ]; then
		tail -n 20 "$b"/build/*.out | diag
	else
		grep -q '^prefix = /usr/local$' "$b/build/Makefile" || { echo "prefix is not /usr/local" | diag; bad=1; }
		# the program links libasync in: it runs without ldconfig
		/usr/local/sbin/asyncprobe --version >/dev/null 2>&1 || {
			echo "the installed asyncprobe does not run without ldconfig: $(/usr/local/sbin/asyncprobe --version 2>&1 | head -n 1)" | diag
			bad=1
		}
		(cd / && env -u ASYNCPROBE_NOCRYPTO /usr/local/sbin/asyncprobe-mkinitramfs \
			-o "$b/img" -k "$kver" -b "$base" --root-path=none) >"$b/mk.out" 2>&1
		rc=$?
		diag <"$b/mk.out"
		[ $rc -eq 0 ] || bad=1
		mkdir "$b/x"
		(cd "$b/x" && zstd -dc "$b/img" 2>/dev/null | cpio -id --quiet 2>/dev/null)
		[ -x "$b/x/init" ] || { echo "no /init in the image" | diag; bad=1; }
		buildid() { readelf -n "$1" 2>/dev/null | sed -n 's/.*Build ID: //p'; }
		if command -v readelf >/dev/null; then
			id_init=$(buildid "$b/x/init")
			if [ -z "$id_init" ] || [ "$id_init" != "$(buildid /usr/local/sbin/asyncprobe)" ]; then
				echo "/init is not /usr/local/sbin/asyncprobe" | diag
				bad=1
			fi
		fi
	fi
	ok $bad "./configure && make && make install (prefix /usr/local, no ldconfig), then asyncprobe-mkinitramfs -o IMAGE -k $kver: status $rc; the installed asyncprobe runs without ldconfig and is the image's /init"
	uninstall
	rc=$?
	cleanup_install=:
	find /usr/local -xdev | sort >"$b/after"
	changed=$(diff "$b/before" "$b/after")
	[ -z "$changed" ] || echo "$changed" | diag
	[ $rc -eq 0 ] && [ -z "$changed" ]
	ok $? "make uninstall (and the directories make install made removed) leaves /usr/local as it was"
fi
echo "1..$n"
exit 0
