#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Line coverage of src/ by the host tests, from a build tree configured with
# CFLAGS='--coverage -O0 -g' LDFLAGS=--coverage after its "make check"
# (tests/run-all.sh does both, in _build-coverage):
#
#   bash tests/coverage.sh BUILDDIR [OUTDIR]
#
# Prints the lines, lines run and percentage of every file of src/ (gcovr,
# Debian package gcovr), of each folder (src/libasync, each
# src/asyncprobe/<layer>/, src/asyncprobe/cli.c, src/initramfs/nocrypto)
# and the total; writes coverage.txt (gcovr's report, with the lines
# missed) and coverage.json into OUTDIR (default BUILDDIR).
#
# Exits 1 when the total is below the floor (FLOOR below, a whole percent
# no lower than the measured total rounded down), when a file is below 50%
# and not on tests/coverage-vm-only.txt (the files only a QEMU boot
# reaches, each with the VM test that runs it and why), when a file of src/
# has no coverage data at all (not built with --coverage), or when the list
# names a file that does not exist or lacks its VM test or reason.
set -u
FLOOR=76        # % of src/'s lines; measured 76.6% on 2026-12-08 (7412 of 9681)
FILE_MIN=50     # % of a file's lines, unless it is on the VM-only list

top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: coverage.sh BUILDDIR [OUTDIR]}
build=$(cd "$build" && pwd) || exit 1
outdir=${2:-$build}
mkdir -p "$outdir" || exit 1
list=$top/tests/coverage-vm-only.txt

command -v gcovr >/dev/null || { echo "coverage: gcovr is not installed (Debian: gcovr)"; exit 1; }
[ -n "$(find "$build/src" -name '*.gcno' -print -quit)" ] ||
	{ echo "coverage: no .gcno files in $build/src: not a --coverage build"; exit 1; }
# configure's test programs leave conftest .gcno/.gcda files behind
rm -f "$build"/*conftest*.gc*

# gcovr resolves the sources against the root; relative filters are
# relative to the working directory, here the source tree
(cd "$top" && gcovr -r . --filter 'src/' -j2 --print-summary \
	--txt "$outdir/coverage.txt" --json-summary "$outdir/coverage.json" "$build") \
	>"$outdir/gcovr.log" 2>&1 || {
	echo "coverage: gcovr failed:"
	tail -20 "$outdir/gcovr.log"
	exit 1
}

python3 - "$outdir/coverage.json" "$list" "$top" "$FLOOR" "$FILE_MIN" <<'PY'
import json, os, sys

summary, listfile, top, floor, file_min = sys.argv[1:]
floor, file_min = float(floor), float(file_min)
files = {f["filename"]: (f["line_covered"], f["line_total"])
         for f in json.load(open(summary))["files"]}
bad = []

vm_only = {}
for n, line in enumerate(open(listfile), 1):
    line = line.strip()
    if not line or line.startswith("#"):
        continue
    parts = line.split(None, 2)
    if len(parts) < 3:
        bad.append(f"{listfile}:{n}: want PATH VM-TEST WHY: {line}")
        continue
    path, test, why = parts
    if not os.path.isfile(os.path.join(top, path)):
        bad.append(f"{listfile}:{n}: {path} does not exist")
    if not os.path.isfile(os.path.join(top, test)):
        bad.append(f"{listfile}:{n}: its VM test {test} does not exist")
    vm_only[path] = test

# every C file of src/ has data: one not built with --coverage (or not
# built at all) would otherwise drop out of the total unseen
for d, _, names in os.walk(os.path.join(top, "src")):
    for name in names:
        if name.endswith(".c"):
            path = os.path.relpath(os.path.join(d, name), top)
            if path not in files:
                bad.append(f"{path}: no coverage data (not built in this tree?)")

def pct(c, t):
    return 100.0 * c / t if t else 100.0

def folder(path):
    if path.startswith("src/asyncprobe/") and path.count("/") == 2:
        return path                                  # cli.c
    return os.path.dirname(path)

print(f"{'file':<44} {'lines':>6} {'run':>6} {'cover':>7}")
folders = {}
for path in sorted(files):
    c, t = files[path]
    fc = folders.setdefault(folder(path), [0, 0])
    fc[0] += c
    fc[1] += t
    p = pct(c, t)
    note = ""
    if p < file_min:
        if path in vm_only:
            note = f"  below {file_min:.0f}%, VM only: {vm_only[path]}"
        else:
            note = f"  below {file_min:.0f}% and not on tests/coverage-vm-only.txt"
            bad.append(f"{path}: {p:.1f}% of its lines, below {file_min:.0f}%, and not on the VM-only list")
    elif path in vm_only:
        note = f"  on the VM-only list, but {file_min:.0f}% or more now: it can leave the list"
    print(f"{path:<44} {t:>6} {c:>6} {p:>6.1f}%{note}")

print()
print(f"{'folder':<44} {'lines':>6} {'run':>6} {'cover':>7}")
for d in sorted(folders):
    c, t = folders[d]
    print(f"{d + ('' if d.endswith('.c') else '/'):<44} {t:>6} {c:>6} {pct(c, t):>6.1f}%")
c = sum(v[0] for v in files.values())
t = sum(v[1] for v in files.values())
total = pct(c, t)
print(f"{'total (src/)':<44} {t:>6} {c:>6} {total:>6.1f}%")
print()
if total < floor:
    bad.append(f"total {total:.1f}% is below the floor of {floor:.0f}% (tests/coverage.sh)")
if bad:
    print("FAIL: coverage:")
    for b in bad:
        print("  " + b)
    sys.exit(1)
print(f"PASS: coverage: total {total:.1f}% (floor {floor:.0f}%), every file at {file_min:.0f}% or more "
      f"but the {len(vm_only)} VM-only ones (tests/coverage-vm-only.txt)")
PY
