#!/usr/bin/env bash
# The whole test suite, from a fresh Debian 12 machine, as root:
#   bash tests/run-all.sh
# installs the build and test dependencies, builds, runs the unit tests, the
# sanitizer builds, make distcheck and the QEMU boot tests, and ends with one
# line "N passed, N failed, N skipped" over every test executed.
#
# Environment: SKIP_DEPS=1 (do not apt-get), SKIP_VM=1 (no QEMU tests, counted
# as skipped; refused under CI=true, a failure), JOBS (parallel make jobs,
# default: number of CPUs), CI=true (set by CI: a required component missing
# is a failure, not a skip).
#
# The run fails when anything fails, and also when the tests skipped are not
# exactly the README's list of expected skips (its "Expected skips"): a skip
# is for a tool or resource that is genuinely absent, and on a machine where
# tests/install-deps.sh ran, nothing but those should be.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
JOBS=${JOBS:-$(nproc)}
out="$top/_ci"
mkdir -p "$out"
# The VM tests copy the console of a failed boot to $AP_CI_OUT/vm-consoles
# (tests/vm/lib.sh): _ci outlives the build trees.
export AP_CI_OUT="$out"
rm -rf "$out/vm-consoles"

passed=0 failed=0 skipped=0
skips="$out/skips.txt"      # one line per skip: "<suite>: <test>"
: >"$skips"
note() { printf '\n==== %s\n' "$*"; }

# A step of this script that cannot run: a failure under CI=true (.ci/run
# installs everything), a skip elsewhere; either way it is named.
missing() {
	local id=$1 why=$2
	if [ "${CI:-}" = true ]; then
		echo "FAIL: $id: $why (required on CI: tests/install-deps.sh installs it)"
		failed=$((failed + 1))
	else
		echo "SKIP: $id: $why"
		skipped=$((skipped + 1))
		echo "run-all: $id" >>"$skips"
	fi
}

# num WHAT LOG: the "# WHAT: N" figure of a test-suite.log, 0 when absent.
num() {
	local v
	v=$(sed -n "s/^# $1: *\([0-9]*\).*/\1/p" "$2" | head -1)
	echo "${v:-0}"
}

# Add the counts of an automake test-suite.log (TAP points count one each).
count_log() {
	local log=$1 name=$2 suite=$3 p f s
	if [ ! -f "$log" ]; then
		echo "$name: no test log ($log): counted as one failure"
		failed=$((failed + 1))
		return
	fi
	p=$(num PASS "$log"); s=$(num SKIP "$log")
	f=$(( $(num FAIL "$log") + $(num ERROR "$log") + $(num XPASS "$log") ))
	p=$((p + $(num XFAIL "$log")))
	echo "$name: $p passed, $f failed, $s skipped"
	# Show why things were skipped or failed.
	grep -hE '^(SKIP|FAIL|ERROR|XPASS): [^ ]* ' "$log" | head -50 || true
	# What was skipped, for the comparison with the README's list: the
	# driver's result lines "SKIP: <test> <n> ..." or "SKIP: <test> - ...",
	# not the "SKIP: <test>" titles of the logs copied into the suite's.
	sed -n "s/^SKIP: \([^ ]*\) .*/$suite: \1/p" "$log" >>"$skips"
	if [ "$(grep -c '^SKIP: [^ ]* ' "$log")" != "$s" ]; then
		echo "$name: $s skips counted, but $(grep -c '^SKIP: [^ ]* ' "$log") SKIP result lines in $log: counted as one failure"
		f=$((f + 1))
	fi
	passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
}

# A single pass/fail step (a build, distcheck).
step() {
	local name=$1; shift
	note "$name"
	if "$@" >"$out/$name.log" 2>&1; then
		echo "PASS: $name"
		passed=$((passed + 1))
		return 0
	else
		echo "FAIL: $name (its failed tests, then the last lines of $out/$name.log)"
		# a failed test inside the step (distcheck's own make check) first:
		# the tail alone shows only the test-suite summary
		grep -E '^(FAIL|ERROR|not ok|# .*not ok)' "$out/$name.log" | head -20
		tail -30 "$out/$name.log"
		failed=$((failed + 1))
		return 1
	fi
}

