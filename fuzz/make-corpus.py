#!/usr/bin/python3
"""Regenerates the seed corpora of fuzz/corpus/ from the test inputs.

Each .neo and .mlir test file is split at its `-----` markers; comment lines
(RUN, CHECK, prose) are dropped; chunks larger than -max_len (64 KiB) are
skipped. The .npy seeds are written with numpy; the seeds of the targets that
read their input as choices (neo-gen-fuzzer, neo-options-fuzzer) are bytes of
a fixed random generator, of several lengths. Run from anywhere:
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


MAX_LEN = 65536  # scripts/fuzz.sh's -max_len


def save(target, data, limit=MAX_LEN):
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
        save("neo-frontend-fuzzer", c)
        if "Frontend" not in f:
            save("neo-pipeline-fuzzer", c)
for f in mlir_files:
    for c in chunks(f, "//"):
        save("neo-ir-fuzzer", c)
        if "invalid" not in f:
            save("neo-pipeline-fuzzer", c)


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
    save("neo-npy-fuzzer", s)

for f in files("test/Tuning/Inputs/*.json", "unittests/Tuning/Inputs/*.json"):
    save("neo-tuning-fuzzer", open(f, "rb").read())
save("neo-tuning-fuzzer", '{"format": "neo-tuning-records", "version": 1, "records": []}\n')
save("neo-tuning-fuzzer", """{"format": "neo-tuning-records", "version": 1, "records": [
  {"key": "gemm f32 batch=1 m=64 n=64 k=64 layout=mk,kn,mn", "target": "x86_64/1threads",
   "schedule": {"mr": 8, "nr": 32, "mc": 64, "nc": 64, "kc": 64, "threads": 1},
   "time_ms": 0.5, "gflops": 1.0, "neo_version": "0.1", "trials": 3, "verified": "interpreter"},
  {"key": "generic f32 space=64x64", "target": "x86_64/1threads",
   "schedule": {"vector": 16, "threads": 1}, "time_ms": 0.25}]}
""")
# Records that validateScheduleRecord accepts (so that the fuzzer starts past
# parsing, in the validation and save paths), next to ones it rejects.
GEMM = ('"key": "gemm %s batch=%d m=%d n=%d k=%d layout=mk,kn,mn", "target": "%s", '
        '"schedule": {"mr": %d, "nr": %d, "mc": %d, "nc": %d, "kc": %d, "threads": %d}, '
        '"time_ms": %g')
GENERIC = ('"key": "generic %s linalg.generic loops=%s iterators=%s sig=0123456789abcdef", '
           '"target": "%s", "schedule": {"vector": %d, "threads": %d}, "time_ms": %g')


def records(*entries):
    return ('{"format": "neo-tuning-records", "version": 1, "records": [\n  '
            + ",\n  ".join("{" + e + "}" for e in entries) + "]}\n")


cpu1, cpu2 = "x86_64-avx512-sapphirerapids/1threads", "x86_64-avx2-zen3/2threads"
save("neo-tuning-fuzzer", records(
    GEMM % ("f32", 1, 1024, 1024, 1024, cpu1, 8, 32, 128, 512, 256, 1, 8.7),
    GEMM % ("f64", 1, 64, 64, 64, cpu1, 6, 16, 60, 64, 64, 1, 0.5),
    GEMM % ("f32", 4, 128, 256, 64, cpu2, 4, 64, 64, 256, 64, 2, 1.5),
    GENERIC % ("f32", "64x1024", "pr", cpu1, 16, 1, 0.25),
    GENERIC % ("f64", "8x8x8", "ppp", cpu2, 8, 2, 0.125)))
save("neo-tuning-fuzzer", records(
    # The same key and target twice (the faster wins), and one per target.
    GEMM % ("f32", 1, 64, 64, 64, cpu1, 8, 32, 64, 64, 64, 1, 0.5),
    GEMM % ("f32", 1, 64, 64, 64, cpu1, 4, 16, 64, 64, 64, 1, 0.25),
    GEMM % ("f32", 1, 64, 64, 64, cpu2, 4, 16, 64, 64, 64, 2, 0.3)))
save("neo-tuning-fuzzer", records(
    # Each rejected by validation for another reason, next to a good one.
    GEMM % ("f32", 1, 64, 64, 64, cpu1, 0, 32, 64, 64, 64, 1, 0.5),
    GEMM % ("f32", 1, 64, 64, 64, cpu2, 8, 24, 64, 64, 64, 1, 0.5),
    GEMM % ("f64", 1, 64, 64, 64, cpu1, 8, 64, 64, 64, 64, 1, 0.5),
    GEMM % ("f16", 1, 64, 64, 64, cpu1, 8, 32, 64, 64, 64, 1, 0.5),
    GEMM % ("f32", 1, 64, 64, 64, "t/3", 8, 32, 4096, 4096, 8192, 1, 0.5),
    GEMM % ("f32", 1, 64, 64, 64, "t/4", 8, 32, 64, 64, 64, 300, 0.5),
    GENERIC % ("f32", "64", "p", cpu1, 65, 1, 0.5),
    GENERIC % ("f32", "64", "p", cpu2, 16, 0, 0.5),
    '"key": "conv f32", "target": "t", "schedule": {"vector": 16, "threads": 1}, "time_ms": 1',
    '"key": "generic f32", "target": "t", "schedule": {"vector": 16, "threads": 1, "mr": 8}, '
    '"time_ms": 1',
    GENERIC % ("f32", "4x4", "pp", "t/5", 4, 1, 0.5)))

# The targets that read their input as choices: random bytes of several
# lengths (up to -max_len, so that the generator reaches its big programs).
rng_bytes = np.random.default_rng(18)
for target in ["neo-gen-fuzzer", "neo-options-fuzzer"]:
    for n in [0, 16, 64, 256, 1024, 4096] + ([16384, 65536] if target == "neo-gen-fuzzer" else []):
        save(target, rng_bytes.integers(0, 256, n, dtype=np.uint8).tobytes())
    save(target, b"\xff" * 256)
    save(target, b"\x00" * 256)

for target in sorted(os.listdir(CORPUS)):
    print(target, len(os.listdir(os.path.join(CORPUS, target))))
