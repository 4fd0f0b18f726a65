#!/usr/bin/env bash
# Regenerates the ODS-generated reference (dialect ops, passes) into docs/reference/.
# test/docs/reference-up-to-date.test fails when they are stale.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh" mlir-doc >/dev/null
build=${NEO_BUILD_DIR:-$root/build}
mkdir -p "$root/docs/reference"
find "$build/docs" -name '*.md' | while read -r f; do
  cp "$f" "$root/docs/reference/$(basename "$f")"
done
echo "docs/reference updated"
