#!/usr/bin/env bash
# Neo's two commands. Each installs what the machine lacks (Debian 12, apt) and
# builds what is missing into build/ before it runs.
#
#   ./neo.sh run [FILE.neo]   compile an example network (default examples/mlp.neo)
#                             for the CPU, run it forward on random inputs, print
#                             its outputs and time, and check them against the
#                             reference interpreter
#   ./neo.sh test             run every test (lit, gtest)
#   ./neo.sh bench [opts]     run the benchmark harness (docs/benchmarks.md)
set -euo pipefail
root=$(cd "$(dirname "$0")" && pwd)
build=${NEO_BUILD_DIR:-$root/build}
export NEO_BUILD_DIR=$build

cmd=${1:-}
case "$cmd" in
  run)
    shift
    file=${1:-$root/examples/mlp.neo}
    shift || true
    "$root/scripts/build.sh" neo-run >/dev/null
    "$build/bin/neo-run" "$file" --repeat 20 --check "$@"
    ;;
  test)
    "$root/scripts/build.sh"
    "$root/scripts/build.sh" check-neo
    ;;
  bench)
    shift
    "$root/scripts/build.sh" neo-run neo-opt neo-translate >/dev/null
    /usr/bin/python3 "$root/bench/run.py" "$@"
    ;;
  *)
    sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
