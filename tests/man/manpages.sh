#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The manual pages in man/:
#  - every page formats with no groff warning (groff -man -ww -z), and
#    holds no control character and no alternating-font macro (.BR, .BI,
#    .IR, ...) with a single argument, which is a .B or .I in disguise;
#  - every long option that the built programs' --help lists is in the
#    SYNOPSIS of the program's page, as the page renders it.
set -u
: "${top_srcdir:?}" "${top_builddir:?}"
mandir=$top_srcdir/man

# program (built), its page
progs="src/asyncprobe/asyncprobe:asyncprobe.8
src/asyncprobe-mkinitramfs:asyncprobe-mkinitramfs.8"

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

have_groff=no
command -v groff >/dev/null 2>&1 && have_groff=yes
nogroff="groff is not installed (Debian: groff-base)"

# The long options of each program's --help: the option column only (an
# indented line that starts with "-x, --name" or "--name"), not the options
# the descriptions mention.
npoints=0
for entry in $progs; do
	prog=${entry%%:*}
	page=${entry#*:}
	name=${prog##*/}
	: >"$tmp/$name.opts"
	if [ -x "$top_builddir/$prog" ] &&
		"$top_builddir/$prog" --help >"$tmp/$name.help" 2>&1; then
		sed -n 's/^ \{1,8\}\(-[A-Za-z0-9], \)\{0,1\}\(--[A-Za-z0-9][-A-Za-z0-9]*\).*/\2/p' \
			"$tmp/$name.help" | sort -u >"$tmp/$name.opts"
	fi
	npoints=$((npoints + 1 + $(wc -l <"$tmp/$name.opts")))
done
pages=$(cd "$mandir" && ls -- *.[1-9])
npages=$(printf '%s\n' "$pages" | wc -l)

echo "1..$((npages * 2 + npoints))"
n=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
notok() { n=$((n + 1)); echo "not ok $n - $*"; }

# ".so man3/async.3" in the alias pages is relative to the top of a manual
# tree: give groff one in which every section is man/.
mkdir "$tmp/tree"
for s in 1 3 5 7 8; do
	ln -s "$mandir" "$tmp/tree/man$s"
done

for page in $pages; do
	if [ "$have_groff" = no ]; then
		ok "man/$page: groff -man -ww -z # SKIP $nogroff"
	elif out=$(cd "$tmp/tree" && groff -man -ww -z "$mandir/$page" 2>&1) && [ -z "$out" ]; then
		ok "man/$page: groff -man -ww -z, no warning"
	else
		notok "man/$page: groff -man -ww -z, no warning"
		printf '%s\n' "$out" | sed 's/^/# /'
	fi
	bad=$(LC_ALL=C grep -n "$(printf '[\001-\010\013-\037\177]')" "$mandir/$page" | cut -d: -f1 |
		sed 's/^/line /; s/$/: a control character (a mangled \\f escape?)/')
	one=$(grep -nE '^\.(BI|BR|IB|IR|RB|RI)[[:space:]]*("[^"]*"|[^"[:space:]]+)?[[:space:]]*$' \
		"$mandir/$page" | sed 's/^\([0-9]*\):/line \1: one argument: /')
	if [ -z "$bad$one" ]; then
		ok "man/$page: no control character, no one-argument .BR/.BI/.IR/.IB/.RB/.RI"
	else
		notok "man/$page: no control character, no one-argument .BR/.BI/.IR/.IB/.RB/.RI"
		printf '%s\n' "$bad" "$one" | sed '/^$/d; s/^/# /'
	fi
done

for entry in $progs; do
	prog=${entry%%:*}
	page=${entry#*:}
	name=${prog##*/}
	if [ ! -s "$tmp/$name.opts" ]; then
		notok "$prog --help lists long options"
		if [ -x "$top_builddir/$prog" ]; then
			sed 's/^/# /' "$tmp/$name.help"
		else
			echo "# $top_builddir/$prog is not built"
		fi
		continue
	fi
	ok "$prog --help lists $(wc -l <"$tmp/$name.opts") long options"
	# the SYNOPSIS as it renders: one line per .br, none hyphenated
	synopsis=
	if [ "$have_groff" = yes ]; then
		synopsis=$(groff -man -Tascii -P-c -P-b -P-u -rLL=2000n "$mandir/$page" 2>/dev/null |
			awk '/^SYNOPSIS/ { s = 1; next } s && /^[^ \t]/ { exit } s')
	fi
	while read -r opt; do
		what="man/$page SYNOPSIS has $opt (from $name --help)"
		if [ "$have_groff" = no ]; then
			ok "$what # SKIP $nogroff"
		elif printf '%s\n' "$synopsis" | grep -qE -- "(^|[^-A-Za-z0-9])$opt([^-A-Za-z0-9]|\$)"; then
			ok "$what"
		else
			notok "$what"
		fi
	done <"$tmp/$name.opts"
done
