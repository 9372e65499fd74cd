#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Hostile and corrupt media on loop devices (issue 7): gen-images.py writes
# 200+ images (labels of every byte value, "../..", ".", "..", empty and
# invalid UTF-8 labels; broken, overlapping, truncated, self-referencing
# and huge partition tables; seeded bit flips); each batch is attached to
# loop devices (partx -a adds what libblkid parses as partitions, since the
# host kernel has no partition parsers), then asyncprobe probes and links
# them into a private --dev-dir (--include-loop=its own loop devices: the
# batch's, no other program's).  Run from an ASan+UBSan build this is the
# sanitizer check as well.  Asserted per batch:
#   - asyncprobe exits 0 or 1 (no crash, no sanitizer report, no abort);
#   - its --json manifest is valid JSON and lists every loop device and
#     partition of the batch (nothing lost);
#   - nothing exists below the dev dir but disk/, disk/by-*/ and symlinks
#     directly in those, none named "." or "..", each pointing at
#     ../../<a device of the manifest>;
#   - every name the registry refused is in the manifest as "rejected" and
#     in the log as a warning.
# Environment: HOSTILE_BATCH (images per run, default 24), HOSTILE_FUZZ
# (seeded bit-flip images, default 60), HOSTILE_SEED.
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
ap=$top_builddir/src/asyncprobe/asyncprobe
batch=${HOSTILE_BATCH:-24}

if [ "$(id -u)" -ne 0 ]; then
	echo "1..0 # SKIP needs root for loop devices"
	exit 0
fi
for t in losetup partx python3; do
	command -v "$t" >/dev/null || { echo "1..0 # SKIP $t is not installed"; exit 0; }
