#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# configure leaves the cmocka and umockdev unit programs out of TESTS when
# the library is missing.  This test makes that visible: one TAP point per
# library, a SKIP naming the programs that were not built.  tests/run-all.sh
# fails on any skip that is not in the README's expected list, so on CI
# (where tests/install-deps.sh installs both) a missing library fails.
# AP_HAVE_CMOCKA and AP_HAVE_UMOCKDEV come from configure (Makefile.am).
#
# The programs are read from the one place that gates them: the
# "if HAVE_CMOCKA" and "if HAVE_UMOCKDEV" blocks of Makefile.am and the
# fragments it includes, followed like automake does.  When the library was
# found, each of its programs must have been built.
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
top_builddir=${top_builddir:-.}

# The programs that "if" blocks of the build system add (paths from the top
# folder), one a line: the path, then the conditions it is built under.
programs() {
	awk -v top="$top_srcdir" '
	function scan(file,    line, rest, n, w, i, conds, r) {
		while ((r = (getline line < file)) > 0) {
			while (line ~ /\\$/ && (getline rest < file) > 0)
				line = substr(line, 1, length(line) - 1) " " rest
			sub(/#.*/, "", line)
			sub(/^[ \t]+/, "", line)
			n = split(line, w, /[ \t]+/)
			if (w[1] == "include") { sub(/^\$\((top_)?srcdir\)\//, "", w[2]); scan(top "/" w[2]) }
			else if (w[1] == "if") stack[++depth] = w[2]
			else if (w[1] == "else") stack[depth] = (stack[depth] ~ /^!/) ? substr(stack[depth], 2) : "!" stack[depth]
			else if (w[1] == "endif") depth--
			else if (depth > 0 && w[1] ~ /_PROGRAMS$/ && (w[2] == "+=" || w[2] == "=")) {
				conds = stack[1]
				for (i = 2; i <= depth; i++) conds = conds " " stack[i]
				for (i = 3; i <= n; i++) if (w[i] != "" && w[i] !~ /\$/) print w[i], conds
			}
		}
		if (r < 0) { print "components.sh: cannot read " file > "/dev/stderr"; bad = 1 }
		close(file)
	}
	BEGIN { scan(top "/Makefile.am"); exit bad }'
}

# names LIST: the programs' file names, comma-separated
names() { printf '%s\n' $1 | sed 's|.*/||' | paste -sd, - | sed 's/,/, /g'; }

# found COND: whether configure found the library of a condition
found() {
	case $1 in
	HAVE_CMOCKA) [ "${AP_HAVE_CMOCKA:-}" = yes ] ;;
	HAVE_UMOCKDEV) [ "${AP_HAVE_UMOCKDEV:-}" = yes ] ;;
	*) return 2 ;;
	esac
}

if ! all=$(programs); then
	echo "Bail out! cannot read the build system's program lists under $top_srcdir"
	exit 1
fi
echo "1..2"
i=0
for lib in cmocka umockdev; do
	i=$((i + 1))
	case $lib in
	cmocka) cond=HAVE_CMOCKA deb=libcmocka-dev ;;
	umockdev) cond=HAVE_UMOCKDEV deb=libumockdev-dev ;;
	esac
	progs=$(printf '%s\n' "$all" | awk -v c="$cond" '{ for (i = 2; i <= NF; i++) if ($i == c) { print $1; next } }' | sort -u)
	if [ -z "$progs" ]; then
		echo "not ok $i - no program under \"if $cond\" in $top_srcdir/Makefile.am and its includes"
		continue
	fi
	if ! found $cond; then
		echo "ok $i # SKIP $lib not found by configure (Debian: $deb): $(names "$progs") not built"
		continue
	fi
	# built: each program whose every condition holds (test-names needs both)
	absent=
	for p in $progs; do
		expect=true
		for c in $(printf '%s\n' "$all" | awk -v p="$p" '$1 == p { for (i = 2; i <= NF; i++) print $i }'); do
			found "$c" || expect=false
		done
		$expect && [ ! -x "$top_builddir/$p" ] && absent="$absent $p"
	done
	if [ -n "$absent" ]; then
		echo "not ok $i - $lib found by configure, but not built:$absent"
	else
		echo "ok $i - $lib found: $(names "$progs") built"
	fi
done
