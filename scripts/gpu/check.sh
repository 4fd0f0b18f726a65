#!/usr/bin/env bash
# The GPU check, one command on a GPU machine (driver, CMake, a C++ compiler,
# PyTorch; no LLVM/MLIR, no network):
#
#   scripts/gpu/check.sh BUNDLES [OUTDIR]
#
# builds the lean runner, runs every correctness bundle of BUNDLES (made on an
# LLVM machine by scripts/gpu/make_bundles.py) against its CPU reference
# outputs, runs compute-sanitizer on a few, then benchmarks neo against
# PyTorch (cuBLAS/cuDNN) on the benchmark bundles, checking each output
# against PyTorch. Results: OUTDIR/gpu_results.{json,md} (default $OUT or
# gpu-results).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bundles=${1:?usage: check.sh BUNDLES [OUTDIR]}
out=${2:-${OUT:-$root/gpu-results}}
runner_build=${NEO_RUNNER_BUILD:-/tmp/neo-cuda-runner-build}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
"$root/scripts/gpu/build-runner.sh" "$runner_build" >/dev/null
"$runner_build/neo-cuda-runner" --probe
PYTHONUNBUFFERED=1 python3 "$root/scripts/gpu/bench.py" "$bundles" \
  --runner "$runner_build/neo-cuda-runner" --out "$out" "${@:3}"
