#!/usr/bin/env bash
# Builds the lean neo-cuda-runner (tools/neo-cuda-runner) on a machine without
# LLVM or MLIR, such as a GPU machine that got only a copy of the repository:
# it needs CMake >= 3.18, a C++17 compiler and Ninja or Make; not the CUDA
# toolkit (libcuda is opened at run time) and not nlohmann-json (a copy is in
# third_party/).
#
# Usage: scripts/gpu/build-runner.sh [BUILD_DIR] [--test]
#   BUILD_DIR  where to build (default: build-runner in the repository)
#   --test     then run the checks that need a GPU: --probe, and the test
#              bundles of test/Tools/neo-cuda-runner/Inputs with --check
# Environment: CXX, CMAKE_BUILD_TYPE (default Release), NEO_CMAKE_ARGS.
# The runner is BUILD_DIR/neo-cuda-runner.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=""
test=0
for arg in "$@"; do
  case "$arg" in
    --test) test=1 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    -*) echo "build-runner.sh: unknown option '$arg'" >&2; exit 2 ;;
    *) [ -z "$build" ] || { echo "build-runner.sh: one build directory" >&2; exit 2; }
       build=$arg ;;
  esac
done
build=${build:-$root/build-runner}

if command -v ninja >/dev/null 2>&1; then
  generator=Ninja
else
  generator="Unix Makefiles"
fi
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root/tools/neo-cuda-runner" -B "$build" -G "$generator" \
    -DCMAKE_BUILD_TYPE="${CMAKE_BUILD_TYPE:-Release}" ${NEO_CMAKE_ARGS:-}
fi
cmake --build "$build" -j "$(nproc 2>/dev/null || echo 2)"
runner="$build/neo-cuda-runner"
echo "built $runner"

if [ "$test" = 1 ]; then
  inputs="$root/test/Tools/neo-cuda-runner/Inputs"
  "$runner" --probe
  for bundle in vadd features; do
    "$runner" "$inputs/$bundle" --check --repeat 20
    "$runner" "$inputs/$bundle" --check --repeat 20 --graph
  done
  "$runner" "$inputs/vadd" --check --image ptx
  echo "all GPU checks passed"
fi
