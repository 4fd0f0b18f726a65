#!/usr/bin/env bash
# Neo's two commands. Each installs what the machine lacks (Debian 12, apt) and
# builds what is missing into build/ before it runs.
#
#   ./neo.sh run [FILE.neo]   train the digits example (an MLP with a custom
#                             activation and normalization, Adam, all in neo) with
#                             a progress bar, writing digits_loss.png; with FILE,
#                             compile that network for the CPU, run it forward,
#                             print its outputs and time, and check them
#   ./neo.sh test             run every test (lit, gtest)
#   ./neo.sh bench [opts]     run the benchmark harness (docs/benchmarks.md);
#                             --all first: also SpMM, SDDMM, GCN, GAT, DLRM and
#                             neo.torch
set -euo pipefail
root=$(cd "$(dirname "$0")" && pwd)
build=${NEO_BUILD_DIR:-$root/build}
export NEO_BUILD_DIR=$build

cmd=${1:-}
case "$cmd" in
  run)
    shift
    if [ $# -eq 0 ] || [[ "$1" == --* ]]; then
      "$root/scripts/build.sh" NeoCAPI >/dev/null
      NEO_LIBRARY="$build/lib/libNeoCAPI.so" /usr/bin/python3 "$root/examples/train_digits.py" "$@"
    else
      file=$1
      shift
      "$root/scripts/build.sh" neo-run >/dev/null
      "$build/bin/neo-run" "$file" --repeat 20 --check "$@"
    fi
    ;;
  test)
    "$root/scripts/build.sh"
    "$root/scripts/build.sh" check-neo
    ;;
  bench)
    shift
    all=0
    if [ "${1:-}" = --all ]; then
      all=1
      shift
    fi
    "$root/scripts/build.sh" neo-run neo-opt neo-translate >/dev/null
    # The peers' venv (PyTorch 2.x, JAX from PyPI); created once, then quick.
    # If it cannot be made, the peers show as n/a in the report.
    py=$("$root/scripts/bench-env.sh") || py=
    /usr/bin/python3 "$root/bench/run.py" ${py:+--python "$py"} "$@"
    if [ $all = 1 ]; then
      # The workloads with index reads and the PyTorch bridge, each writing
      # its own page (about 30 minutes more on 2 cores).
      "$root/scripts/build.sh" NeoCAPI >/dev/null
      export NEO_LIBRARY="$build/lib/libNeoCAPI.so"
      /usr/bin/python3 "$root/bench/spmm.py" --out "$root/docs/sparse-benchmarks.md"
      /usr/bin/python3 "$root/bench/spmm.py" --backward \
        --out "$root/docs/sparse-benchmarks-backward.md"
      /usr/bin/python3 "$root/bench/spmm.py" --sddmm --out "$root/docs/sddmm-benchmarks.md"
      /usr/bin/python3 "$root/bench/gcn.py" --out "$root/docs/gcn-benchmarks.md"
      /usr/bin/python3 "$root/bench/gat.py" --out "$root/docs/gat-benchmarks.md"
      /usr/bin/python3 "$root/bench/dlrm.py" --out "$root/docs/dlrm-benchmarks.md"
      if [ -n "$py" ]; then
        "$py" "$root/bench/torch_bridge.py" --threads 1,2 \
          --out "$root/docs/torch-bridge-benchmarks.md"
      fi
      # Their summary in docs/benchmarks.md, with the numbers just made.
      /usr/bin/python3 "$root/bench/summarize.py" --insert "$root/docs/benchmarks.md"
    fi
    ;;
  *)
    sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
