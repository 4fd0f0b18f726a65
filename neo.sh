#!/usr/bin/env bash
# Neo's two commands. Each installs what the machine lacks (Debian 12, apt) and
# builds what is missing into build/ before it runs.
#
#   ./neo.sh run [FILE.neo]   import an example network (default examples/mlp.neo),
#                             verify it and print its neo IR
#   ./neo.sh test             run every test (lit, gtest)
set -euo pipefail
root=$(cd "$(dirname "$0")" && pwd)
build=${NEO_BUILD_DIR:-$root/build}
export NEO_BUILD_DIR=$build

cmd=${1:-}
case "$cmd" in
  run)
    shift
    file=${1:-$root/examples/mlp.neo}
    "$root/scripts/build.sh" neo-translate neo-opt >/dev/null
    "$build/bin/neo-translate" --import-neo "$file" | "$build/bin/neo-opt" --verify-each
    ;;
  test)
    "$root/scripts/build.sh"
    "$root/scripts/build.sh" check-neo
    ;;
  *)
    sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