# CI runs the QEMU boot tests: SKIP_VM=1 there is refused, one failure,
# said before anything else runs (the VM tests are then left out).
if [ "${SKIP_VM:-0}" = 1 ] && [ "${CI:-}" = true ]; then
	note "SKIP_VM"
	echo "FAIL: SKIP_VM=1 is refused under CI=true: CI runs the QEMU boot tests (counted as one failure)"
	failed=$((failed + 1))
fi

if [ "${SKIP_DEPS:-0}" != 1 ]; then
	note "installing dependencies"
	bash tests/install-deps.sh || { echo "dependency installation failed"; echo "0 passed, 1 failed"; exit 1; }
fi

# build_tree DIR [configure args...]: in a subshell, so a failed build
# never leaves this script inside the failed tree.
build_tree() (
	dir=$1; shift
	rm -rf "$dir" && mkdir -p "$dir" && cd "$dir" &&
		"$top/configure" "$@" && make -j"$JOBS"
)

note "bootstrap"
./autogen.sh >"$out/autogen.log" 2>&1 || { tail -20 "$out/autogen.log"; echo "0 passed, 1 failed"; exit 1; }

# 1. The default build and the unit tests.
if step build build_tree "$top/_build"; then
	note "make check"
	(cd "$top/_build" && make -j"$JOBS" check) >"$out/check.log" 2>&1
	count_log "$top/_build/test-suite.log" "unit tests" unit
fi

# 1b. An in-tree build leaves the checkout as git has it: in a copy of the
#     source tree (its uncommitted changes included), autogen.sh, configure,
#     make and make check's programs (TESTS= runs no test) may change,
#     delete or add no file git sees (.gitignore covers every build
#     product), and neither may make clean; no tracked file is ignored.
#     git works on the copy through a copy of the index, so the checkout's
#     own index is never written.
intree_step() (
	dir="$out/intree"
	gitdir=$(git -C "$top" rev-parse --absolute-git-dir) || exit 1
	index=$(git -C "$top" rev-parse --path-format=absolute --git-path index) || exit 1
	rm -rf "$dir" && mkdir -p "$dir" || exit 1
	tar -C "$top" --exclude=./.git --exclude='./_build*' --exclude=./_ci -cf - . |
		tar -C "$dir" -xf - || exit 1
	cp "$index" "$out/intree.index" || exit 1
	export GIT_DIR="$gitdir" GIT_WORK_TREE="$dir" GIT_INDEX_FILE="$out/intree.index"
	cd "$dir" || exit 1
	# what is ignored goes (a stale in-tree configure of the checkout); what
	# git sees stays, and is what the build is compared with
	git clean -Xdfq || exit 1
	git status --porcelain -uall >"$out/intree-before.txt" || exit 1
	if [ -s "$out/intree-before.txt" ]; then
		echo "uncommitted changes in the checkout, compared with after each stage:"
		cat "$out/intree-before.txt"
	fi
	bad=0
	ignored=$(git ls-files -ci --exclude-standard)
	if [ -n "$ignored" ]; then
		echo "FAIL: tracked files that .gitignore ignores:"
		echo "$ignored"
		bad=1
	fi
	# same TAG WHAT: git status after WHAT as before the build
	same() {
		git status --porcelain -uall >"$out/intree-$1.txt" || return 1
		if ! diff "$out/intree-before.txt" "$out/intree-$1.txt" >"$out/intree-$1.diff"; then
			echo "FAIL: after $2, git status differs (< before, > after; ?? untracked, M changed, D deleted):"
			grep '^[<>]' "$out/intree-$1.diff"
			return 1
		fi
		echo "after $2, git status is as before"
	}
	# the build's output in its own log, so this step's log is the findings
	if ! { ./autogen.sh && ./configure && make -j"$JOBS" && make -j"$JOBS" check TESTS=; } \
		>"$out/intree-build.log" 2>&1; then
		echo "FAIL: the in-tree build failed; the last lines of $out/intree-build.log:"
		tail -30 "$out/intree-build.log"
		exit 1
	fi
	same build "the build" || bad=1
	if ! make clean >>"$out/intree-build.log" 2>&1; then
		echo "FAIL: make clean failed; see $out/intree-build.log"
		exit 1
	fi
	same clean "make clean" || bad=1
	exit $bad
)
if git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
	step intree-clean intree_step
