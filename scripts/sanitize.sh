#!/usr/bin/env bash
# Builds Neo with AddressSanitizer and UndefinedBehaviorSanitizer (clang-22,
# the `asan` preset of CMakePresets.json, in build-asan/) and runs the whole
# unit and lit suite under them (docs/testing.md).
#
#   scripts/sanitize.sh [LIT ARGS...]     e.g. --filter Frontend
#
# libMLIR.so and libLLVM.so are not instrumented. ASAN_OPTIONS defaults:
#   allow_user_poisoning=0    LLVM's BumpPtrAllocator poisons its slabs in
#                             instrumented code but allocates from them in
#                             libMLIR.so too; without this, reads of attributes
#                             that libMLIR.so allocated look like use-after-poison
#   allocator_may_return_null=1   a failed huge allocation is a null pointer
#                             (which Neo reports), not an ASan abort
# NEO_ASAN_BUILD_DIR overrides the build directory.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$("$root/scripts/configure-asan.sh")

exec 9>"${NEO_BUILD_LOCK:-/tmp/neo-build.lock}"
flock 9
ninja -C "$build" -j "${NEO_JOBS:-$(nproc)}" all mlir-doc
flock -u 9

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allow_user_poisoning=0:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export ASAN_SYMBOLIZER_PATH=${ASAN_SYMBOLIZER_PATH:-$(command -v llvm-symbolizer-22 || true)}
lit=$(llvm-config-22 --bindir)/lit
"$lit" -sv "$build/test" "$@"
