#!/bin/sh
# The shared library exports exactly the symbols of libasync.sym.
echo "1..1"
so="$top_builddir/.libs/libasync.so"
if [ ! -e "$so" ]; then
	echo "ok 1 - # SKIP no shared library built"
	exit 0
fi
want=$(sed -n 's/^[[:space:]]*\([a-z_]*\);$/\1/p' "$top_srcdir/src/libasync/libasync.sym" | sort)
have=$(nm -D --defined-only "$so" | awk '$2 == "T" || $2 == "D" || $2 == "B" { sub(/@.*/, "", $3); print $3 }' | grep -v '^LIBASYNC_' | sort)
if [ "$want" = "$have" ]; then
	echo "ok 1 - exported symbols match libasync.sym ($(echo "$want" | wc -l))"
else
	echo "not ok 1 - exported symbols differ from libasync.sym"
	diff -u /dev/null /dev/null
	printf '%s\n' "$want" > "${TMPDIR:-/tmp}/want.$$"; printf '%s\n' "$have" | diff -u "${TMPDIR:-/tmp}/want.$$" - | sed 's/^/# /'
	rm -f "${TMPDIR:-/tmp}/want.$$"
fi
