#!/usr/bin/env bash
# Configures (once) and builds Neo into build/ with Ninja against Debian's LLVM/MLIR 22.
# Usage: scripts/build.sh [ninja targets...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
build=${NEO_BUILD_DIR:-$root/build}
llvm_config=$(command -v llvm-config-22)
# clang-22 at -O2: a cold build takes about 40% less time than with g++ -O3
# (measured on lib/Pipelines/CpuPipeline.cpp: 29 s against 49 s), and the
# tests' time goes to libMLIR/libLLVM and JIT-compiled code, not to ours.
# NEO_CXX / NEO_CC / NEO_CXX_FLAGS_RELEASE override.
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" \
    -DCMAKE_BUILD_TYPE=${NEO_BUILD_TYPE:-Release} \
    -DCMAKE_C_COMPILER="${NEO_CC:-clang-22}" -DCMAKE_CXX_COMPILER="${NEO_CXX:-clang++-22}" \
    -DCMAKE_CXX_FLAGS_RELEASE="${NEO_CXX_FLAGS_RELEASE:--O2 -DNDEBUG}" \
    -DCMAKE_C_FLAGS_RELEASE="${NEO_CXX_FLAGS_RELEASE:--O2 -DNDEBUG}" \
    -DMLIR_DIR="$($llvm_config --libdir)/cmake/mlir" \
    -DLLVM_EXTERNAL_LIT="$($llvm_config --bindir)/lit" \
    -DPython3_EXECUTABLE=/usr/bin/python3 \
    ${NEO_CMAKE_ARGS:-} >/dev/null
fi
jobs=${NEO_JOBS:-$(nproc)}
# One build at a time on this machine (several agents may share a checkout).
exec 9>"${NEO_BUILD_LOCK:-/tmp/neo-build.lock}"
flock 9
ninja -C "$build" -j "$jobs" "$@"
