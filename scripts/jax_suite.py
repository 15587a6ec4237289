#!/usr/bin/env python3
"""jax_suite.py — JAX's own test suite as the judge of cxla's PJRT plugin (issue 20).

Runs JAX's test files (tests/lax_test.py, ... of the JAX release that is installed) with pytest,
once on JAX's CPU backend and once on cxla (JAX_PLATFORMS=cpu / =cxla, each file in its own
process), and writes a table: per file, the tests that pass on JAX's CPU, those of them that pass
on cxla, and the failures on cxla grouped by cause (the first line of the error, with numbers and
names blurred so that one cause is counted once).

Where the test files come from (JAX's wheels do not ship them): --tests DIR (a folder with the
files), or --jax-git DIR --tag TAG (a clone or bare mirror of JAX's repository; the files are
read with `git show TAG:tests/NAME`). The tag should be the installed jax's (jax-vX.Y.Z).

  build/venv/bin/python scripts/jax_suite.py --jax-git /path/to/jax.git --tag jax-v0.10.2 \\
      --files lax_test.py,random_test.py --cases 1 --out build/jax-suite

--dut cpu runs the cxla side with JAX's flag jax_test_dut=cpu (through JAX_TEST_DUT and the
conftest.py written next to the tests), JAX's own knob ("describes the device under
test in case special consideration is required"), which its tests read instead of the platform
name where they gate on a device (jtu.run_on_devices("cpu"), skip_on_devices("cpu")). cxla runs
on the host's CPU with JAX's CPU lowering rules (the plugin shares them), so the tests JAX writes
for CPUs apply to it; the report says which way the run was made.

JAX_NUM_GENERATED_CASES (--cases) bounds each parameterised test's generated cases; --timeout
stops a file that hangs (its unfinished tests count as not run). Needs pytest and absl-py in
the Python that runs it (pip install pytest absl-py into the venv under build/).
"""
import argparse
import collections
import os
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

DEFAULT_FILES = ["lax_test.py", "lax_numpy_test.py", "lax_autodiff_test.py", "lax_control_flow_test.py",
                 "random_test.py", "nn_test.py", "linalg_test.py", "api_test.py"]


def fetch_tests(args, folder):
    os.makedirs(folder, exist_ok=True)
    for name in args.files:
        dst = os.path.join(folder, name)
        if args.tests:
            src = os.path.join(args.tests, name)
            with open(src, "rb") as f:
                data = f.read()
        else:
            data = subprocess.run(["git", "-C", args.jax_git, "show", f"{args.tag}:tests/{name}"], check=True,
                                  capture_output=True).stdout
        with open(dst, "wb") as f:
            f.write(data)
    # JAX's pytest settings would turn every warning into an error; the run here keeps pytest's
    # defaults so that a warning of the plugin's registration is not a test failure.
    # JAX_TEST_DUT (--dut) reaches JAX's flag here: the flag reads no environment variable.
    with open(os.path.join(folder, "conftest.py"), "w") as f:
        f.write("import os\n"
                "if os.environ.get('JAX_TEST_DUT'):\n"
                "    import jax\n"
                "    from jax._src import test_util  # noqa: F401  (defines the flag)\n"
                "    jax.config.update('jax_test_dut', os.environ['JAX_TEST_DUT'])\n")


def run_file(py, folder, name, platform, cases, timeout, out, dut=None, with_cpu=False):
    xml = os.path.join(out, f"{platform}-{name}.xml")
    env = dict(os.environ, JAX_PLATFORMS=f"{platform},cpu" if with_cpu and platform != "cpu" else platform,
               JAX_NUM_GENERATED_CASES=str(cases))
    if dut:
        env["JAX_TEST_DUT"] = dut
    if platform != "cpu":
        # The suite judges one device, the cxla cpu: the plugin's GPU device (--pjrt-gpu=auto on a
        # machine with a GPU) would make JAX's multi-device tests run. A CXLA_FLAGS of the caller
        # that names --pjrt-gpu comes later and wins.
        env["CXLA_FLAGS"] = ("--pjrt-gpu=off " + os.environ.get("CXLA_FLAGS", "")).strip()
    cmd = [py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=", f"--junitxml={xml}",
           os.path.join(folder, name)]
    t0 = time.time()
    try:
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
        tail = r.stdout[-2000:]
    except subprocess.TimeoutExpired:
        tail = f"timed out after {timeout} s"
    with open(os.path.join(out, f"{platform}-{name}.log"), "w") as f:
        f.write(tail)
    return xml, time.time() - t0


def results(xml):
    """{test id: (status, message)} from a junit xml (status: passed, failed, skipped)."""
    out = {}
    if not os.path.exists(xml):
        return out
    for case in ET.parse(xml).getroot().iter("testcase"):
        tid = f"{case.get('classname')}.{case.get('name')}"
        status, msg = "passed", ""
        for child in case:
            if child.tag in ("failure", "error"):
                status, msg = "failed", (child.get("message") or child.text or "").strip()
            elif child.tag == "skipped":
                status, msg = "skipped", (child.get("message") or "").strip()
        out[tid] = (status, msg)
    return out


