#!/bin/sh
# bench/build.sh BUILD [SRC] — builds every benchmark program into BUILD/bench-bin against the
# library already built in BUILD (libcxla.a, libcxla.so, cxla.pc; SRC is the tree whose
# include/ and src/ it was built from, default .). The static link line comes from one place,
# pkg-config's `--static --libs cxla` on BUILD's cxla.pc, as a user's static link would: a
# library that gains a dependency cannot leave the benchmarks behind again. The MPI programs
# (allreduce, train_dp) are built with mpicc against libcxla.so when mpicc is there.
# Used by bench/run.sh (make bench) and by tests/bench/smoke.sh (make test).
set -e
cd "$(dirname "$0")/.."
BUILD=${1:-build}
SRC=${2:-.}
ABS_BUILD=$(cd "$BUILD" && pwd)
OUT="$BUILD/bench-bin"
OBJ="$OUT/obj"
mkdir -p "$OBJ"
for f in libcxla.a libcxla.so cxla.pc; do
  [ -e "$BUILD/$f" ] || { echo "bench/build.sh: $BUILD/$f is missing (make BUILD=$BUILD all $BUILD/cxla.pc)" >&2; exit 1; }
done
STATIC_LIBS=$(PKG_CONFIG_PATH="$ABS_BUILD" pkg-config --define-variable=libdir="$ABS_BUILD" --static --libs cxla |
  sed 's/-lcxla /-l:libcxla.a /')
CC=${CC:-cc}
CFLAGS_BENCH="-std=c11 -O2 -g -Wall -Wextra -Wno-missing-field-initializers -D_GNU_SOURCE -pthread"
# The peers: exactly the STREAM-style flags, and -ffast-math only for the softmax peer (libmvec expf).
gcc -std=c11 -O3 -march=native -fopenmp -Wall -Wextra -c bench/baselines.c -o "$OBJ/baselines.o"
gcc -std=c11 -O3 -march=native -fopenmp -ffast-math -Wall -Wextra -c bench/baseline_fast.c -o "$OBJ/baseline_fast.o"
for f in bench_main bench_util bench_mem bench_rows bench_blas bench_compile; do
  $CC $CFLAGS_BENCH -I"$SRC/include" -c bench/$f.c -o "$OBJ/$f.o"
done
$CC -fopenmp -o "$OUT/bench_main" "$OBJ"/bench_main.o "$OBJ"/bench_util.o "$OBJ"/bench_mem.o "$OBJ"/bench_rows.o "$OBJ"/bench_blas.o \
  "$OBJ"/bench_compile.o "$OBJ"/baselines.o "$OBJ"/baseline_fast.o $STATIC_LIBS
# The runtime micro-benchmarks reach into src/rt's headers (they time the run-time routines).
$CC $CFLAGS_BENCH -I"$SRC/include" -I"$SRC/src" bench/bench_runtime.c -o "$OUT/bench_runtime" $STATIC_LIBS
# The flax MLP step's GEMMs on cxla's pool against OpenBLAS's and oneDNN's own threads (issue 20).
$CC $CFLAGS_BENCH -I"$SRC/include" -I"$SRC/src" -c bench/bench_gemm_pool.c -o "$OBJ/bench_gemm_pool.o"
$CC -o "$OUT/bench_gemm_pool" "$OBJ/bench_gemm_pool.o" "$OBJ/bench_util.o" $STATIC_LIBS
# cxla's f32 sin/cos/tan/pow against glibc's libmvec (AVX2 variants) and libm, x86_64 with AVX2 only.
if [ "$(uname -m)" = x86_64 ] && grep -q avx2 /proc/cpuinfo 2>/dev/null; then
  $CC $CFLAGS_BENCH -mavx2 -mfma -I"$SRC/include" bench/bench_vecmath.c -o "$OUT/bench_vecmath" $STATIC_LIBS -lmvec
  # f64: --cpu-libmvec=on against off, ulps against long double libm
  $CC $CFLAGS_BENCH -I"$SRC/include" bench/bench_vecmath_f64.c -o "$OUT/bench_vecmath_f64" $STATIC_LIBS
fi
# Which library for which GEMM and convolution shape (bench_libs.c): OpenBLAS (cxla's) against
# BLIS, libxsmm and oneDNN, built when their Debian -dev packages are installed (libblis-dev,
# libxsmm-dev; libdnnl-dev is cxla's own). BLIS's headers stay in bench_libs_peers.c (its
# cblas.h must not meet OpenBLAS's); OpenBLAS comes first on the link line, so cblas_* are its.
BLIS_INC=/usr/include/x86_64-linux-gnu/blis-pthread
BLIS_LIB=/usr/lib/x86_64-linux-gnu/blis-pthread
if [ -f "$BLIS_INC/blis.h" ] && [ -f "$BLIS_LIB/libblis.so.4" ] && [ -f /usr/include/libxsmm.h ] &&
  [ -f /usr/include/oneapi/dnnl/dnnl.h ]; then
  $CC $CFLAGS_BENCH -fopenmp -I"$SRC/include" -I"$SRC/src" -c bench/bench_libs.c -o "$OBJ/bench_libs.o"
  $CC $CFLAGS_BENCH -isystem "$BLIS_INC" -c bench/bench_libs_peers.c -o "$OBJ/bench_libs_peers.o"
  $CC -fopenmp -o "$OUT/bench_libs" "$OBJ/bench_libs.o" "$OBJ/bench_libs_peers.o" "$OBJ/bench_util.o" $STATIC_LIBS \
    -L"$BLIS_LIB" -Wl,-rpath,"$BLIS_LIB" -l:libblis.so.4 -lxsmm -ldnnl -lstdc++
else
  rm -f "$OUT/bench_libs"
fi
# LLVM-only compile-time diagnostic (bench/diag_llvm.c), run by hand on a --dump-to IR file.
$CC -std=c11 -O2 -Wall -Wextra $(llvm-config-19 --cflags) bench/diag_llvm.c -o "$OUT/diag_llvm" \
  -L"$(llvm-config-19 --libdir)" -Wl,-rpath,"$(llvm-config-19 --libdir)" -lLLVM-19
if command -v mpicc >/dev/null 2>&1; then
  mpicc -std=c11 -O2 -I"$SRC/include" bench/allreduce.c -L"$ABS_BUILD" -lcxla -lm -Wl,-rpath,"$ABS_BUILD" \
    -o "$OUT/bench_allreduce"
  mpicc -std=c11 -O2 -I"$SRC/include" -Iexamples bench/train_dp.c examples/train_models.c -L"$ABS_BUILD" -lcxla -lm \
    -Wl,-rpath,"$ABS_BUILD" -o "$OUT/bench_train_dp"
fi
