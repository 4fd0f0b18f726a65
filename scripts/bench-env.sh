#!/bin/bash
# Creates (once) the virtual environment the benchmark peers run in, from PyPI:
# PyTorch 2.x (eager and torch.compile), JAX (CPU), numpy, pytest (for the
# torch.compile tests of neo.torch, test/Python/torch2.test) and scikit-learn
# (the digits data of examples/torch_milstm.py --compile). Prints the path
# of the venv's python on stdout; everything else goes to stderr.
#
#   scripts/bench-env.sh            # create or reuse; prints .../bin/python
#
# NEO_BENCH_VENV  where the venv lives (default ~/.cache/neo/bench-venv)
# PIP_CACHE_DIR   pip's download cache (default ~/.cache/neo/pip)
#
# PyPI's torch wheel pulls about 3 GB of CUDA libraries; it runs on the CPU
# fine. A second call, with everything installed, only checks a stamp file
# holding the installed versions and returns at once.
set -euo pipefail
venv=${NEO_BENCH_VENV:-$HOME/.cache/neo/bench-venv}
stamp=$venv/.neo-bench-ok
# The package set; changing it invalidates the stamp.
pkgs=("torch>=2.1,<3" "jax[cpu]>=0.4" "numpy" "pytest" "scikit-learn")
want="${pkgs[*]}"

if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(head -n1 "$stamp")" = "$want" ]; then
  echo "$venv/bin/python"
  exit 0
fi

py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3)
if ! "$py" -c 'import venv, ensurepip' 2>/dev/null; then
  echo "bench-env: installing python3-venv" >&2
  if [ "$(id -u)" -eq 0 ]; then
    apt-get update >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y python3-venv >&2
  else
    sudo apt-get update >&2 && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y python3-venv >&2
  fi
fi

if [ ! -x "$venv/bin/python" ]; then
  echo "bench-env: creating $venv" >&2
  mkdir -p "$(dirname "$venv")"
  "$py" -m venv "$venv" >&2
fi
export PIP_CACHE_DIR=${PIP_CACHE_DIR:-$HOME/.cache/neo/pip}
"$venv/bin/python" -m pip install --disable-pip-version-check -q --upgrade pip >&2
echo "bench-env: installing ${pkgs[*]} (torch pulls ~3 GB of CUDA wheels)" >&2
"$venv/bin/python" -m pip install --disable-pip-version-check "${pkgs[@]}" >&2
versions=$("$venv/bin/python" -c 'import torch, jax, numpy; print("torch", torch.__version__, "jax", jax.__version__, "numpy", numpy.__version__)')
echo "bench-env: $versions" >&2
printf '%s\n%s\n' "$want" "$versions" > "$stamp"
echo "$venv/bin/python"
