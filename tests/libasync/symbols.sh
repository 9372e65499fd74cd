#!/bin/sh
# The shared library exports exactly the symbols of libasync.sym, and every
# one of them has a manual page: man/NAME.3, installed (man/Makemodule.am)
# and named in async(3)'s NAME section.
echo "1..2"
want=$(sed -n 's/^[[:space:]]*\([a-z_]*\);$/\1/p' "$top_srcdir/src/libasync/libasync.sym" | sort)
so="$top_builddir/.libs/libasync.so"
if [ ! -e "$so" ]; then
	echo "ok 1 - # SKIP no shared library built"
else
	have=$(nm -D --defined-only "$so" | awk '$2 == "T" || $2 == "D" || $2 == "B" { sub(/@.*/, "", $3); print $3 }' | grep -v '^LIBASYNC_' | sort)
	if [ "$want" = "$have" ]; then
		echo "ok 1 - exported symbols match libasync.sym ($(echo "$want" | wc -l))"
	else
		echo "not ok 1 - exported symbols differ from libasync.sym"
		printf '%s\n' "$want" > "${TMPDIR:-/tmp}/want.$$"; printf '%s\n' "$have" | diff -u "${TMPDIR:-/tmp}/want.$$" - | sed 's/^/# /'
		rm -f "${TMPDIR:-/tmp}/want.$$"
	fi
fi

# async(3)'s NAME section: the lines between .SH NAME and the next .SH.
names=$(sed -n '/^\.SH NAME/,/^\.SH /p' "$top_srcdir/man/async.3" | tr ', ' '\n\n')
missing=
for sym in $want; do
	page="$top_srcdir/man/$sym.3"
	if [ ! -f "$page" ] || [ "$(cat "$page")" != ".so man3/async.3" ]; then
		missing="$missing $sym(no man/$sym.3 pointing to async.3)"
	elif ! grep -q "man/$sym\.3\b" "$top_srcdir/man/Makemodule.am"; then
		missing="$missing $sym(not in man/Makemodule.am)"
	elif ! printf '%s\n' "$names" | grep -qx "$sym"; then
		missing="$missing $sym(not in async.3 NAME)"
	fi
done
if [ -z "$missing" ]; then
	echo "ok 2 - every exported function has its page ($(echo "$want" | wc -l))"
else
	echo "not ok 2 - functions without a page:$missing"
fi