done
tmp=$(mktemp -d /tmp/ap-hostile.XXXXXX)
loops=()
cleanup() {
	local l
	for l in "${loops[@]}"; do
		partx -d "$l" 2>/dev/null
		losetup -d "$l" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
if ! truncate -s 1M "$tmp/probe.img" || ! probe_loop=$(losetup -f --show "$tmp/probe.img" 2>&1); then
	echo "1..0 # SKIP cannot create loop devices here: $probe_loop"
	exit 0
fi
losetup -d "$probe_loop"

python3 "$top_srcdir/tests/hostile/gen-images.py" "$tmp/img" --seed "${HOSTILE_SEED:-1}" \
	--fuzz "${HOSTILE_FUZZ:-60}" >"$tmp/gen.log" 2>&1 || {
	echo "1..1"; echo "not ok 1 - image generator failed"; sed 's/^/# /' "$tmp/gen.log"; exit 1; }
mapfile -t images < <(cut -d' ' -f1 "$tmp/img/MANIFEST")
nimg=${#images[@]}
nbatch=$(( (nimg + batch - 1) / batch ))
echo "1..$((nbatch * 4 + 2))"
n=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi; }
n=$((n + 1)); echo "ok $n - generated $nimg images ($(grep -c ' label ' "$tmp/img/MANIFEST") label, $(grep -c ' table ' "$tmp/img/MANIFEST") table, $(grep -c ' trunc ' "$tmp/img/MANIFEST") truncated, $(grep -c ' fuzz ' "$tmp/img/MANIFEST") fuzzed)"

total_rejected=0 total_devices=0 total_links=0
for ((b = 0; b < nbatch; b++)); do
	loops=()
	declare -A img_of=()
	for img in "${images[@]:b*batch:batch}"; do
		l=$(losetup -f --show "$tmp/img/$img" 2>/dev/null) || continue
		loops+=("$l")
		img_of[${l#/dev/}]=$img
		partx -a "$l" 2>/dev/null # broken tables may add nothing, or fail
	done
	dev="$tmp/dev$b"
	mkdir -p "$dev"
	# this batch's loop devices, no other: loop3,loop7,...
	ours=$(IFS=,; echo "${loops[*]#/dev/}")
	ASAN_OPTIONS="exitcode=99:detect_leaks=1:abort_on_error=0" \
	UBSAN_OPTIONS="halt_on_error=1:exitcode=98:print_stacktrace=1" \
		"$ap" --include-loop="$ours" --no-modules --no-progress --log-target=stderr \
		--dev-dir="$dev" --json="$tmp/m$b.json" >"$tmp/log$b" 2>&1
	rc=$?
	first=${images[b*batch]} last=${images[$(( (b + 1) * batch - 1 < nimg - 1 ? (b + 1) * batch - 1 : nimg - 1 ))]}
	ok $(( rc == 0 || rc == 1 ? 0 : 1 )) "batch $b ($first .. $last): asyncprobe exited $rc"
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
		grep -E 'ERROR|runtime error|SUMMARY|Sanitizer' "$tmp/log$b" | head -20 | sed 's/^/# /'
	fi
	# Check the manifest and the tree with python3 (json, os).
	python3 - "$tmp/m$b.json" "$dev" "$tmp/log$b" "${loops[@]}" >"$tmp/check$b" 2>&1 <<'EOF'
import json, os, sys
manifest, dev, logf, loops = sys.argv[1], sys.argv[2], sys.argv[3], [l[5:] for l in sys.argv[4:]]
out = {"lost": [], "bad": [], "rejected": 0, "unlogged": [], "devices": 0, "links": 0}
try:
    m = json.load(open(manifest, encoding="utf-8"))
except Exception as e:
    print("INVALID", e); sys.exit(0)
names = {d["name"] for d in m.get("devices", [])}
out["devices"] = len(names)
# every loop device and partition the kernel has must be in the manifest
for l in loops:
    sysd = "/sys/block/" + l
    if open(sysd + "/size").read().strip() == "0":
        continue  # an empty device (image under one sector) is skipped like an empty drive
    want = [l] + sorted(p for p in os.listdir(sysd) if p.startswith(l + "p"))
    out["lost"] += [w for w in want if w not in names]
# the tree: disk/, disk/by-*/, symlinks directly in those
for root, dirs, files in os.walk(dev, followlinks=False):
    rel = os.path.relpath(root, dev)
    parts = [] if rel == "." else rel.split(os.sep)
    for d in dirs:
        p = os.path.join(root, d)
        if os.path.islink(p):
            files.append(d)
            continue
        ok = (parts == [] and d == "disk") or (parts == ["disk"] and d.startswith("by-"))
        # udev keeps a '/' surviving in a by-id value as a subdirectory
        ok = ok or (len(parts) >= 2 and parts[:2] == ["disk", "by-id"])
        if not ok:
            out["bad"].append("directory " + os.path.join(rel, d))
    for f in files:
        p = os.path.join(root, f)
        if not os.path.islink(p):
            out["bad"].append("non-link " + os.path.join(rel, f))
            continue
        out["links"] += 1
        if len(parts) < 2 or parts[0] != "disk" or not parts[1].startswith("by-") or f in (".", ".."):
            out["bad"].append("link outside disk/by-*/: " + os.path.join(rel, f))
        t = os.readlink(p)
        depth = len(parts)
        if not t.startswith("../" * depth) or t[3 * depth:] not in names and t[3 * depth:] != "vda":
            out["bad"].append("link %s -> %s: not ../../<probed device>" % (os.path.join(rel, f), t))
raw = open(logf, "rb").read()
# labels and model strings reach the log escaped: no control byte but newline
ctl = sum(1 for c in raw if (c < 0x20 and c != 0x0a) or c == 0x7f)
if ctl:
    out["bad"].append("%d control bytes in the log" % ctl)
log = raw.decode("utf-8", "replace")
for ev in m.get("links", []):
    if ev.get("action") == "rejected":
        out["rejected"] += 1
        if (ev["target"] + ": refusing") not in log:
            out["unlogged"].append(ev["target"])
print(json.dumps(out))
EOF
	res=$(tail -1 "$tmp/check$b")
	if [[ $res != "{"* ]]; then
		ok 1 "batch $b: manifest is valid JSON ($res)"
		ok 1 "batch $b: no device lost"; ok 1 "batch $b: no link outside disk/by-*/"
		continue
	fi
	ok 0 "batch $b: manifest is valid JSON"
	lost=$(python3 -c 'import json,sys; print(" ".join(json.loads(sys.argv[1])["lost"]))' "$res")
	ok $([ -z "$lost" ] && echo 0 || echo 1) "batch $b: every loop device and partition is in the manifest${lost:+ (lost: $lost)}"
	bad=$(python3 -c 'import json,sys; print("; ".join(json.loads(sys.argv[1])["bad"][:5]))' "$res")
	unlogged=$(python3 -c 'import json,sys; print(" ".join(json.loads(sys.argv[1])["unlogged"]))' "$res")
	ok $([ -z "$bad$unlogged" ] && echo 0 || echo 1) "batch $b: nothing outside disk/by-*/, every refused name logged, no control byte in the log${bad:+ ($bad)}${unlogged:+ (unlogged: $unlogged)}"
	read -r rj nd nl < <(python3 -c 'import json,sys; r=json.loads(sys.argv[1]); print(r["rejected"], r["devices"], r["links"])' "$res")
	total_rejected=$((total_rejected + rj)); total_devices=$((total_devices + nd)); total_links=$((total_links + nl))
	for l in "${loops[@]}"; do partx -d "$l" 2>/dev/null; losetup -d "$l" 2>/dev/null; done
	loops=()
	unset img_of
done
# "." and ".." as FAT, ext2 and GPT names: six names that must be refused.
ok $([ "$total_rejected" -ge 6 ] && echo 0 || echo 1) "the '.' and '..' labels were refused ($total_rejected refusals, at least 6 expected)"
echo "# $nimg images, $total_devices devices probed, $total_links links created, $total_rejected unsafe names refused"
