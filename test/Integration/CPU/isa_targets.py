# The CPU integration tests for every x86 ISA level the host can execute,
# so that each code path (register tiles, vector widths, instructions) is
# tested wherever the suite runs: SSE4.2 (x86-64-v2: 16-byte vectors) on a
# few operators, AVX2 (x86-64-v3) and AVX-512 (x86-64-v4) on all of them
# (on the same few in the ASan build: %asan_subset).
# A target the host cannot execute is a clear error, not a SIGILL.
#
# REQUIRES: host-x86_64
# RUN: %python %s x86-64-v2 %neo_src/test/Operators --only=matmul,conv2d,lstm_cell,softmax,layernorm,depthwise_conv | FileCheck %s --check-prefix=V2
# RUN: %if host-avx2 %{ %python %s x86-64-v3 %neo_src/test/Operators %neo_src/test/Networks %asan_subset | FileCheck %s --check-prefix=V3 %}
# RUN: %if host-avx512 %{ %python %s x86-64-v4 %neo_src/test/Operators %neo_src/test/Networks %asan_subset | FileCheck %s --check-prefix=V4 %}
# RUN: %if !host-avx512 %{ not neo-run %neo_src/test/Operators/matmul.neo --pipeline-options cpu=x86-64-v4 2>&1 | FileCheck %s --check-prefix=NOV4 %}
# V2: all 6 files ok for x86-64-v2
# V3-NOT: FAILED
# V3: all {{[0-9]+}} files ok for x86-64-v3
# V4-NOT: FAILED
# V4: all {{[0-9]+}} files ok for x86-64-v4
# NOV4: cpu=x86-64-v4: this host ({{.*}}) cannot run its instructions (avx512; missing: {{.*}}avx512f
"""Every operator of test/Operators and network of test/Networks compiled for
one CPU target (neo-lower-to-cpu `cpu=`: schedules for its registers, code
for its instructions only), run forward against the reference interpreter
(--check) and differentiated (--gradcheck: the compiled gradient against the
interpreted one and central finite differences in float64).

    isa_targets.py CPU DIR... [--only NAME,NAME]

Prints one line per file and, last, "all N files ok for CPU"."""
import glob
import os
import subprocess
import sys

NEO_RUN = os.environ.get("NEO_RUN", "neo-run")
NEO_RUN_ARGS = os.environ.get("NEO_RUN_ARGS", "").split()

cpu = sys.argv[1]
dirs = [a for a in sys.argv[2:] if not a.startswith("--only=")]
only = [a.split("=", 1)[1].split(",") for a in sys.argv[2:] if a.startswith("--only=")]
files = sorted(f for d in dirs for f in glob.glob(os.path.join(d, "*.neo")))
if only:
    files = [f for f in files if os.path.splitext(os.path.basename(f))[0] in only[0]]
failures = 0
for path in files:
    name = os.path.splitext(os.path.basename(path))[0]
    # Two runs: neo-run's --gradcheck does not also run --check.
    base = [NEO_RUN] + NEO_RUN_ARGS + [path, "--print-limit", "0",
                                       "--pipeline-options", "cpu=%s threads=1" % cpu]
    for mode in ("--check", "--gradcheck"):
        proc = subprocess.run(base + [mode], capture_output=True, text=True)
        ok = proc.returncode == 0 and "MISMATCH" not in proc.stdout and (
            mode != "--check" or ": ok" in proc.stdout)
        failures += not ok
        print("%-20s %-11s %s" % (name, mode[2:], "ok" if ok else "FAILED"))
        if not ok:
            print(proc.stdout[-2000:] + proc.stderr[-2000:])
if failures or not files:
    print("%d of %d files FAILED for %s" % (failures, len(files), cpu))
    sys.exit(1)
print("all %d files ok for %s (forward and gradient)" % (len(files), cpu))
