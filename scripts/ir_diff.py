#!/usr/bin/env python3
"""ir_diff.py — does a change leave the generated code alone? Compiles every module of
bench/hlo and tests/hlo with two builds of cxla (`cxla compile --backend=cpu --dump-to=DIR`,
which writes the LLVM IR before and after optimisation and the assembly, docs/flags.md) and
compares what they wrote, byte for byte. A module either build refuses counts as the same
when both refuse it with the same message.

    python3 scripts/ir_diff.py OLD_BUILD NEW_BUILD [--backend=cpu] [-j N] [--keep DIR]

OLD_BUILD and NEW_BUILD are build folders (each with its `cxla`). Prints one line per module
that differs and a summary; exit status 0 when everything is identical, 1 when something
differs, 2 on a bad command line. The compiles use one fixed thread count, so the split of
kernels into LLVM modules is the same for both builds."""
import argparse
import concurrent.futures
import filecmp
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# what --dump-to writes that is generated code (the HLO and GraphViz dumps are not compared:
# the IR says what the HLO became)
SUFFIXES = (".ir-before-opt.ll", ".ir-after-opt.ll", ".s")


def modules():
    out = []
    for top in ("bench/hlo", "tests/hlo"):
        for d, _, files in os.walk(os.path.join(ROOT, top)):
            out += [os.path.join(d, f) for f in files if f.endswith(".hlo")]
    return sorted(out)


def compile_one(cxla, module, backend, dump):
    os.makedirs(dump, exist_ok=True)
    cmd = [cxla, "compile", module, "--backend=" + backend, "--dump-to=" + dump, "--dump-pass-re=^$", "--threads=2"]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        return ("timeout", None)
    if p.returncode:
        return ("refused", p.stderr.strip().splitlines()[-1:] or [""])
    files = {}
    for f in os.listdir(dump):
        for s in SUFFIXES:
            if f.endswith(s):
                files[s] = os.path.join(dump, f)
    return ("compiled", files)


def compare(args, module, work):
    rel = os.path.relpath(module, ROOT)
    name = rel.replace("/", "_")
    a = compile_one(os.path.join(args.old, "cxla"), module, args.backend, os.path.join(work, "old", name))
    b = compile_one(os.path.join(args.new, "cxla"), module, args.backend, os.path.join(work, "new", name))
    if a[0] != b[0]:
        return rel, "differs", "old %s, new %s" % (a[0], b[0])
    if a[0] != "compiled":
        return rel, ("same-refusal" if a == b else "differs"), "" if a == b else "%s / %s" % (a[1], b[1])
    if sorted(a[1]) != sorted(b[1]):
        return rel, "differs", "dumped files differ: %s / %s" % (sorted(a[1]), sorted(b[1]))
    diff = [s for s in SUFFIXES if s in a[1] and not filecmp.cmp(a[1][s], b[1][s], shallow=False)]
    return rel, ("differs" if diff else "identical"), " ".join(diff)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("-j", type=int, default=1)
    ap.add_argument("--keep", help="keep the dumps in this folder (default: a temporary one, removed)")
    args = ap.parse_args()
    for b in (args.old, args.new):
        if not os.access(os.path.join(b, "cxla"), os.X_OK):
            print("ir_diff: %s has no cxla" % b, file=sys.stderr)
            return 2
    tmp = None
    work = args.keep
    if not work:
        tmp = tempfile.TemporaryDirectory(prefix="ir_diff.")
        work = tmp.name
    counts = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.j)) as ex:
        for rel, verdict, detail in ex.map(lambda m: compare(args, m, work), modules()):
            counts[verdict] = counts.get(verdict, 0) + 1
            if verdict == "differs":
                print("DIFFERS %s: %s" % (rel, detail))
    if tmp:
        tmp.cleanup()
    total = sum(counts.values())
    print("%d modules, backend %s: %d identical (IR before and after optimisation, assembly), "
          "%d refused alike by both, %d differ" % (total, args.backend, counts.get("identical", 0),
                                                   counts.get("same-refusal", 0), counts.get("differs", 0)))
    return 1 if counts.get("differs") else 0


if __name__ == "__main__":
    sys.exit(main())
