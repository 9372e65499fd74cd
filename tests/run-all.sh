#!/usr/bin/env bash
# The whole test suite, from a fresh Debian 12 machine, as root:
#   bash tests/run-all.sh
# installs the build and test dependencies, builds, runs the unit tests, the
# sanitizer builds, make distcheck and the QEMU boot tests, and ends with one
# line "N passed, N failed, N skipped" over every test executed.
#
# Environment: SKIP_DEPS=1 (do not apt-get), SKIP_VM=1 (no QEMU tests, counted
# as skipped), JOBS (parallel make jobs, default: number of CPUs).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
JOBS=${JOBS:-$(nproc)}
out="$top/_ci"
mkdir -p "$out"

passed=0 failed=0 skipped=0
note() { printf '\n==== %s\n' "$*"; }

# Add the counts of an automake test-suite.log (TAP points count one each).
count_log() {
	local log=$1 name=$2 p f s
	if [ ! -f "$log" ]; then
		echo "$name: no test log ($log): counted as one failure"
		failed=$((failed + 1))
		return
	fi
	p=$(sed -n 's/^# PASS: *//p' "$log"); p=${p:-0}
	s=$(sed -n 's/^# SKIP: *//p' "$log"); s=${s:-0}
	f=$(( $(sed -n 's/^# FAIL: *//p' "$log") + $(sed -n 's/^# ERROR: *//p' "$log") + $(sed -n 's/^# XPASS: *//p' "$log") ))
	p=$((p + $(sed -n 's/^# XFAIL: *//p' "$log")))
	echo "$name: $p passed, $f failed, $s skipped"
	# Show why things were skipped or failed.
	grep -hE '^(SKIP|FAIL|ERROR|XPASS):' "$log" | head -50 || true
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
		echo "FAIL: $name (last lines of $out/$name.log follow)"
		tail -40 "$out/$name.log"
		failed=$((failed + 1))
		return 1
	fi
}

if [ "${SKIP_DEPS:-0}" != 1 ]; then
	note "installing dependencies"
	bash tests/install-deps.sh || { echo "dependency installation failed"; echo "0 passed, 1 failed"; exit 1; }
fi

build_tree() {
	# build_tree DIR [configure args...]
	local dir=$1; shift
	rm -rf "$dir" && mkdir -p "$dir" && cd "$dir" &&
		"$top/configure" "$@" && make -j"$JOBS" && cd "$top"
}

note "bootstrap"
./autogen.sh >"$out/autogen.log" 2>&1 || { tail -20 "$out/autogen.log"; echo "0 passed, 1 failed"; exit 1; }

# 1. The default build and the unit tests.
if step build build_tree "$top/_build"; then
	note "make check"
	(cd _build && make -j"$JOBS" check) >"$out/check.log" 2>&1
	count_log _build/test-suite.log "unit tests"
fi

# 2. ThreadSanitizer and ASan+UBSan builds of the unit suite.
for san in thread address,undefined; do
	tag=${san%%,*}
	dir="$top/_build-$tag"
	flags="-O1 -g -fsanitize=$san -fno-omit-frame-pointer"
	if ! echo 'int main(void){return 0;}' | gcc $flags -x c - -o /tmp/san-probe.$$ 2>/dev/null; then
		note "sanitizer $san"; echo "SKIP: the compiler cannot build with -fsanitize=$san"
		skipped=$((skipped + 1)); continue
	fi
	rm -f /tmp/san-probe.$$
	if step "build-$tag" build_tree "$dir" CFLAGS="$flags" LDFLAGS="-fsanitize=$san" --disable-shared; then
		note "make check under -fsanitize=$san"
		(cd "$dir" && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$top/tests/tsan.supp" \
			ASAN_OPTIONS="detect_leaks=1" UBSAN_OPTIONS="halt_on_error=1 print_stacktrace=1" \
			make -j"$JOBS" check) >"$out/check-$tag.log" 2>&1
		count_log "$dir/test-suite.log" "unit tests ($san)"
	fi
done

# 3. libFuzzer targets (clang), about a minute each: the kernel command
#    line parser, the link-name encoder, and blkid results to link names.
if command -v clang >/dev/null && step build-fuzz build_tree "$top/_build-fuzz" CC=clang --enable-fuzz --disable-shared; then
	for t in cmdline encode names; do
		step "fuzz-$t" env top_builddir="$top/_build-fuzz" top_srcdir="$top" \
			bash tests/fuzz/run-fuzz.sh "${FUZZ_SECONDS:-60}" "$t"
		grep -hE 'Done [0-9]+ runs' "$out/fuzz-$t.log" || true
	done
fi

# 4. Valgrind memcheck over a dry run of the program: no leak, no error.
if command -v valgrind >/dev/null && [ -x _build/src/asyncprobe/asyncprobe ]; then
	step valgrind-dry-run sh -c "cd '$top/_build' && ./libtool --mode=execute valgrind -q \
		--leak-check=full --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect \
		--error-exitcode=99 ./src/asyncprobe/asyncprobe --dry-run --fastboot -v --no-progress \
		--log-target=stderr --json=/dev/null; test \$? -ne 99"
fi

# 5. The release tarball builds and passes its own tests.
step distcheck sh -c "cd '$top/_build' && make -j'$JOBS' distcheck"

# 6. QEMU boot tests.
if [ "${SKIP_VM:-0}" = 1 ]; then
	note "VM tests"; echo "SKIP: VM tests (SKIP_VM=1)"; skipped=$((skipped + 1))
elif [ -f _build/Makefile ]; then
	note "VM tests"
	(cd _build && make check-vm) >"$out/check-vm.log" 2>&1
	count_log _build/tests/vm/test-suite.log "VM tests"
fi

echo
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
