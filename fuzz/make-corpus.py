#!/usr/bin/python3
"""Regenerates the seed corpora of fuzz/corpus/ from the test inputs.

Each .neo and .mlir test file is split at its `-----` markers; comment lines
(RUN, CHECK, prose) are dropped; chunks larger than the targets accept are
skipped. The .npy seeds are written with numpy. Run from anywhere:
    fuzz/make-corpus.py
"""
import glob
import hashlib
import io
import os
import re

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "fuzz", "corpus")


def chunks(path, comment):
    text = open(path).read()
    for chunk in re.split(r"^" + re.escape(comment) + r" -----.*$", text, flags=re.M):
        lines = [l for l in chunk.splitlines() if not l.lstrip().startswith(comment)]
        body = "\n".join(lines).strip()
        if body:
            yield body + "\n"


def save(target, data, limit):
    if isinstance(data, str):
        data = data.encode()
    if len(data) > limit:
        return
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    name = hashlib.sha1(data).hexdigest()[:16]
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def files(*patterns):
    out = []
    for p in patterns:
        out += sorted(glob.glob(os.path.join(ROOT, p)))
    return out


# Regenerate the seeds; keep the inputs of fixed findings (regression-*).
for d, _, names in os.walk(CORPUS):
    for n in names:
        if not n.startswith("regression-"):
            os.remove(os.path.join(d, n))

neo_files = files("test/Operators/*.neo", "test/Networks/*.neo", "test/Frontend/*.neo",
                  "test/Transforms/*/*.neo", "examples/*.neo")
mlir_files = files("test/Dialect/Neo/*.mlir", "test/Conversion/*/*.mlir",
                   "test/Transforms/*/*.mlir", "test/Pipelines/*.mlir")

for f in neo_files:
    for c in chunks(f, "#"):
        save("neo-frontend-fuzzer", c, 4096)
        if "Frontend" not in f:
            save("neo-pipeline-fuzzer", c, 2048)
for f in mlir_files:
    for c in chunks(f, "//"):
        save("neo-ir-fuzzer", c, 4096)
        if "invalid" not in f:
            save("neo-pipeline-fuzzer", c, 2048)


def npy(array, version=None):
    buf = io.BytesIO()
    if version is None:
        np.save(buf, array)
    else:
        np.lib.format.write_array(buf, array, version=version)
    return buf.getvalue()


rng = np.random.default_rng(0)
seeds = [
    npy(rng.standard_normal((2, 3)).astype(np.float32)),
    npy(rng.standard_normal((4,)).astype(np.float64)),
    npy(rng.standard_normal((2, 2, 2)).astype(np.float16)),
    npy(np.float32(1.5).reshape(())),
    npy(np.zeros((0, 3), np.float32)),
    npy(np.ones((2, 2), np.float32), version=(2, 0)),
    npy(np.ones((3,), np.float64), version=(3, 0)),
    npy(np.asfortranarray(np.ones((2, 3), np.float32))),
    npy(np.ones((2,), ">f4")),
    npy(np.ones((2,), np.int32)),
]
for s in seeds:
    save("neo-npy-fuzzer", s, 4096)

for f in files("test/Tuning/Inputs/*.json", "unittests/Tuning/Inputs/*.json"):
    save("neo-tuning-fuzzer", open(f, "rb").read(), 8192)
save("neo-tuning-fuzzer", '{"format": "neo-tuning-records", "version": 1, "records": []}\n', 8192)
save("neo-tuning-fuzzer", """{"format": "neo-tuning-records", "version": 1, "records": [
  {"key": "gemm f32 batch=1 m=64 n=64 k=64 layout=mk,kn,mn", "target": "x86_64/1threads",
   "schedule": {"mr": 8, "nr": 32, "mc": 64, "nc": 64, "kc": 64, "threads": 1},
   "time_ms": 0.5, "gflops": 1.0, "neo_version": "0.1", "trials": 3, "verified": "interpreter"},
  {"key": "generic f32 space=64x64", "target": "x86_64/1threads",
   "schedule": {"vector": 16, "threads": 1}, "time_ms": 0.25}]}
""", 8192)

for target in sorted(os.listdir(CORPUS)):
    print(target, len(os.listdir(os.path.join(CORPUS, target))))
