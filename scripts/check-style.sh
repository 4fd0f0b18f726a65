#!/usr/bin/env bash
# Checks the formatting (.clang-format, clang-format-22) of the C and C++ lines
# that a change touches, so that the check passes on the existing tree and
# nobody has to reformat the world.
#
#   scripts/check-style.sh [BASE]   # lines changed since BASE (working tree included)
#   scripts/check-style.sh --tidy [BASE]   # also clang-tidy-22 (.clang-tidy) on them
#
# BASE defaults to the merge base with origin/main when HEAD is ahead of it,
# else to HEAD~1 (a fresh clone of main checks its last commit), else to the
# empty tree (every file). NEO_STYLE_BASE overrides it. Fix what it reports
# with `git clang-format-22 BASE`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
tidy=0
if [ "${1:-}" = "--tidy" ]; then
  tidy=1
  shift
fi
"$root/scripts/install-deps.sh"

base=${1:-${NEO_STYLE_BASE:-}}
if [ -z "$base" ]; then
  head=$(git rev-parse HEAD)
  merge_base=""
  if git rev-parse -q --verify origin/main >/dev/null; then
    merge_base=$(git merge-base HEAD origin/main || true)
  fi
  if [ -n "$merge_base" ] && [ "$merge_base" != "$head" ]; then
    base=$merge_base
  elif git rev-parse -q --verify HEAD~1 >/dev/null; then
    base=HEAD~1
  else
    base=$(git hash-object -t tree /dev/null) # the empty tree: every file
  fi
fi
echo "[style] checking lines changed since $(git rev-parse --short "$base" 2>/dev/null || echo "$base")"

out=$(git clang-format-22 --binary clang-format-22 --extensions c,h,cpp --diff "$base" || true)
case "$out" in
  "" | *"no modified files to format"* | *"did not modify any files"*)
    echo "[style] formatting ok" ;;
  *)
    echo "$out"
    echo "[style] the lines above are not formatted: run 'git clang-format-22 $base'"
    exit 1 ;;
esac

if [ "$tidy" = 1 ]; then
  build=${NEO_BUILD_DIR:-$root/build}
  [ -f "$build/compile_commands.json" ] || "$root/scripts/build.sh" >/dev/null
  git diff -U0 "$base" -- '*.cpp' |
    clang-tidy-diff-22.py -p1 -path "$build" -clang-tidy-binary clang-tidy-22 -quiet
fi
