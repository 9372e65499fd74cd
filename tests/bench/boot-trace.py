#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Figures from one VM boot of asyncprobe's image made with "asyncprobe.trace=1
aptest.dump": the root's init printed /run/asyncprobe/{init.log,
manifest.json,trace.json} in base64 on the console (tests/vm/rootfs-init.sh),
and "@@AP uptime" when it started.

  boot-trace.py floor LOG     one JSON object: the time to root, the floor
                              and where the time to root went
  boot-trace.py chains LOG    one JSON object: the longest single chain of
                              calls (discovery, controller, ..., partition)
                              and the run's elapsed time

Times are milliseconds of CLOCK_MONOTONIC (the guest's uptime; init.log and
the trace's base_monotonic_ns use that clock).

A call's own time is what the device itself costs: its run (start to end)
less what it waited for on other devices' behalf.  Calls never wait for
their turn to publish (publication is done by whichever thread seals the
frontier), so only one wait is not the device's own: a SCSI device call's
first "wait" phase, before its "modprobe" (fastboot: until every controller
driver has probed, engine.c's wait_controllers_probed()).

The floor is what a boot that did nothing but the root could not go below,
measured on the same boot: the kernel's hand-over to /init (init_start_ms)
plus the own times of the root's chain (discovery, its controller calls,
its SCSI device, disk and partition: driver insertions, the driver's probe,
asyncprobe's probe and naming) plus the mount (root_mounted_ms -
root_found_ms, the file system's module included).  Everything else in the
time to root is listed in "where": the engine's start, queueing between a
parent's end and its child's start, the SCSI device's wait for the other
controllers, the wait for the root's turn to publish, the rest of the run
(PID 1 waits for it before switch_root), and switch_root plus exec.
"""
import base64
import json
import sys


def sections(path):
    """The console's "@@AP begin F" ... "@@AP end F" files, decoded, and the uptime."""
    files, cur, buf, uptime = {}, None, [], None
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("@@AP uptime "):
                uptime = float(line.split()[2]) * 1000.0
            elif line.startswith("@@AP begin "):
                cur, buf = line[len("@@AP begin "):], []
            elif line.startswith("@@AP end ") and cur:
                try:
                    files[cur] = base64.b64decode("".join(buf))
                except ValueError:
                    pass
                cur = None
            elif cur:
                buf.append(line.strip())
    return files, uptime


class Boot:
    def __init__(self, path):
        files, self.uptime_ms = sections(path)
        self.manifest = json.loads(files["manifest.json"])
        trace = json.loads(files["trace.json"])
        self.init = {}
        for line in files.get("init.log", b"").decode().splitlines():
            k, _, v = line.partition("=")
            self.init[k] = v
        self.base = trace["otherData"]["base_monotonic_ns"] / 1e6
        self.calls, self.phases = {}, {}
        for e in trace["traceEvents"]:
            if e.get("ph") != "X":
                continue
            c = e.get("args", {}).get("cookie")
            if e.get("cat") == "call":
                self.calls[c] = e
            elif e.get("cat") == "phase":
                self.phases.setdefault(c, []).append(e)
        for v in self.phases.values():
            v.sort(key=lambda p: p["ts"])
        # nodes by order cookie: the manifest's controllers and devices
        self.nodes = {}
        for k in ("controllers", "devices"):
            for d in self.manifest.get(k, []):
                self.nodes[d["cookie"]] = d

    def t(self, us):
        """A trace time (µs from the base) as absolute ms."""
        return self.base + us / 1000.0

    def call_of(self, node):
        return self.calls.get(node.get("time", {}).get("call"))

    def split(self, call):
        """(own, others, parts) of one call: ms of its own work, ms waited for
        other devices, and its phases summed by name ("wait" split into
        "wait_controllers" and "wait_driver")."""
        dur = call["dur"] / 1000.0
        kind = call["args"].get("kind")
        parts = {}
        others = 0.0
        seen_modprobe = False
        for p in self.phases.get(call["args"]["cookie"], []):
            ms = p["dur"] / 1000.0
            name = p["name"]
            if name == "modprobe":
                seen_modprobe = True
            if name == "wait":
                if kind == "scsi" and not seen_modprobe:
                    name = "wait_controllers"
                    others += ms
                else:
                    name = "wait_driver"
            if name == "sync":
                others += ms
            parts[name] = parts.get(name, 0.0) + ms
        named = sum(parts.values())
        parts["other"] = max(0.0, dur - named)
        return dur - others, others, parts

    def chain(self, node):
        """The calls from the discovery down to @node (a manifest node)."""
        out = []
        while node is not None:
            out.append(node)
            node = self.nodes.get(node.get("parent"))
        return list(reversed(out))

    def discovery(self):
        for c in self.calls.values():
            if c["args"].get("kind") == "discover":
                return c
        return None


def r1(x):
    return None if x is None else round(x, 1)


def floor(path):
    b = Boot(path)
    init = b.init
    init_start = float(init["init_start_ms"])
    found = float(init["root_found_ms"])
    mounted = float(init["root_mounted_ms"])
    finished = float(init["probe_finished_ms"])
    uuid_link = init["root_device"].replace("/dev/", "", 1)
    target = None
    for l in b.manifest["links"]:
        if l["name"] == uuid_link:
            target = l["target"]
    root = None
    for d in b.manifest["devices"]:
        if d["name"] == target:
            root = d
    if root is None:
        raise SystemExit("boot-trace: the root %s (%s) is not in the manifest" % (uuid_link, target))
    nodes = b.chain(root)
    disc = b.discovery()
    chain = []
    own_sum = 0.0
    where = {"engine_start": b.t(disc["ts"]) - init_start if disc else 0.0,
             "discovery": 0.0, "driver_insertion": 0.0, "wait_driver_probe": 0.0,
             "wait_other_controllers": 0.0, "probe_naming": 0.0, "enumeration": 0.0,
             "other_in_calls": 0.0,
             "queued": 0.0}
    prev_end = None
    calls = ([disc] if disc else []) + [b.call_of(n) for n in nodes]
    labels = (["discovery"] if disc else []) + ["%s %s" % (n.get("kind", n.get("subsystem")), n["name"]) for n in nodes]
    for label, c in zip(labels, calls):
        if c is None:
            continue
        own, others, parts = b.split(c)
        own_sum += own
        start, end = b.t(c["ts"]), b.t(c["ts"] + c["dur"])
        if prev_end is not None:
            where["queued"] += max(0.0, start - prev_end)
        prev_end = end
        if c["args"].get("kind") == "discover":
            where["discovery"] += c["dur"] / 1000.0
        else:
            where["driver_insertion"] += parts.get("modprobe", 0.0)
            where["wait_driver_probe"] += parts.get("wait_driver", 0.0)
            where["wait_other_controllers"] += parts.get("wait_controllers", 0.0)
            where["probe_naming"] += parts.get("probe", 0.0) + parts.get("names", 0.0)
            # listing its devices, then putting them into the order
            where["enumeration"] += parts.get("enumerate", 0.0) + parts.get("children", 0.0)
            where["other_in_calls"] += parts.get("other", 0.0) + parts.get("links", 0.0) + parts.get("sync", 0.0)
        chain.append({"call": label, "start_ms": r1(start), "own_ms": r1(own), "waited_ms": r1(others),
                      **{k + "_ms": r1(v) for k, v in parts.items() if v >= 0.05}})
    # The root's partition call may publish itself (its "links" phase)
    # and go on a little after PID 1 saw the link: that tail is not on the
    # way to the root.
    tail = max(0.0, prev_end - found)
    own_sum -= tail
    where["other_in_calls"] -= tail
    where["publication_wait"] = found - (prev_end - tail)
    where["mount"] = mounted - found
    # PID 1 switches root once the root is mounted; only with
    # asyncprobe.wait_all=1 (or a run already over) does it wait for the
    # rest of the run first, which the probe process otherwise finishes
    # after init started (probe_after_init).
    switched = float(init.get("switch_root_ms", finished))
    where["rest_of_run"] = max(0.0, switched - mounted)
    where["switch_root_exec"] = b.uptime_ms - switched
    where["probe_after_init"] = max(0.0, finished - b.uptime_ms)
    fl = init_start + own_sum + (mounted - found)
    return {
        "root": root["name"], "init_start_ms": r1(init_start), "root_chain_own_ms": r1(own_sum),
        "mount_ms": r1(mounted - found), "floor_ms": r1(fl), "root_found_ms": r1(found),
        "root_mounted_ms": r1(mounted), "probe_finished_ms": r1(finished), "init_ms": r1(b.uptime_ms),
        "above_floor_ms": r1(b.uptime_ms - fl),
        "where_ms": {"kernel_handover": r1(init_start), **{k: r1(v) for k, v in where.items()}},
        "chain": chain,
    }


def chains(path):
    b = Boot(path)
    disc = b.discovery()
    d_own = b.split(disc)[0] if disc else 0.0
    children = {}
    for n in b.nodes.values():
        children.setdefault(n.get("parent"), []).append(n["cookie"])
    best = (0.0, [])
    for n in b.nodes.values():
        if children.get(n["cookie"]):
            continue            # not a leaf
        total, names = d_own, []
        for m in b.chain(n):
            c = b.call_of(m)
            if c is not None:
                total += b.split(c)[0]
            names.append(m["name"])
        if total > best[0]:
            best = (total, names)
    return {"longest_chain_ms": r1(best[0]), "longest_chain": best[1],
            "elapsed_ms": b.manifest["summary"]["time"]["elapsed_ms"]}


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("floor", "chains"):
        sys.stderr.write("usage: boot-trace.py floor|chains CONSOLE-LOG\n")
        return 2
    try:
        out = floor(sys.argv[2]) if sys.argv[1] == "floor" else chains(sys.argv[2])
    except (KeyError, ValueError, OSError) as e:
        sys.stderr.write("boot-trace.py: %s: %s\n" % (sys.argv[2], e))
        return 1
    print(json.dumps(out, separators=(",", ":")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