else
	note "intree-clean"; missing intree-clean "$top is not a git checkout"
fi

# 2. ThreadSanitizer and ASan+UBSan builds of the unit suite.
for san in thread address,undefined; do
	tag=${san%%,*}
	dir="$top/_build-$tag"
	flags="-O1 -g -fsanitize=$san -fno-omit-frame-pointer"
	if ! echo 'int main(void){return 0;}' | gcc $flags -x c - -o /tmp/san-probe.$$ 2>/dev/null; then
		note "sanitizer $san"; missing "sanitizer-$tag" "the compiler cannot build with -fsanitize=$san"
		continue
	fi
	rm -f /tmp/san-probe.$$
	if step "build-$tag" build_tree "$dir" CFLAGS="$flags" LDFLAGS="-fsanitize=$san" --disable-shared; then
		note "make check under -fsanitize=$san"
		(cd "$dir" && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$top/tests/tsan.supp" \
			ASAN_OPTIONS="detect_leaks=1" UBSAN_OPTIONS="halt_on_error=1 print_stacktrace=1" \
			make -j"$JOBS" check) >"$out/check-$tag.log" 2>&1
		count_log "$dir/test-suite.log" "unit tests ($san)" "$tag"
	fi
done

# 2b. Line coverage of src/ by the unit tests: a gcov build of its own
#     (shared, as _build), its make check, and tests/coverage.sh's figures
#     per file, per folder and in total.  A failed test there is one
#     failure (its tests are counted once, in _build); the coverage check
#     is one more: the total below tests/coverage.sh's floor, or a file
#     below 50% that tests/coverage-vm-only.txt does not name.
note "coverage"
if ! command -v gcovr >/dev/null; then
	missing coverage "gcovr is not installed (Debian: gcovr)"
elif step build-coverage build_tree "$top/_build-coverage" CFLAGS="--coverage -O0 -g" LDFLAGS=--coverage; then
	step check-coverage sh -c "cd '$top/_build-coverage' && make -j'$JOBS' check"
	note "coverage figures ($out/coverage.txt: the lines not run)"
	if bash "$top/tests/coverage.sh" "$top/_build-coverage" "$out" >"$out/coverage.log" 2>&1; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
	fi
	cat "$out/coverage.log"
fi

# 3. libFuzzer targets (clang), about a minute each: the kernel command
#    line parser, the link-name encoder, and blkid results to link names.
#    Each run is bounded by -max_total_time; timeout is the backstop.
if ! command -v clang >/dev/null; then
	note "libFuzzer"; missing fuzz "clang is not installed (Debian: clang)"
elif step build-fuzz build_tree "$top/_build-fuzz" CC=clang --enable-fuzz --disable-shared; then
	for t in cmdline encode names; do
		step "fuzz-$t" env top_builddir="$top/_build-fuzz" top_srcdir="$top" \
			timeout -k 30 $((${FUZZ_SECONDS:-60} + 600)) \
			bash "$top/tests/fuzz/run-fuzz.sh" "${FUZZ_SECONDS:-60}" "$t"
		grep -hE 'Done [0-9]+ runs' "$out/fuzz-$t.log" || true
	done
fi

# 4. Valgrind memcheck over a dry run of the program: no leak, no error.
#    The exit status must be the one the same dry run has without Valgrind
#    (0, or 1 for a degraded run): 99 is Valgrind's error status, a signal
#    (139) or a failed command is a failure, not a pass.
valgrind_step() (
	dry=(./src/asyncprobe/asyncprobe --dry-run --fastboot -v --no-progress --log-target=stderr
	     --json=/dev/null)
	cd "$top/_build" || exit 1
	"${dry[@]}" 2>/dev/null
	want=$?
	case $want in 0|1) ;; *) echo "the dry run without Valgrind exits $want"; exit 1 ;; esac
	timeout -k 30 1800 ./libtool --mode=execute valgrind -q \
		--leak-check=full --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect \
		--error-exitcode=99 "${dry[@]}"
	got=$?
	if [ "$got" = "$want" ]; then
		echo "exit status $got under Valgrind, as without it"
		exit 0
	fi
	echo "exit status $got under Valgrind, $want without it (99: Valgrind found an error or a leak;" \
		"124: no end within 30 min; above 128: a signal)"
	exit 1
)
if ! command -v valgrind >/dev/null; then
	note "valgrind-dry-run"; missing valgrind-dry-run "valgrind is not installed (Debian: valgrind)"
