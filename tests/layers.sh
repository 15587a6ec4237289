#!/bin/sh
# layers.sh — checks that the folders of src/ call each other only as
# docs/design/architecture.md allows, from the symbols the compiled objects define and use
# (nm), so that a call into a higher layer fails the build's tests instead of creeping in.
# Usage: tests/layers.sh [BUILD]   (default build). Prints one line per folder and
# "N passed, N failed".
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=${1:-build}
OBJ=$BUILD/obj/src
[ -d "$OBJ" ] || { echo "layers: no objects under $OBJ (build first)"; echo "0 passed, 1 failed"; exit 1; }
command -v nm >/dev/null 2>&1 || { echo "layers: nm not found"; echo "0 passed, 1 failed"; exit 1; }
T=$(mktemp -d "${TMPDIR:-/tmp}/cxla_layers.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT INT TERM

# FOLDER: the folders it may call (besides itself). Keep in step with architecture.md.
allowed() {
  case $1 in
    util) echo "" ;;
    core) echo "util" ;;
    ir) echo "util core" ;;
    text) echo "util core ir" ;;
    stablehlo) echo "util core ir" ;;
    interp) echo "util core ir" ;;
    passes) echo "util core ir interp text" ;;
    grad) echo "util core ir" ;;
    codegen) echo "util core ir" ;;
    rt) echo "util core ir" ;;
    backend/cpu) echo "util core ir text interp passes codegen rt" ;;
    backend/gpu) echo "util core ir text interp passes codegen rt" ;;
    runtime) echo "util core ir text interp passes codegen rt backend/cpu backend/gpu" ;;
    api) echo "util core ir text stablehlo interp passes grad codegen rt backend/cpu backend/gpu runtime" ;;
    *) echo "?" ;;
  esac
}

# The objects of folder $1 whose sources still exist (a moved file leaves its old object).
objs() {
  find "$OBJ/$1" -maxdepth 1 -name '*.o' | while read -r o; do
    [ -f "src/$1/$(basename "$o" .o).c" ] && echo "$o"
  done
}

FOLDERS="util core ir text stablehlo interp passes grad codegen rt backend/cpu backend/gpu runtime api"
for d in $FOLDERS; do
  [ -d "$OBJ/$d" ] || continue
  objs "$d" | xargs nm -g --defined-only 2>/dev/null |
    awk -v d="$d" 'NF == 3 && $2 ~ /^[TDBRV]$/ { print $3, d }' >>"$T/defs"
done
sort -u -k1,1 "$T/defs" >"$T/defs.sorted"

passed=0 failed=0
for d in $FOLDERS; do
  [ -d "$OBJ/$d" ] || continue
  objs "$d" | xargs nm -u 2>/dev/null | awk 'NF >= 2 { print $2 }' | sort -u >"$T/undef"
  ok=$(allowed "$d")
  bad=$(join "$T/undef" "$T/defs.sorted" | while read -r sym owner; do
    [ "$owner" = "$d" ] && continue
    case " $ok " in *" $owner "*) ;; *) echo "$owner:$sym" ;; esac
  done | sort -u | tr '\n' ' ')
  if [ -z "$bad" ]; then
    passed=$((passed + 1)); echo "ok   layers_$d (calls only: ${ok:-nothing else})"
  else
    failed=$((failed + 1)); echo "FAIL layers_$d: calls outside ${ok:-nothing}: $bad"
  fi
done
# tools/ (the CLI) reaches the library through cxla.h and one stated tooling header only.
bad=$(grep -Hn '^#include "' tools/*.c tools/*.h 2>/dev/null |
  grep -v '#include "\(cxla\.h\|cli\.h\|api/tooling\.h\)"' | tr '\n' ' ')
if [ -z "$bad" ]; then
  passed=$((passed + 1)); echo "ok   layers_tools (includes only cxla.h and api/tooling.h)"
else
  failed=$((failed + 1)); echo "FAIL layers_tools: includes beyond cxla.h and api/tooling.h: $bad"
fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
