#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""plot.py RESULTS.jsonl OUT.svg: the VM benchmarks' per-run figures as an
SVG bar chart (no plotting library needed).  Left: time to root per pair,
udev's initrd against asyncprobe's, generic and made for the host, and the
host boot's floor (s).  Right: time to all links on eight
throttled disks per pair, sequential against fastboot (s)."""
import json
import sys

rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
panels = [
    ("Time to root (uptime at root init, s)", "time-to-root",
     [("udev_s", "udev initrd", "#999"), ("asyncprobe_s", "asyncprobe", "#2a6"),
      ("host_s", "host image", "#6c3"), ("host_floor_s", "floor", "#ddd")], 1),
    ("Fastboot: time to all links, 8 slow disks (s)", "fastboot",
     [("sequential_ms", "sequential", "#999"), ("fastboot_ms", "fastboot", "#26a")], 1000),
]
W, H, PW = 820, 320, 380
out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
       'font-family="sans-serif" font-size="12">',
       f'<rect width="{W}" height="{H}" fill="white"/>']
for p, (title, bench, series, div) in enumerate(panels):
    x0, y0, ph = 20 + p * (PW + 30), 40, 220
    runs = [r for r in rows if r.get("bench") == bench and not r.get("summary")]
    vals = [r.get(k) for r in runs for k, _, _ in series if isinstance(r.get(k), (int, float))]
    top = max([v / div for v in vals] + [1.0]) * 1.1
    out.append(f'<text x="{x0}" y="20" font-weight="bold">{title}</text>')
    out.append(f'<line x1="{x0 + 30}" y1="{y0 + ph}" x2="{x0 + PW}" y2="{y0 + ph}" stroke="black"/>')
    if not runs:
        out.append(f'<text x="{x0 + 60}" y="{y0 + ph / 2}">no data</text>')
    slot = (PW - 40) / max(len(runs), 1)
    bw = slot / (len(series) + 1)
    for i, r in enumerate(runs):
        for j, (k, _, colour) in enumerate(series):
            v = r.get(k)
            if not isinstance(v, (int, float)):
                continue
            h = v / div / top * ph
            x = x0 + 40 + i * slot + j * bw
            out.append(f'<rect x="{x:.1f}" y="{y0 + ph - h:.1f}" width="{bw * 0.9:.1f}" '
                       f'height="{h:.1f}" fill="{colour}"/>')
            out.append(f'<text x="{x + bw * 0.45:.1f}" y="{y0 + ph - h - 3:.1f}" '
                       f'text-anchor="middle" font-size="10">{v / div:.2f}</text>')
        label = r.get("ratio", r.get("speedup"))
        out.append(f'<text x="{x0 + 40 + i * slot + bw:.1f}" y="{y0 + ph + 15}" '
                   f'text-anchor="middle">pair {r.get("pair")}: {label}</text>')
    for j, (_, name, colour) in enumerate(series):
        out.append(f'<rect x="{x0 + 40 + j * 85}" y="{y0 + ph + 30}" width="10" height="10" fill="{colour}"/>')
        out.append(f'<text x="{x0 + 55 + j * 85}" y="{y0 + ph + 39}">{name}</text>')
out.append("</svg>")
open(sys.argv[2], "w").write("\n".join(out) + "\n")
