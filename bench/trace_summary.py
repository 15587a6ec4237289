#!/usr/bin/env python3
"""trace_summary.py TRACE.json [--skip N] — per-kernel times from a cxla --trace file.

Groups the complete events by (category, name): count, total, min and median duration, and
each one's share of the 'execute' spans; the first N executions (warm-up; default 1) are left
out. Usage:
    build/bench/cxla run bench/hlo/softmax.hlo --backend=cpu --random-inputs --repeat=10 \\
        --trace=/tmp/t.json && bench/trace_summary.py /tmp/t.json
"""
import json
import sys


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    skip = 1
    for a in sys.argv[1:]:
        if a.startswith("--skip="):
            skip = int(a.split("=", 1)[1])
    if not args:
        sys.exit(__doc__)
    ev = [e for e in json.load(open(args[0]))["traceEvents"] if e.get("ph") == "X"]
    ev.sort(key=lambda e: e["ts"])
    execs = [e for e in ev if e.get("cat") == "execute"]
    compile_ev = [e for e in ev if e.get("cat") == "compile"]
    if compile_ev:
        print("compile phases (ms): " + " ".join("%s=%.2f" % (e["name"], e["dur"] / 1e3) for e in compile_ev))
    kept = execs[skip:] if len(execs) > skip else execs
    if not kept:
        sys.exit("no execute spans in " + args[0])
    t_lo = kept[0]["ts"]
    inside = [e for e in ev if e.get("cat") not in ("execute", "compile") and e["ts"] >= t_lo]
    total_exec = sum(e["dur"] for e in kept)
    groups = {}
    for e in inside:
        groups.setdefault((e.get("cat"), e["name"]), []).append(e)
    n = len(kept)
    ex = sorted(e["dur"] for e in kept)
    print("%d executions (first %d skipped): execute span min %.1f us, median %.1f us" % (
        n, skip, ex[0], ex[len(ex) // 2]))
    print("%-9s %-60s %6s %12s %12s %12s %7s" % ("cat", "name", "calls", "per exec us", "min us", "median us", "share"))
    covered = 0.0
    for (cat, name), es in sorted(groups.items(), key=lambda kv: -sum(e["dur"] for e in kv[1])):
        d = sorted(e["dur"] for e in es)
        tot = sum(d)
        covered += tot
        print("%-9s %-60s %6d %12.1f %12.1f %12.1f %6.1f%%" % (
            cat, name[:60], len(d), tot / n, d[0], d[len(d) // 2], 100.0 * tot / total_exec))
    print("%-9s %-60s %6s %12.1f %12s %12s %6.1f%%" % (
        "", "(outside any kernel/library span: sequencer, allocation, hand-offs)", "", (total_exec - covered) / n, "",
        "", 100.0 * (total_exec - covered) / total_exec))


if __name__ == "__main__":
    main()
