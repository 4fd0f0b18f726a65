#!/usr/bin/env bash
# Builds Neo's libFuzzer targets (ASan + UBSan, clang-22) into build-asan/ and
# runs each for SECONDS (default 60), two at a time on two cores.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]
#
# Targets: neo-frontend-fuzzer, neo-gen-fuzzer, neo-ir-fuzzer,
# neo-pipeline-fuzzer, neo-options-fuzzer, neo-npy-fuzzer, neo-tuning-fuzzer
# (default: all). CI runs `scripts/fuzz.sh 30`; a long run is
# `scripts/fuzz.sh 600` (docs/testing.md). Inputs are up to 64 KiB
# (-max_len); each must finish in 20 s (-timeout). Each starts from its seed
# corpus fuzz/corpus/TARGET/ (read-only) plus what earlier runs found in
# build-asan/fuzz/corpus/TARGET/. A finding (crash, leak, timeout, sanitizer
# report) is saved under build-asan/fuzz/artifacts/TARGET/ and the script
# exits 1; reproduce it with `build-asan/bin/TARGET FILE`.
# NEO_ASAN_BUILD_DIR overrides the build directory, NEO_FUZZ_JOBS the number
# of targets run at once.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-60}
shift || true
all_targets=(neo-frontend-fuzzer neo-gen-fuzzer neo-ir-fuzzer neo-pipeline-fuzzer
             neo-options-fuzzer neo-npy-fuzzer neo-tuning-fuzzer)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")

build=$("$root/scripts/configure-asan.sh")
# Only the fuzz targets and the libraries they link (not the tools or tests).
exec 9>"${NEO_BUILD_LOCK:-/tmp/neo-build.lock}"
flock 9
ninja -C "$build" -j "${NEO_JOBS:-$(nproc)}" "${targets[@]}"
flock -u 9

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allow_user_poisoning=0:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export ASAN_SYMBOLIZER_PATH=${ASAN_SYMBOLIZER_PATH:-$(command -v llvm-symbolizer-22 || true)}

out=$build/fuzz
run_one() {
  local t=$1
  local work=$out/corpus/$t artifacts=$out/artifacts/$t/ log=$out/logs/$t.log
  mkdir -p "$work" "$artifacts" "$out/logs"
  local dict=()
  [ -f "$root/fuzz/dict/$t.dict" ] && dict=(-dict="$root/fuzz/dict/$t.dict")
  # -timeout: an input that takes longer is a hang; -rss_limit_mb: an
  # input that needs more memory is an unchecked huge allocation; -max_len:
  # inputs up to 64 KiB (the targets have no size caps of their own).
  if "$build/bin/$t" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=3072 \
       -max_len=65536 -print_final_stats=1 -artifact_prefix="$artifacts" "${dict[@]}" \
       "$work" "$root/fuzz/corpus/$t" >"$log" 2>&1; then
    echo "[fuzz] $t: clean ($(grep -a -m1 -o 'stat::number_of_executed_units: *[0-9]*' "$log" |
         grep -a -o '[0-9]*$') runs in ${seconds}s)"
  else
    echo "[fuzz] $t: FINDING (log: $log)"
    tail -n 40 "$log"
    return 1
  fi
}

jobs=${NEO_FUZZ_JOBS:-$(nproc)}
rm -f "$out"/logs/*.failed
for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  (run_one "$t" || touch "$out/logs/$t.failed") &
done
wait
if compgen -G "$out/logs/*.failed" >/dev/null; then
  exit 1
fi