def cause(msg):
    line = next((l for l in msg.splitlines() if l.strip()), "(no message)")
    line = re.sub(r"0x[0-9a-f]+", "ADDR", line)
    line = re.sub(r"\d+(\.\d+)?(e[-+]?\d+)?", "N", line)
    line = re.sub(r"'[^']*'", "'…'", line)
    return line[:160]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tests", help="a folder with JAX's test files")
    ap.add_argument("--jax-git", help="a clone or mirror of JAX's repository")
    ap.add_argument("--tag", default=None, help="the tag to read from --jax-git (default: the installed jax's)")
    ap.add_argument("--files", default=",".join(DEFAULT_FILES))
    ap.add_argument("--cases", type=int, default=1, help="JAX_NUM_GENERATED_CASES")
    ap.add_argument("--timeout", type=int, default=3600, help="seconds per file and platform")
    ap.add_argument("--platforms", default="cpu,cxla",
                    help="the platforms to run now (the report reads the other's results from --out; "
                         "an empty list only writes the report of the runs already in --out)")
    ap.add_argument("--out", default="build/jax-suite")
    ap.add_argument("--dut", default=None, help="JAX_TEST_DUT for the cxla runs (cpu: JAX's CPU-gated tests run too)")
    ap.add_argument("--with-cpu", action="store_true",
                    help="the cxla runs with JAX_PLATFORMS=cxla,cpu: cxla the default, JAX's CPU backend beside it "
                         "(JAX's lax.scan puts numpy operands on it; jax.default_device('cpu') needs it)")
    args = ap.parse_args()
    args.files = [f for f in args.files.split(",") if f]
    if not args.tests and not args.jax_git:
        ap.error("give --tests DIR or --jax-git DIR")
    if args.jax_git and not args.tag:
        import jax
        args.tag = f"jax-v{jax.__version__}"
    os.makedirs(args.out, exist_ok=True)
    folder = os.path.join(args.out, "tests")
    fetch_tests(args, folder)
    platforms = [p for p in args.platforms.split(",") if p]  # none: the report of earlier runs in --out
    table = []
    for name in args.files:
        res = {}
        for p in platforms:
            xml, secs = run_file(sys.executable, folder, name, p, args.cases, args.timeout, args.out,
                                 args.dut if p == "cxla" else None, args.with_cpu)
            res[p] = results(xml)
            print(f"{name} on {p}: {sum(s == 'passed' for s, _ in res[p].values())} passed of {len(res[p])} "
                  f"in {secs:.0f} s", flush=True)
        for p in ("cpu", "cxla"):  # a platform not run now: an earlier run's results in --out
            if p not in res:
                res[p] = results(os.path.join(args.out, f"{p}-{name}.xml"))
        table.append((name, res))
    lines = [f"cxla runs with JAX_TEST_DUT={args.dut}" if args.dut else "cxla runs as platform cxla (no JAX_TEST_DUT)",
             "JAX_PLATFORMS=cxla,cpu for the cxla runs" if args.with_cpu else "JAX_PLATFORMS=cxla for the cxla runs", "",
             "| file | pass on JAX CPU | of those, skipped on cxla by JAX's own tests | run on cxla | pass on cxla | share of those run |",
             "|---|---|---|---|---|---|"]
    causes_all = collections.Counter()
    skips = collections.Counter()
    total_cpu = total_skip = total_run = total_both = 0
    for name, res in table:
        cpu, cx = res.get("cpu", {}), res.get("cxla", {})
        ok_cpu = [t for t, (s, _) in cpu.items() if s == "passed"]
        ok_both = [t for t in ok_cpu if cx.get(t, ("missing", ""))[0] == "passed"]
        # JAX's tests skip themselves on devices they were not written for (jtu's "Skipped unless
        # running on devices with tags: cpu", ...): those are the suite's choice, counted apart.
        skipped = [t for t in ok_cpu if cx.get(t, ("missing", ""))[0] == "skipped"]
        for t in skipped:
            skips[cx[t][1][:100] or "(no reason)"] += 1
        for t in ok_cpu:
            s, msg = cx.get(t, ("missing", "not run on cxla (the file stopped or timed out)"))
            if s not in ("passed", "skipped"):
                causes_all[(name, cause(msg))] += 1
        run = len(ok_cpu) - len(skipped)
        total_cpu += len(ok_cpu)
        total_skip += len(skipped)
        total_run += run
        total_both += len(ok_both)
        share = f"{100 * len(ok_both) / run:.1f}%" if run else "-"
        lines.append(f"| {name} | {len(ok_cpu)} | {len(skipped)} | {run} | {len(ok_both)} | {share} |")
    share = f"{100 * total_both / total_run:.1f}%" if total_run else "-"
    lines.append(f"| all | {total_cpu} | {total_skip} | {total_run} | {total_both} | {share} |")
    lines += ["", "Why JAX's tests skipped themselves on cxla:", ""]
    for why, n in skips.most_common():
        lines.append(f"- {n} × {why}")
    lines += ["", "Failures on cxla of tests that pass on JAX's CPU, by cause:", ""]
    for (name, c), n in causes_all.most_common():
        lines.append(f"- {n} × {name}: {c}")
    report = "\n".join(lines)
    with open(os.path.join(args.out, "report.md"), "w") as f:
        f.write(report + "\n")
    print(report)


if __name__ == "__main__":
    main()
