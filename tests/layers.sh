#!/bin/sh
# layers.sh — checks that the folders of src/ call each other only as
# docs/design/architecture.md allows, from the symbols the compiled objects define and use
# (nm), so that a call into a higher layer fails the build's tests instead of creeping in.
# Usage: tests/layers.sh [BUILD]   (default build). Prints one line per folder and
# "N passed, N failed".
set -u
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
    ir) echo "util" ;;
    text) echo "util ir" ;;
    stablehlo) echo "util ir" ;;
    interp) echo "util ir" ;;
    passes) echo "util ir interp text" ;;
    grad) echo "util ir" ;;
    codegen) echo "util ir" ;;
    backend) echo "util ir text interp passes codegen runtime" ;;
    runtime) echo "util ir text interp passes codegen backend" ;;
    api) echo "util ir text stablehlo interp passes grad codegen backend runtime" ;;
    *) echo "?" ;;
  esac
}

FOLDERS="util ir text stablehlo interp passes grad codegen backend runtime api"
for d in $FOLDERS; do
  [ -d "$OBJ/$d" ] || continue
  find "$OBJ/$d" -name '*.o' -exec nm -g --defined-only {} + 2>/dev/null |
    awk -v d="$d" 'NF == 3 && $2 ~ /^[TDBRV]$/ { print $3, d }' >>"$T/defs"
done
sort -u -k1,1 "$T/defs" >"$T/defs.sorted"

passed=0 failed=0
for d in $FOLDERS; do
  [ -d "$OBJ/$d" ] || continue
  find "$OBJ/$d" -name '*.o' -exec nm -u {} + 2>/dev/null | awk 'NF >= 2 { print $2 }' | sort -u >"$T/undef"
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
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
