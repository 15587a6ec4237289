#!/usr/bin/env python3
"""kernels.py TRACE BYTES — GPU time per execution from a `cxla run --backend=gpu --trace`
file: the median over executions of each step the GPU stream ran (kernels and device copies,
recorded with CUDA events), summed over the steps of one execution, and the bandwidth that
BYTES (the data an execution must read and write at least) moved in that time. The first
execution (module load, cold caches) is left out. Prints one line: us, GB/s, then the steps."""
import json
import statistics
import sys

GPU_STREAM_TID = 1000  # gpu_exec.c's trace thread id of the stream


def main():
    trace, nbytes = sys.argv[1], float(sys.argv[2])
    events = [e for e in json.load(open(trace))["traceEvents"]
              if e.get("tid") == GPU_STREAM_TID and e.get("ph") == "X"]
    by_name = {}
    for e in events:
        by_name.setdefault(e["name"], []).append(e["dur"])
    if not by_name:
        sys.exit("kernels.py: no GPU stream events in " + trace)
    steps = {n: statistics.median(d[1:] if len(d) > 1 else d) for n, d in by_name.items()}
    us = sum(steps.values())
    detail = ", ".join(f"{n} {t:.1f} us" for n, t in sorted(steps.items(), key=lambda kv: -kv[1]))
    print(f"{us:.1f} us  {nbytes / us / 1e3:.1f} GB/s  ({detail})")


if __name__ == "__main__":
    main()
