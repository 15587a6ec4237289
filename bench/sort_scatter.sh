#!/bin/sh
# bench/sort_scatter.sh — the native sort / scatter / select-and-scatter routines against the
# interpreter fallback they replace: CPU time per execute, one thread, of bench/hlo's
# maxpool_grad, scatter_add_rows and argsort under two cxla binaries.
# Usage: bench/sort_scatter.sh BEFORE_CXLA AFTER_CXLA
# (BEFORE: a cxla built before commit "native sort, scatter, select-and-scatter").
# Task-clock (perf stat) at --repeat=22 minus --repeat=2, over 20: the executes only, and
# robust to a loaded machine where wall clock is not.
set -e
before=$1 after=$2
[ -x "$before" ] && [ -x "$after" ] || { echo "usage: $0 BEFORE_CXLA AFTER_CXLA" >&2; exit 2; }
cd "$(dirname "$0")/.."
cpu_ms() { # binary module repeats
  perf stat -x, -e task-clock "$1" run "$2" --backend=cpu --random-inputs=1 --repeat="$3" --threads=1 2>&1 >/dev/null |
    grep task-clock | cut -d, -f1
}
for m in maxpool_grad scatter_add_rows argsort; do
  f=bench/hlo/$m.hlo
  b2=$(cpu_ms "$before" $f 2) b22=$(cpu_ms "$before" $f 22) a2=$(cpu_ms "$after" $f 2) a22=$(cpu_ms "$after" $f 22)
  python3 -c "b=($b22-$b2)/20; a=($a22-$a2)/20; print('%-18s interp %8.3f ms  native %8.3f ms  %6.1fx' % ('$m', b, a, b/a))"
done
