#!/usr/bin/env python3
"""Regenerates the GPU test bundles of test/Tools/neo-cuda-runner/Inputs.

  vadd/      a hand-written PTX vector add (vadd/kernels.ptx, kept as is) and
             its cubin for sm_90 (ptxas)
  features/  kernels.cu compiled to PTX by nvcc (no cubin: the driver JITs it),
             exercising every argument kind, >48 KiB of dynamic shared memory,
             an alias, fills, bf16 inputs and f16 outputs

Each gets manifest.json, inputs/*.npy and expected/*.npy (computed here with
numpy, in the kernels' own order of operations). The outputs are checked in,
so this runs only when the kernels change; it needs the CUDA toolkit (nvcc,
ptxas) and numpy, but no GPU. bf16 tensors are stored as float32 .npy files.

Usage: make-bundles.py [--cuda /usr/local/cuda]
"""
import argparse
import json
import os
import re
import subprocess

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def write_manifest(directory, manifest):
    """manifest.json with one buffer or launch per line."""
    lines = []
    for key, value in manifest.items():
        if isinstance(value, list):
            items = ",\n".join("    " + json.dumps(v) for v in value)
            lines.append(f'  "{key}": [\n{items}\n  ]')
        else:
            lines.append(f"  {json.dumps(key)}: {json.dumps(value)}")
    with open(os.path.join(directory, "manifest.json"), "w") as f:
        f.write("{\n" + ",\n".join(lines) + "\n}\n")


def save(directory, sub, name, array):
    os.makedirs(os.path.join(directory, sub), exist_ok=True)
    np.save(os.path.join(directory, sub, name + ".npy"), array)


def bf16_round(a):
    """float32 values rounded to the nearest bfloat16 (ties to even), as float32."""
    bits = np.asarray(a, np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return bits.astype(np.uint32).view(np.float32)


def make_vadd(cuda):
    d = os.path.join(HERE, "vadd")
    subprocess.run([os.path.join(cuda, "bin", "ptxas"), "-arch=sm_90",
                    os.path.join(d, "kernels.ptx"), "-o", os.path.join(d, "kernels.cubin")],
                   check=True)
    n = 1000
    write_manifest(d, {
        "format": "neo-bundle",
        "version": 1,
        "function": "vadd",
        "chip": "sm_90",
        "ptx": "kernels.ptx",
        "cubin": "kernels.cubin",
        "buffers": [
            {"name": "a", "role": "input", "dtype": "f32", "shape": [n]},
            {"name": "b", "role": "input", "dtype": "f32", "shape": [n]},
            {"name": "c", "role": "output", "dtype": "f32", "shape": [n]},
        ],
        "launches": [
            {"kernel": "vadd", "grid": [(n + 255) // 256, 1, 1], "block": [256, 1, 1],
             "shared_bytes": 0,
             "args": [{"buffer": 0}, {"buffer": 1}, {"buffer": 2}, {"i32": n}]},
        ],
    })
    rng = np.random.default_rng(1)
    a = rng.uniform(-1, 1, n).astype(np.float32)
    b = rng.uniform(-1, 1, n).astype(np.float32)
    save(d, "inputs", "a", a)
    save(d, "inputs", "b", b)
    save(d, "expected", "c", (a + b).astype(np.float32))


def make_features(cuda):
    d = os.path.join(HERE, "features")
    ptx = subprocess.run([os.path.join(cuda, "bin", "nvcc"), "-ptx", "-arch=compute_75",
                          os.path.join(d, "kernels.cu"), "-o", "-"],
                         check=True, capture_output=True, text=True).stdout
    # PTX ISA 7.8 (CUDA 11.8) rather than the toolkit's newest, so that older
    # drivers JIT it too; ptxas checks that the kernels need nothing newer.
    ptx = re.sub(r"^\.version .*$", ".version 7.8", ptx, count=1, flags=re.M)
    # No build ids or paths: the file is checked in.
    ptx = re.sub(r"^//.*\n", "", ptx, flags=re.M).lstrip("\n")
    ptx = ("// The kernels of features/kernels.cu, compiled by make-bundles.py.\n" + ptx)
    with open(os.path.join(d, "kernels.ptx"), "w") as f:
        f.write(ptx)
    subprocess.run([os.path.join(cuda, "bin", "ptxas"), "-arch=sm_90",
                    os.path.join(d, "kernels.ptx"), "-o", os.devnull], check=True)

    rows, cols = 8, 32
    write_manifest(d, {
        "format": "neo-bundle",
        "version": 1,
        "function": "features",
        "chip": "sm_90",
        "ptx": "kernels.ptx",
        "buffers": [
            {"name": "x", "role": "input", "dtype": "f32", "shape": [rows, cols]},
            {"name": "w", "role": "input", "dtype": "bf16", "shape": [rows - 1]},
            {"name": "t", "role": "temp", "dtype": "f32", "shape": [rows, cols]},
            {"name": "tv", "role": "temp", "dtype": "f32", "shape": [rows - 1, cols],
             "alias": {"buffer": 2, "offset_bytes": 4 * cols}},
            {"name": "y", "role": "output", "dtype": "f32", "shape": [rows - 1], "fill": 1.5},
            {"name": "z", "role": "output", "dtype": "f64", "shape": [rows - 1],
             "fill": "-inf"},
            {"name": "h", "role": "output", "dtype": "f16", "shape": [rows - 1]},
            {"name": "k", "role": "output", "dtype": "f32", "shape": [3], "fill": 3},
        ],
        "launches": [
            {"kernel": "scale", "grid": [1, 1, 1], "block": [rows * cols, 1, 1],
             "shared_bytes": 65536,
             "args": [{"buffer": 0}, {"buffer": 2}, {"f32": -2.0}, {"i64": rows * cols}]},
            {"kernel": "rows", "grid": [1, 1, 1], "block": [32, 1, 1],
             "args": [{"buffer": 3}, {"buffer": 1}, {"buffer": 4}, {"buffer": 5},
                      {"buffer": 6}, {"i32": rows - 1}, {"i32": cols}, {"f64": 0.25}]},
        ],
    })
    rng = np.random.default_rng(2)
    x = rng.uniform(-1, 1, (rows, cols)).astype(np.float32)
    w = bf16_round(rng.uniform(-1, 1, rows - 1))
    save(d, "inputs", "x", x)
    save(d, "inputs", "w", w)
    t = (x * np.float32(-2.0)).astype(np.float32)
    m = t[1:].max(axis=1)
    y0 = (np.float32(1.5) + m).astype(np.float32)
    y = ((y0.astype(np.float64) + 0.25).astype(np.float32) + w).astype(np.float32)
    save(d, "expected", "y", y)
    save(d, "expected", "z", m.astype(np.float64))
    save(d, "expected", "h", y.astype(np.float16))
    save(d, "expected", "k", np.full(3, 3, np.float32))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cuda", default="/usr/local/cuda")
    args = parser.parse_args()
    make_vadd(args.cuda)
    make_features(args.cuda)


if __name__ == "__main__":
    main()
