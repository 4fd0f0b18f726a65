#!/usr/bin/env bash
# Configures (once) and builds Neo into build/ with Ninja against Debian's LLVM/MLIR 22.
# Usage: scripts/build.sh [ninja targets...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
build=${NEO_BUILD_DIR:-$root/build}
llvm_config=$(command -v llvm-config-22)
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" \
    -DCMAKE_BUILD_TYPE=${NEO_BUILD_TYPE:-Release} \
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