elif [ ! -x "$top/_build/src/asyncprobe/asyncprobe" ]; then
	note "valgrind-dry-run"; echo "FAIL: valgrind-dry-run: no program to run (the build failed)"
	failed=$((failed + 1))
else
	step valgrind-dry-run valgrind_step
fi

# 5. The release tarball builds and passes its own tests.
step distcheck sh -c "cd '$top/_build' && make -j'$JOBS' distcheck"

# 6. QEMU boot tests.
if [ "${SKIP_VM:-0}" = 1 ] && [ "${CI:-}" = true ]; then
	note "VM tests"; echo "not run: SKIP_VM=1, refused under CI=true (counted as a failure above)"
elif [ "${SKIP_VM:-0}" = 1 ]; then
	note "VM tests"; echo "SKIP: VM tests (SKIP_VM=1)"; skipped=$((skipped + 1))
	echo "run-all: VM tests (SKIP_VM=1)" >>"$skips"
elif [ -f "$top/_build/Makefile" ]; then
	note "VM tests"
	(cd "$top/_build" && make check-vm) >"$out/check-vm.log" 2>&1
	count_log "$top/_build/tests/vm/test-suite.log" "VM tests" vm
	# the failed tests' logs (TAP diagnostics included) outlive the tree
	cp "$top/_build/tests/vm/test-suite.log" "$out/vm-test-suite.log" 2>/dev/null
	# the consoles of failed boots (tests/vm/lib.sh), their ends here too
	for f in "$out"/vm-consoles/*.log; do
		[ -f "$f" ] || continue
		echo "---- console of a failed boot: $f (its last 60 lines)"
		tail -n 60 "$f" | LC_ALL=C sed 's/[\x00-\x08\x0b-\x1f\x7f]//g'
	done
else
	note "VM tests"; echo "FAIL: VM tests: no configured build tree ($top/_build)"
	failed=$((failed + 1))
fi

# 7. The skips against the README's list ("Expected skips"): the lines
#    "- `<suite>: <test>`" between the expected-skips markers, one per skip.
note "expected skips"
expected="$out/skips-expected.txt"
sed -n '/<!-- expected-skips -->/,/<!-- \/expected-skips -->/s/^- `\([^`]*\)`.*/\1/p' \
	"$top/README.md" >"$expected"
[ "${SKIP_VM:-0}" = 1 ] && [ "${CI:-}" != true ] && echo "run-all: VM tests (SKIP_VM=1)" >>"$expected"
if [ ! -s "$expected" ]; then
	echo "FAIL: README.md has no expected-skips list"
	failed=$((failed + 1))
elif diff <(LC_ALL=C sort "$expected") <(LC_ALL=C sort "$skips") >"$out/skips.diff"; then
	echo "PASS: the $(wc -l <"$skips") skips are the README's expected ones"
else
	echo "FAIL: the skips differ from the README's expected list (< expected, > this run):"
	grep '^[<>]' "$out/skips.diff"
	failed=$((failed + 1))
fi

echo
n=$(find "$out/vm-consoles" -name '*.log' 2>/dev/null | wc -l)
[ "$n" -eq 0 ] || echo "consoles of failed VM boots: $n in $out/vm-consoles"
echo "logs: $out; coverage: $out/coverage.txt"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
