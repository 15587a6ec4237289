#!/usr/bin/env python3
"""house_metrics.py [BUILD] — how the code's files depend on each other, measured from the
code itself: the #include lines of src/ and tools/, and the symbols each object file defines
and uses (nm). Prints the figures issue 19 asks for, before and after a restructuring:

  circles across folders   strongly connected groups of files (by includes and calls) whose
                           files lie in more than one folder, and all groups of 2+ files
  calls back up a layer    symbols a folder uses from a folder above it (the order of
                           docs/design/architecture.md, as tests/layers.sh checks it)
  gpu -> cpu               includes of backend/cpu headers and calls into backend/cpu objects
                           from backend/gpu
  dead functions           functions of src/ nothing calls (tests/dead_functions.sh)
  CLI internal symbols     cx_* symbols of the library that tools/ uses, and the headers it
                           includes from src/

Run from the tree's root after a build (`make`); BUILD defaults to build.
"""
import os
import re
import subprocess
import sys
from collections import defaultdict

ORDER = ["util", "core", "ir", "text", "stablehlo", "interp", "grad", "passes", "codegen", "rt",
         "backend/cpu", "backend/gpu", "runtime", "api"]
PEERS = {("backend/cpu", "backend/gpu"), ("backend/gpu", "backend/cpu"), ("text", "interp"),
         ("interp", "text"), ("grad", "interp"), ("interp", "grad"), ("text", "stablehlo"),
         ("stablehlo", "text"), ("stablehlo", "interp"), ("interp", "stablehlo")}


def folder_of(path):
    """src/backend/cpu/x.c -> backend/cpu; src/ir/x.h -> ir; tools/x.c -> tools."""
    parts = path.split("/")
    if parts[0] != "src":
        return parts[0]
    return "/".join(parts[1:3]) if parts[1] == "backend" and len(parts) > 3 else parts[1]


def sources():
    out = []
    for top in ("src", "tools"):
        for root, _, files in os.walk(top):
            out += [os.path.join(root, f) for f in files if f.endswith((".c", ".h"))]
    return sorted(out)


def unit_of(path):
    """A file and its header are one unit: x.c and x.h."""
    return path[:-2]


def nm(obj, args):
    r = subprocess.run(["nm"] + args + [obj], capture_output=True, text=True)
    return r.stdout.splitlines()


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    files = sources()
    existing = set(files)
    edges = defaultdict(set)
    includes_from = defaultdict(set)
    for f in files:
        with open(f, errors="replace") as fh:
            for line in fh:
                m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                if not m:
                    continue
                inc = m.group(1)
                target = "src/" + inc if os.path.exists("src/" + inc) else os.path.join(os.path.dirname(f), inc)
                if target in existing:
                    includes_from[f].add(target)
                    if unit_of(target) != unit_of(f):
                        edges[unit_of(f)].add(unit_of(target))
    # calls: symbols each object defines and uses
    defs, uses = {}, defaultdict(set)
    objs = []
    for f in files:
        if f.endswith(".c"):
            o = os.path.join(build, "obj", f[:-2] + ".o")
            if os.path.exists(o):
                objs.append((f, o))
    for f, o in objs:
        for line in nm(o, ["-g", "--defined-only"]):
            p = line.split()
            if len(p) == 3 and p[1] in "TDBRV":
                defs[p[2]] = f
    for f, o in objs:
        for line in nm(o, ["-u"]):
            p = line.split()
            if p and p[-1] in defs:
                uses[f].add(p[-1])
                callee = defs[p[-1]]
                if unit_of(callee) != unit_of(f):
                    edges[unit_of(f)].add(unit_of(callee))

    # strongly connected components (Tarjan, iterative)
    index, low, on, stack, sccs, counter = {}, {}, set(), [], [], [0]
    nodes = sorted(set(edges) | {t for v in edges.values() for t in v})

    def strong(v0):
        work = [(v0, iter(sorted(edges[v0])))]
        index[v0] = low[v0] = counter[0]
        counter[0] += 1
        stack.append(v0)
        on.add(v0)
        while work:
            v, it = work[-1]
            nxt = next(it, None)
            if nxt is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    sccs.append(sorted(comp))
            elif nxt not in index:
                index[nxt] = low[nxt] = counter[0]
                counter[0] += 1
                stack.append(nxt)
                on.add(nxt)
                work.append((nxt, iter(sorted(edges[nxt]))))
            elif nxt in on:
                low[v] = min(low[v], index[nxt])

    for v in nodes:
        if v not in index:
            strong(v)
    circles = [c for c in sccs if len(c) > 1]
    cross = [c for c in circles if len({folder_of(u + ".c") for u in c}) > 1]

    rank = {f: i for i, f in enumerate(ORDER)}
    back_up = set()
    for f, syms in uses.items():
        a = folder_of(f)
        for s in syms:
            b = folder_of(defs[s])
            if a != b and a in rank and b in rank and rank[b] > rank[a] and (a, b) not in PEERS:
                back_up.add((a, b, s))
    gpu_cpu_inc = sorted({(f, t) for f, ts in includes_from.items() for t in ts
                          if folder_of(f) == "backend/gpu" and folder_of(t) == "backend/cpu"})
    gpu_cpu_calls = sorted({s for f, syms in uses.items() if folder_of(f) == "backend/gpu"
                            for s in syms if folder_of(defs[s]) == "backend/cpu"})
    dead = subprocess.run(["sh", "tests/dead_functions.sh", build], capture_output=True, text=True).stdout
    dead_n = len([l for l in dead.splitlines() if l.startswith("dead: ")])
    cli_syms = sorted({s for f, syms in uses.items() if f.startswith("tools/") for s in syms
                       if not s.startswith("cxla_") and defs[s].startswith("src/")})
    cli_headers = sorted({t for f, ts in includes_from.items() if f.startswith("tools/") for t in ts
                          if t.startswith("src/")})

    print(f"files: {len(files)} in src/ and tools/; units (x.c + x.h): {len(nodes)}")
    print(f"circles of 2+ units (includes and calls): {len(circles)}")
    for c in circles:
        print("  " + " <-> ".join(u.replace("src/", "") for u in c))
    print(f"circles across folders: {len(cross)}")
    print(f"calls back up a layer: {len(back_up)}")
    for a, b, s in sorted(back_up):
        print(f"  {a} -> {b}: {s}")
    print(f"gpu -> cpu: {len(gpu_cpu_inc)} includes, {len(gpu_cpu_calls)} calls")
    print(f"dead functions: {dead_n}")
    print(f"CLI: {len(cli_syms)} internal symbols, {len(cli_headers)} headers of src/")
    for s in cli_syms:
        print(f"  {s} ({defs[s].replace('src/', '')})")
    for h in cli_headers:
        print(f"  #include {h.replace('src/', '')}")


if __name__ == "__main__":
    main()
