#!/bin/sh
# dead_functions.sh [BUILD] — a part of `make test`: lists the library's functions that nothing
# calls, so that dead code is deleted instead of kept "just in case". A global function of src/
# (from nm) is used when some object refers to it (a relocation: calls from other files, function
# tables, X-macro rows) or when a line of source that is not its own declaration or definition
# names it (calls within its own file, which need no relocation). The public calls (cxla_*,
# exported for users) and the PJRT plugin's GetPjrtApi count as used. Prints one line per dead
# function and "N passed, N failed" (one check).
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=${1:-build}
[ -d "$BUILD/obj/src" ] || { echo "dead_functions: no objects under $BUILD/obj/src (build first)"; echo "0 passed, 1 failed"; exit 1; }
T=$(mktemp -d "${TMPDIR:-/tmp}/cxla_dead.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT INT TERM

# Objects of sources that still exist (a moved or deleted file leaves its old object behind).
find "$BUILD/obj" -name '*.o' | while read -r o; do
  src=${o#"$BUILD/obj/"}
  [ -f "${src%.o}.c" ] && echo "$o"
done > "$T/objs"
grep "^$BUILD/obj/src/" "$T/objs" | xargs nm -g --defined-only 2>/dev/null |
  awk 'NF == 3 && $2 == "T" && $3 !~ /^cxla_/ && $3 != "GetPjrtApi" { print $3 }' | sort -u > "$T/defs"
xargs objdump -r < "$T/objs" 2>/dev/null |
  awk 'NF >= 3 && $1 ~ /^[0-9a-f]+$/ { s = $3; sub(/[-+]0x[0-9a-f]+$/, "", s); print s }' | sort -u > "$T/refs"
comm -23 "$T/defs" "$T/refs" > "$T/candidates"

# Sources without their comments (line comments and the text of /* ... */ blocks).
find src tools tests bench examples pjrt -name '*.[ch]' 2>/dev/null | sort | xargs cat |
  awk '{
    line = $0; out = "";
    while (line != "") {
      if (inblock) { i = index(line, "*/"); if (!i) { line = ""; break } line = substr(line, i + 2); inblock = 0; continue }
      i = index(line, "/*"); j = index(line, "//");
      if (j && (!i || j < i)) { out = out substr(line, 1, j - 1); line = ""; break }
      if (i) { out = out substr(line, 1, i - 1); line = substr(line, i + 2); inblock = 1; continue }
      out = out line; line = "";
    }
    print out
  }' > "$T/code"

dead=0
while read -r f; do
  # A line declares or defines f when f is the first name on it that is followed by "(".
  uses=$(grep -w -- "$f" "$T/code" | awk -v f="$f" '{
      if (match($0, /[A-Za-z_][A-Za-z_0-9]*[ ]*\(/)) { name = substr($0, RSTART, RLENGTH); sub(/[ ]*\($/, "", name); if (name == f && $0 ~ /^[A-Za-z_]/) next }
      n++
    } END { print n + 0 }')
  if [ "$uses" -eq 0 ]; then
    echo "dead: $f (defined, never called)"
    dead=$((dead + 1))
  fi
done < "$T/candidates"
if [ "$dead" -eq 0 ]; then
  echo "ok   dead_functions (every function of src/ is called)"
  echo "1 passed, 0 failed"
else
  echo "FAIL dead_functions: $dead functions nothing calls (delete them, or call them)"
  echo "0 passed, 1 failed"
  exit 1
fi
