#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""JSON lines on stdin (the benchmarks' output) as plain-text tables,
one per benchmark and kind (per-run lines, then the summary line)."""
import json
import sys

groups = {}
for line in sys.stdin:
    line = line.strip()
    if not line.startswith("{"):
        continue
    o = json.loads(line)
    key = (o.get("bench", "?"), bool(o.get("summary")))
    groups.setdefault(key, []).append(o)

for (bench, summary), rows in groups.items():
    cols = []
    for r in rows:
        cols += [k for k in r if k not in cols and k not in ("bench", "summary", "run")]
    cells = [[json.dumps(r[c]).strip("\"") if c in r else "" for c in cols] for r in rows]
    width = [max(len(c), *(len(x[i]) for x in cells)) for i, c in enumerate(cols)]
    print(f"{bench}{' (summary)' if summary else ''}")
    print("  " + "  ".join(c.ljust(w) for c, w in zip(cols, width)))
    for x in cells:
        print("  " + "  ".join(v.ljust(w) for v, w in zip(x, width)))
