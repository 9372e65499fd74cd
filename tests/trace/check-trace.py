#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Validate the files asyncprobe's tracer writes.

  check-trace.py chrome FILE.json [options]
  check-trace.py svg FILE.svg [options]
  check-trace.py summary FILE.json     one JSON line of figures, then a table

Exit status 0 when the file is valid and meets the expectations, 1 with a
reason on stderr otherwise.

Structural checks, always: the JSON parses, every event has the fields its
phase needs, complete events nest properly per thread, every flow start has
its end, every track has a thread name, call events carry their cookie; the
SVG is well-formed XML, has one bar group per call in strictly increasing
cookie order, drawn top to bottom, each with a bar, a label and a tooltip.

Expectations (--expect FILE), one per line:
  call COOKIE KIND_HEX LABEL_HEX   a call with this label (bytes in hex)
  waits N                          this many sync-wait slices (JSON)
  workers N                        this many distinct worker tracks (JSON)
  mark WHAT_HEX                    a mark with this text
  phase NAME_HEX COUNT             otherData counts this many such phases
Labels are compared with what the writer must make of arbitrary bytes:
invalid UTF-8 bytes become the text \\xNN; in the SVG, control characters
too, and long labels are cut after 72 characters with an ellipsis.
"""
import argparse
import json
import sys
import xml.etree.ElementTree as ET

SVG_NS = "{http://www.w3.org/2000/svg}"
LABEL_MAX = 72
KIND_MAX = 24


def fail(msg):
    print("check-trace: " + msg, file=sys.stderr)
    sys.exit(1)


def units(raw, svg):
    """The characters the writer emits for @raw, one entry per unit."""
    out = []
    i = 0
    while i < len(raw):
        for n in (1, 2, 3, 4):
            try:
                ch = raw[i:i + n].decode("utf-8")
            except UnicodeDecodeError:
                continue
            if svg and (ord(ch) < 0x20 or ord(ch) == 0x7F):
                ch = "\\x%02x" % ord(ch)
            elif svg and ch in "\ufffe\uffff":
                ch = "\ufffd"
            out.append(ch)
            i += n
            break
        else:
            out.append("\\x%02x" % raw[i])
            i += 1
    return out


def shown(raw, svg, limit=None):
    u = units(raw, svg)
    if limit is not None and len(u) > limit:
        return "".join(u[:limit]) + "\u2026"
    return "".join(u)


def read_expect(path):
    exp = {"calls": {}, "waits": None, "workers": None, "marks": [], "phases": {}}
    if not path:
        return exp
    with open(path, encoding="ascii") as f:
        for line in f:
            w = line.split()
            if not w:
                continue
            if w[0] == "call":
                kind = bytes.fromhex(w[2]) if len(w) > 2 and w[2] != "-" else b""
                label = bytes.fromhex(w[3]) if len(w) > 3 and w[3] != "-" else b""
                exp["calls"][int(w[1])] = (kind, label)
            elif w[0] in ("waits", "workers"):
                exp[w[0]] = int(w[1])
            elif w[0] == "mark":
                exp["marks"].append(bytes.fromhex(w[1]))
            elif w[0] == "phase":
                exp["phases"][bytes.fromhex(w[1])] = int(w[2])
            else:
                fail("%s: unknown expectation %r" % (path, w[0]))
    return exp


def ns(us):
    return round(us * 1000)


def check_chrome(path, args, exp):
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (ValueError, UnicodeDecodeError) as e:
        fail("%s: not valid JSON: %s" % (path, e))
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        fail("%s: no traceEvents array" % path)
    events = doc["traceEvents"]
    named = set()
    used = set()
    slices = {}
    flows = {}
    calls = {}
    waits = 0
    marks = []
    for i, e in enumerate(events):
        where = "%s: event %d" % (path, i)
        if not isinstance(e, dict):
            fail(where + ": not an object")
        ph = e.get("ph")
        if ph not in ("X", "M", "i", "s", "f", "C"):
            fail(where + ": unexpected ph %r" % ph)
        if not isinstance(e.get("pid"), int) or not isinstance(e.get("tid"), int):
            fail(where + ": pid and tid must be integers")
        if not isinstance(e.get("name"), str):
            fail(where + ": no name")
        track = (e["pid"], e["tid"])
        if ph == "M":
            if e["name"] == "thread_name":
                if not isinstance(e.get("args", {}).get("name"), str):
                    fail(where + ": thread_name without a name")
                named.add(track)
            continue
        ts = e.get("ts")
        if not isinstance(ts, (int, float)) or ts < 0:
            fail(where + ": bad ts %r" % ts)
        used.add(track)
        if ph == "X":
            dur = e.get("dur")
            if not isinstance(dur, (int, float)) or dur < 0:
                fail(where + ": bad dur %r" % dur)
            slices.setdefault(track, []).append((ns(ts), ns(dur), i))
            cat = e.get("cat")
            a = e.get("args", {})
            if cat == "call":
                c = a.get("cookie")
                if not isinstance(c, int) or c <= 0:
                    fail(where + ": call without a cookie")
                if c in calls:
                    fail(where + ": call c%d twice" % c)
                if not e["name"].startswith("c%d " % c):
                    fail(where + ": call name %r does not start with c%d" % (e["name"], c))
                for k in ("kind", "label", "domain", "inline"):
                    if k not in a:
                        fail(where + ": call c%d without args.%s" % (c, k))
                calls[c] = e
            elif cat == "sync":
                if not e["name"].startswith("sync-wait "):
                    fail(where + ": sync slice named %r" % e["name"])
                waits += 1
            elif cat != "phase":
                fail(where + ": unknown slice category %r" % cat)
        elif ph in ("s", "f"):
            flows.setdefault(e.get("id"), []).append(ph)
        elif ph == "i":
            if e.get("s") not in ("t", "p", "g"):
                fail(where + ": instant without a scope")
            if e.get("cat") == "mark":
                marks.append(e["name"])
        elif ph == "C":
            for k, v in e.get("args", {}).items():
                if not isinstance(v, int) or v < 0:
                    fail(where + ": counter %s = %r" % (k, v))

    for track in sorted(used):
        if track not in named:
            fail("%s: track %r has no thread_name" % (path, track))
    for fid, phs in flows.items():
        if sorted(phs) != ["f", "s"]:
            fail("%s: flow %r has %r" % (path, fid, phs))
    # Complete events on one track must nest: disjoint or contained.
    for track, sl in slices.items():
        sl.sort(key=lambda s: (s[0], -s[1], s[2]))
        stack = []
        for t0, d, i in sl:
            while stack and stack[-1][1] <= t0:
                stack.pop()
            if stack and t0 + d > stack[-1][1]:
                fail("%s: event %d on track %r overlaps event %d without nesting"
                     % (path, i, track, stack[-1][2]))
            stack.append((t0, t0 + d, i))

    other = doc.get("otherData")
    if not isinstance(other, dict) or "calls" not in other or "mode" not in other:
        fail("%s: no otherData summary" % path)
    if args.calls is not None and len(calls) != args.calls:
        fail("%s: %d call events, expected %d" % (path, len(calls), args.calls))
    if args.min_calls is not None and len(calls) < args.min_calls:
        fail("%s: %d call events, expected at least %d" % (path, len(calls), args.min_calls))
    if args.all_inline:
        bad = [c for c, e in calls.items() if not e["args"]["inline"]]
        if bad or not calls:
            fail("%s: calls not inline: %r" % (path, bad[:10]))
    if args.min_workers is not None and other.get("workers", 0) < args.min_workers:
        fail("%s: %r workers, expected at least %d" % (path, other.get("workers"), args.min_workers))

    if exp["calls"]:
        if sorted(calls) != sorted(exp["calls"]):
            fail("%s: calls %r, expected %r" % (path, sorted(calls)[:20], sorted(exp["calls"])[:20]))
        for c, (kind, label) in exp["calls"].items():
            a = calls[c]["args"]
            k, l = shown(kind, False), shown(label, False)
            if a["kind"] != k or a["label"] != l:
                fail("%s: c%d is %r %r, expected %r %r" % (path, c, a["kind"], a["label"], k, l))
            want = "c%d %s" % (c, " ".join(x for x in (k, l) if x) or "call")
            if calls[c]["name"] != want:
                fail("%s: c%d named %r, expected %r" % (path, c, calls[c]["name"], want))
        if other["calls"] != len(exp["calls"]):
            fail("%s: otherData.calls %r, expected %d" % (path, other["calls"], len(exp["calls"])))
    if exp["waits"] is not None and waits != exp["waits"]:
        fail("%s: %d sync-wait slices, expected %d" % (path, waits, exp["waits"]))
    if exp["workers"] is not None:
        w = len({t for (p, t) in used if 0 < t < 100000})
        if w != exp["workers"] or other.get("workers") != exp["workers"]:
            fail("%s: %d worker tracks (otherData %r), expected %d"
                 % (path, w, other.get("workers"), exp["workers"]))
    for name, count in exp["phases"].items():
        got = other.get("phases", {}).get(shown(name, False), {}).get("count")
        if got != count:
            fail("%s: otherData counts %r phases %r, expected %d" % (path, got, shown(name, False), count))
    for m in exp["marks"]:
        if shown(m, False) not in marks:
            fail("%s: mark %r missing (have %r)" % (path, shown(m, False), marks[:10]))
    print("%s: %d events, %d calls, %d waits, %d tracks"
          % (path, len(events), len(calls), waits, len(used)), file=sys.stderr)


def text_of(el):
    return "".join(el.itertext())


def check_svg(path, args, exp):
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, UnicodeDecodeError) as e:
        fail("%s: not well-formed XML: %s" % (path, e))
    if root.tag != SVG_NS + "svg":
        fail("%s: root element is %r" % (path, root.tag))
    width = float(root.get("width", "0"))
    height = float(root.get("height", "0"))
    if width <= 0 or height <= 0:
        fail("%s: no size" % path)
    groups = [g for g in root.iter(SVG_NS + "g") if g.get("class") == "call"]
    cookies = []
    last_y = -1.0
    texts = {}
    for g in groups:
        c = int(g.get("data-cookie", "0"))
        if cookies and c <= cookies[-1]:
            fail("%s: bar c%d after c%d: not in cookie order" % (path, c, cookies[-1]))
        rects = g.findall(SVG_NS + "rect")
        text = g.find(SVG_NS + "text")
        title = g.find(SVG_NS + "title")
        if not rects or text is None or title is None:
            fail("%s: bar c%d lacks a rect, label or tooltip" % (path, c))
        y = min(float(r.get("y")) for r in rects)
        if y <= last_y:
            fail("%s: bar c%d (y %.1f) not below the previous one (y %.1f)" % (path, c, y, last_y))
        last_y = y
        for r in rects:
            x, w, h = float(r.get("x")), float(r.get("width")), float(r.get("height"))
            if w <= 0 or h <= 0 or x < 0 or x + w > width + 0.5 or y + h > height:
                fail("%s: bar c%d has a rect outside the picture or empty" % (path, c))
        t = text_of(text)
        if not t.startswith("c%d " % c):
            fail("%s: bar c%d labelled %r" % (path, c, t))
        texts[c] = (t, text_of(title))
        cookies.append(c)
    if args.calls is not None and len(cookies) != args.calls:
        fail("%s: %d bars, expected %d" % (path, len(cookies), args.calls))
    if args.min_calls is not None and len(cookies) < args.min_calls:
        fail("%s: %d bars, expected at least %d" % (path, len(cookies), args.min_calls))
    if args.min_height is not None and height < args.min_height:
        fail("%s: height %.0f, expected at least %d" % (path, height, args.min_height))
    if exp["calls"]:
        if cookies != sorted(exp["calls"]):
            fail("%s: bars %r, expected %r" % (path, cookies[:20], sorted(exp["calls"])[:20]))
        for c, (kind, label) in exp["calls"].items():
            t, tip = texts[c]
            want = "c%d %s %s " % (c, shown(kind, True, KIND_MAX), shown(label, True, LABEL_MAX))
            if not t.startswith(want):
                fail("%s: bar c%d labelled %r, expected it to start with %r" % (path, c, t, want))
            want = "c%d %s %s" % (c, shown(kind, True), shown(label, True))
            if not tip.startswith(want):
                fail("%s: tooltip of c%d is %r, expected it to start with %r" % (path, c, tip, want))
    alltext = text_of(root)
    for m in exp["marks"]:
        if shown(m, True, 40) not in alltext:
            fail("%s: mark %r not shown" % (path, shown(m, True, 40)))
    print("%s: %d bars, %.0fx%.0f" % (path, len(cookies), width, height), file=sys.stderr)


def summary(path):
    """The figures of a trace, for benchmarks and people."""
    with open(path, encoding="utf-8") as f:
        other = json.load(f).get("otherData", {})
    keys = ("mode", "span_ms", "calls", "workers", "peak_running", "queued_ms",
            "wait_ms", "critical_path_ms", "peak_rss_kib", "marks")
    print(json.dumps({k: other.get(k) for k in keys}, sort_keys=False))
    print("%-34s %8s %10s %10s" % ("phase", "count", "total ms", "max ms"))
    for name, st in sorted(other.get("phases", {}).items(), key=lambda kv: -kv[1]["total_ms"]):
        print("%-34s %8d %10.3f %10.3f" % (name[:34], st["count"], st["total_ms"], st["max_ms"]))
    print("%-34s %8s %10s" % ("critical path", "ms", "queued ms"))
    for e in other.get("critical_path", []):
        name = "c%d %s %s" % (e["cookie"], e["kind"], e["label"])
        print("%-34s %8.3f %10.3f" % (name[:34], e["ms"], e["queued_ms"]))


def main():
    p = argparse.ArgumentParser(description="validate asyncprobe trace outputs")
    p.add_argument("format", choices=("chrome", "svg", "summary"))
    p.add_argument("file")
    p.add_argument("--expect")
    p.add_argument("--calls", type=int)
    p.add_argument("--min-calls", type=int)
    p.add_argument("--min-height", type=int)
    p.add_argument("--min-workers", type=int)
    p.add_argument("--all-inline", action="store_true")
    args = p.parse_args()
    exp = read_expect(args.expect)
    if args.format == "summary":
        summary(args.file)
    elif args.format == "chrome":
        check_chrome(args.file, args, exp)
    else:
        check_svg(args.file, args, exp)


if __name__ == "__main__":
    main()
