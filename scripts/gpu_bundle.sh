#!/bin/sh
# gpu_bundle.sh — the CLI and the test binary for a GPU machine that has the NVIDIA driver but
# not cxla's build dependencies (a lent machine with another distribution): LLVM, OpenBLAS and
# FFTW linked statically, without Open MPI (collectives then run one replica), stripped and
# xz-compressed into build/gpu-bundle/ with the two shared libraries they still need.
# tests/gpu/device_run.sh unpacks and runs them there.
set -eu
cd "$(dirname "$0")/.."
B=build/gpu-static
OUT=build/gpu-bundle
llvm_libs=$(llvm-config-19 --link-static --libs | tr ' ' '\n' | grep -v Polly | tr '\n' ' ')
make -j2 BUILD=$B MPI_LIBS= LIBS="-L$(llvm-config-19 --libdir) -L/usr/lib/x86_64-linux-gnu/openblas-pthread \
  -Wl,--gc-sections -Wl,-Bstatic $llvm_libs -lopenblas -lfftw3f_threads -lfftw3_threads -lfftw3f -lfftw3 -lz -lzstd -Wl,-Bdynamic \
  -lgfortran -lstdc++ -lm -ldl -lpthread -lrt" $B/cxla $B/cxla_tests
rm -rf $OUT
mkdir -p $OUT/lib
for bin in cxla cxla_tests; do
  strip -o $OUT/$bin $B/$bin
  xz -T2 -6 $OUT/$bin
done
cc -std=c11 -O2 -o $OUT/lt_direct bench/gpu/lt_direct.c -ldl
for lib in libgfortran.so.5 libquadmath.so.0; do cp -L "/usr/lib/x86_64-linux-gnu/$lib" $OUT/lib/; done
du -sh $OUT
