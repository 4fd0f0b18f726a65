#!/usr/bin/env bash
# Installs Neo (cmake --install of build/) into a fresh prefix and builds the
# out-of-tree example examples/embedding against the installed package
# (find_package(Neo)), then runs its lit tests through its own opt tool.
#
#   scripts/check-embedding.sh [PREFIX]     (default: a temporary directory)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${NEO_BUILD_DIR:-$root/build}
"$root/scripts/build.sh" >/dev/null
work=$(mktemp -d /tmp/neo-embedding.XXXXXX)
trap 'rm -rf "$work"' EXIT
prefix=${1:-$work/prefix}
cmake --install "$build" --prefix "$prefix" >/dev/null
echo "[embedding] installed Neo into $prefix"
cmake -G Ninja -S "$root/examples/embedding" -B "$work/build" \
  -DNeo_DIR="$prefix/lib/cmake/neo" -DCMAKE_BUILD_TYPE=Release >/dev/null
exec 9>"${NEO_BUILD_LOCK:-/tmp/neo-build.lock}"
flock 9
ninja -C "$work/build" -j "${NEO_JOBS:-$(nproc)}" check-my-opt
echo "[embedding] the example built against the installed package and its tests pass"
