#!/usr/bin/env bash
# Installs everything a fresh Debian 12 machine lacks to build and test Neo.
# Idempotent: when every package is present it only runs `dpkg-query` and exits.
set -euo pipefail

PKGS=(
  libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools clang-22 lld-22
  clang-format-22 clang-tidy-22 libclang-rt-22-dev
  cmake ninja-build ccache g++ libgtest-dev libgmock-dev nlohmann-json3-dev
  libomp-22-dev libglpk-dev libdnnl-dev libopenblas-dev python3-matplotlib python3-sklearn python3-numpy python3-pytest python3-torch python3-networkx python3-scipy zlib1g-dev libzstd-dev libedit-dev libcurl4-openssl-dev libxml2-dev
)

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "[neo] installing: ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "[neo] dependencies installed"
