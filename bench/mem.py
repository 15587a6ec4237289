#!/usr/bin/env python3
"""Peak resident memory of `cxla run` against the data a run needs (issue 22, item 4).

For each module: `cxla run MODULE --backend=cpu --random-inputs --stats` in its own process;
its `memory:` line gives the data size (inputs + outputs + the largest set of live
temporaries, as the cpu backend's buffer assignment packs them) and the peak RSS, which is also
taken here from the kernel (wait4's ru_maxrss) so that a cxla from before the memory line
(--before=PATH) is measured the same way. A tiny module shows the process's fixed part (the
shared libraries' pages, LLVM's above all). Python's standard library only.

  python3 bench/mem.py [--cxla build/bench/cxla] [--before /path/to/older/cxla] [--rounds 3]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
MODULES = [
    ("softmax f32[4096,4096]", "hlo/softmax.hlo"),
    ("softmax f32[8192,8192]", "8192"),  # softmax.hlo at twice the side
    ("MLP Adam step (784-512-512-10, batch 128)", "mem/jax_mlp_step.hlo"),
    ("CNN Adam step (2 conv, batch 128)", "mem/jax_cnn_step.hlo"),
]
TINY = "HloModule tiny\nENTRY main {\n  x = f32[4] parameter(0)\n  ROOT y = f32[4] add(x, x)\n}\n"
MIB = 1 << 20


def run(cxla, module, stats):
    """(peak RSS bytes from the kernel, the memory line's fields or {})."""
    args = [cxla, "run", module, "--backend=cpu", "--random-inputs"] + (["--stats"] if stats else [])
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode:
        sys.exit(f"{' '.join(args)}: exit {p.returncode}: {err[-500:]}")
    m = re.search(r"^memory: (.*)$", err, re.M)
    fields = dict(kv.split("=", 1) for kv in m.group(1).split()) if m else {}
    return ru.ru_maxrss * 1024, fields


def median_peak(cxla, module, rounds, stats):
    runs = [run(cxla, module, stats) for _ in range(rounds)]
    return statistics.median(r[0] for r in runs), runs[0][1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cxla", default="build/bench/cxla")
    ap.add_argument("--before", help="an older cxla to measure the same way (no --stats)")
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "tiny.hlo"), "w") as f:
            f.write(TINY)
        with open(os.path.join(HERE, "hlo/softmax.hlo")) as f, open(os.path.join(tmp, "8192"), "w") as g:
            g.write(f.read().replace("4096", "8192"))
        rows = [("tiny f32[4] add (the process's fixed part)", os.path.join(tmp, "tiny.hlo"))] + [
            (n, os.path.join(tmp if p == "8192" else HERE, p)) for n, p in MODULES]
        fixed = None
        hdr = "| module | data MiB (in + out + temps) | peak RSS MiB | ratio | (peak - fixed) / data |"
        if a.before:
            hdr += " before: peak RSS MiB | before: ratio |"
        print(hdr)
        print("|" + "---|" * hdr.count(" |"))
        for name, path in rows:
            peak, f = median_peak(a.cxla, path, a.rounds, True)
            data = int(f["data_bytes"])
            parts = f"{f['inputs_bytes']}+{f['outputs_bytes']}+{f['temp_bytes']} B"
            fixed = peak if fixed is None else fixed
            big = data >= MIB  # a ratio over a few bytes says nothing
            ratio = f"{peak / data:.2f}" if big else "-"
            beyond = f"{(peak - fixed) / data:.2f}" if big else "-"
            line = f"| {name} | {data / MIB:.1f} ({parts}) | {peak / MIB:.1f} | {ratio} | {beyond} |"
            if a.before:
                old, _ = median_peak(a.before, path, a.rounds, False)
                line += f" {old / MIB:.1f} | {old / data:.2f} |" if big else f" {old / MIB:.1f} | - |"
            print(line)
    print(f"\nmedian of {a.rounds} runs each; ratio = peak RSS / data (goal: <= 1.5); fixed = the tiny module's peak")


if __name__ == "__main__":
    main()
