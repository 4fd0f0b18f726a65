#!/usr/bin/env bash
# Configures (once) the ASan + UBSan build with the fuzz targets (the `asan`
# preset of CMakePresets.json) and prints its directory. Used by
# scripts/sanitize.sh and scripts/fuzz.sh; NEO_ASAN_BUILD_DIR overrides the
# directory (default build-asan/).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh" >&2
build=${NEO_ASAN_BUILD_DIR:-$root/build-asan}
if [ ! -f "$build/build.ninja" ]; then
  # NEO_CMAKE_ARGS: extra cache settings, as for scripts/build.sh.
  (cd "$root" && cmake --preset asan -B "$build" ${NEO_CMAKE_ARGS:-} >/dev/null)
fi
echo "$build"
