#!/bin/sh
# package_test.sh BUILD — cxla as a C package (part of `make test`):
#   - libcxla.so exports only the calls cxla.h declares, and every one of them (nm);
#   - one version: the header's CXLA_VERSION_* = soname = file name = cxla --version;
#   - `make install` into a temporary DESTDIR installs every file, and a C program built through
#     pkg-config alone (shared, and static through Libs.private) runs against it.
# Ends with "N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 2
BUILD=${1:-build}
PASSED=0
FAILED=0
ok() { PASSED=$((PASSED + 1)); echo "ok   $1"; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL $1"; }
check() { name=$1; shift; if "$@"; then ok "$name"; else fail "$name"; fi; }

ver() { sed -n "s/^#define CXLA_VERSION_$1  *\([0-9][0-9]*\).*/\1/p" include/cxla.h; }
VERSION="$(ver MAJOR).$(ver MINOR).$(ver PATCH)"
MAJOR=$(ver MAJOR)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cxla-package.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

# --- exports ---
SO="$BUILD/libcxla.so.$VERSION"
if [ ! -f "$SO" ]; then
  fail "$SO exists (build it first)"
  echo "$PASSED passed, $FAILED failed"
  exit 1
fi
# The linker's own markers (__bss_start, _edata, _end, _init, _fini) are not the library's.
nm -D --defined-only "$SO" | awk '{ print $NF }' | grep -vxE '__bss_start|_edata|_end|_init|_fini' | sort -u > "$TMP/exported"
grep -vE '^cxla_' "$TMP/exported" > "$TMP/foreign"
if [ -s "$TMP/foreign" ]; then
  fail "libcxla.so exports only cxla_* symbols ($(wc -l < "$TMP/foreign") others, e.g. $(head -n 5 "$TMP/foreign" | tr '\n' ' '))"
else
  ok "libcxla.so exports only cxla_* symbols ($(wc -l < "$TMP/exported"))"
fi
grep -oE '\bcxla_[a-z0-9_]+\(' include/cxla.h | tr -d '(' | sort -u > "$TMP/declared"
comm -23 "$TMP/declared" "$TMP/exported" > "$TMP/unexported"
if [ -s "$TMP/unexported" ]; then
  fail "every call cxla.h declares is exported (missing: $(tr '\n' ' ' < "$TMP/unexported"))"
else
  ok "every call cxla.h declares is exported ($(wc -l < "$TMP/declared"))"
fi
check "soname is libcxla.so.$MAJOR" sh -c "readelf -d '$SO' | grep -q 'SONAME.*\[libcxla.so.$MAJOR\]'"
check "$BUILD/libcxla.so -> libcxla.so.$MAJOR -> libcxla.so.$VERSION" \
  sh -c "[ \"\$(readlink '$BUILD/libcxla.so')\" = libcxla.so.$MAJOR ] && [ \"\$(readlink '$BUILD/libcxla.so.$MAJOR')\" = libcxla.so.$VERSION ]"
check "cxla --version says $VERSION" sh -c "[ \"\$('$BUILD/cxla' --version)\" = 'cxla $VERSION' ]"

# --- make install into a DESTDIR ---
PREFIX=/opt/cxla-test
DEST="$TMP/dest"
if make --no-print-directory -s BUILD="$BUILD" PREFIX=$PREFIX DESTDIR="$DEST" install > "$TMP/install.log" 2>&1; then
  ok "make install PREFIX=$PREFIX DESTDIR=..."
else
  cat "$TMP/install.log"
  fail "make install PREFIX=$PREFIX DESTDIR=..."
fi
R="$DEST$PREFIX"
for f in include/cxla.h lib/libcxla.so.$VERSION lib/libcxla.a lib/libcxla_pjrt.so lib/pkgconfig/cxla.pc bin/cxla share/man/man1/cxla.1; do
  check "installed $f" test -f "$R/$f"
done
check "installed lib/libcxla.so.$MAJOR and lib/libcxla.so (links)" \
  sh -c "[ \"\$(readlink '$R/lib/libcxla.so.$MAJOR')\" = libcxla.so.$VERSION ] && [ \"\$(readlink '$R/lib/libcxla.so')\" = libcxla.so.$MAJOR ]"
check "the man page has the commands, their options, the flags and --version" sh -c "grep -q '^\.TH CXLA' '$R/share/man/man1/cxla.1' && grep -q '^\.SH \"COMMAND RUN\"' '$R/share/man/man1/cxla.1' && grep -q 'random\\\\-inputs\|random-inputs' '$R/share/man/man1/cxla.1' && grep -q 'threads' '$R/share/man/man1/cxla.1' && grep -q 'version' '$R/share/man/man1/cxla.1'"
check "installed cxla runs" sh -c "[ \"\$('$R/bin/cxla' --version)\" = 'cxla $VERSION' ]"

# --- a program built through pkg-config only ---
# --define-prefix: the .pc file says /opt/cxla-test; pkg-config takes the prefix from where the
# file actually is (the DESTDIR copy), as it would for a relocated install.
export PKG_CONFIG_PATH="$R/lib/pkgconfig"
PC="pkg-config --define-prefix"
check "pkg-config --modversion cxla = $VERSION" sh -c "[ \"\$($PC --modversion cxla)\" = '$VERSION' ]"
LIBDIR=$($PC --variable=libdir cxla)
CC=${CC:-cc}
if $CC -std=c11 -Wall -Wextra -Werror tests/package/hello.c $($PC --cflags cxla) $($PC --libs cxla) \
     -o "$TMP/hello" 2> "$TMP/cc.log"; then
  ok "cc hello.c \$(pkg-config --cflags --libs cxla)"
  if LD_LIBRARY_PATH="$LIBDIR" "$TMP/hello" && LD_LIBRARY_PATH="$LIBDIR" ldd "$TMP/hello" | grep -q "libcxla.so.$MAJOR => $LIBDIR/"; then
    ok "hello runs against the installed libcxla.so.$MAJOR"
  else
    LD_LIBRARY_PATH="$LIBDIR" ldd "$TMP/hello"
    fail "hello runs against the installed libcxla.so.$MAJOR"
  fi
else
  cat "$TMP/cc.log"
  fail "cc hello.c \$(pkg-config --cflags --libs cxla)"
fi
# Static: libcxla.a, and Libs.private for what it needs (LLVM, OpenBLAS, zlib, libm, ...).
STATIC_LIBS=$($PC --static --libs cxla | sed 's/-lcxla /-l:libcxla.a /')
if $CC -std=c11 tests/package/hello.c $($PC --cflags cxla) $STATIC_LIBS -o "$TMP/hello_static" 2> "$TMP/cc.log"; then
  ok "cc hello.c with libcxla.a and \$(pkg-config --static --libs cxla)"
  if "$TMP/hello_static" && ! ldd "$TMP/hello_static" | grep -q libcxla; then
    ok "the static hello runs without libcxla.so"
  else
    fail "the static hello runs without libcxla.so"
  fi
else
  cat "$TMP/cc.log"
  fail "cc hello.c with libcxla.a and \$(pkg-config --static --libs cxla)"
fi

echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
