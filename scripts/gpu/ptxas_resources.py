#!/usr/bin/env python3
"""What each kernel of a bundle uses, from `ptxas -v`, checked against the chip.

    ptxas_resources.py BUNDLE [--chip sm_90a] [--ptxas PATH] [--allow-spills]

Assembles BUNDLE/kernels.ptx with `ptxas -arch=CHIP -O3 -v` (into a temporary
file), reads per kernel its registers, spill stores and loads, stack frame
and static shared memory, and checks every launch of the manifest against
the limits of sm_90 (H100/H200):

  - registers per thread <= 255, and registers x threads per block <= 65536;
  - static + dynamic shared memory per block <= 227 KiB (232448 bytes);
  - threads per block <= 1024;
  - no spills (unless --allow-spills): a spill is a kernel that the schedule
    made too large for the register file. A launched kernel that spills
    only under its `.maxntid` (observed: ptxas 13.0 holding a 256-thread row
    kernel to 32 registers, 8 blocks per SM, with a 4-byte spill), and
    assembled without it fits its launch's block in the register file
    (registers rounded up to 8, threads to whole warps) without spilling,
    is reported as an occupancy spill with that register count: ptxas's own
    trade in the shipped cubin, not a schedule too large;
  - no "Potential Performance Loss" advisory (ptxas serializing a kernel's
    wgmma.mma_async because other instructions touch its accumulators while
    it is in flight, and the like).

Prints one line per kernel and exits 1 when a limit is exceeded.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

MAX_REGISTERS = 255
REGISTER_FILE = 65536
MAX_SHARED = 232448
MAX_THREADS = 1024


def without_maxntid(ptx, kernel):
    """`ptx` with the `.maxntid` directive of entry `kernel` removed."""
    out, inside = [], False
    for line in ptx.splitlines(True):
        if re.match(r"\.visible \.entry %s\(" % re.escape(kernel), line):
            inside = True
        elif inside and line.startswith(".maxntid"):
            inside = False
            continue
        elif inside and line.startswith("{"):
            inside = False
        out.append(line)
    return "".join(out)


def occupancy_spill(ptxas, chip, ptx, kernel, threads, tmp):
    """The registers `kernel` takes when ptxas does not know its block size,
    if it then does not spill and its `threads` (a launch's; 0: none) fit
    the register file; else None (the spill is the kernel's own)."""
    if threads <= 0:
        return None
    path = os.path.join(tmp, "nomaxntid.ptx")
    with open(ptx) as f:
        text = f.read()
    with open(path, "w") as f:
        f.write(without_maxntid(text, kernel))
    proc = subprocess.run([ptxas, "-arch=" + chip, "-O3", "-v", path, "-o",
                           os.path.join(tmp, "nomaxntid.cubin")], capture_output=True, text=True)
    if proc.returncode:
        return None
    k = parse_ptxas(proc.stdout + proc.stderr).get(kernel)
    if not k or k["spill_stores"] or k["spill_loads"]:
        return None
    registers = (k["registers"] + 7) // 8 * 8
    warps = (threads + 31) // 32
    return k["registers"] if registers * warps * 32 <= REGISTER_FILE else None


def find_ptxas(explicit):
    if explicit:
        return explicit
    for cand in (os.environ.get("CUDA_HOME", "") and os.path.join(os.environ["CUDA_HOME"],
                                                                   "bin", "ptxas"),
                 "/usr/local/cuda/bin/ptxas", shutil.which("ptxas")):
        if cand and os.access(cand, os.X_OK):
            return cand
    raise SystemExit("ptxas_resources: no ptxas (set CUDA_HOME or --ptxas)")


def parse_ptxas(text):
    """{kernel: {registers, spill_stores, spill_loads, stack, shared}} of ptxas -v output."""
    kernels, cur = {}, None
    for line in text.splitlines():
        m = re.search(r"Compiling entry function '(\w+)'", line) or \
            re.search(r"Function properties for (\w+)", line)
        if m:
            cur = kernels.setdefault(m.group(1), dict(registers=0, spill_stores=0,
                                                       spill_loads=0, stack=0, shared=0))
            continue
        if cur is None:
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads",
                      line)
        if m:
            cur["stack"], cur["spill_stores"], cur["spill_loads"] = map(int, m.groups())
        m = re.search(r"Used (\d+) registers", line)
        if m:
            cur["registers"] = int(m.group(1))
            s = re.search(r"(\d+) bytes smem", line)
            cur["shared"] = int(s.group(1)) if s else 0
    return kernels


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bundle")
    ap.add_argument("--chip", default=None, help="default: the manifest's chip")
    ap.add_argument("--ptxas", default=None)
    ap.add_argument("--allow-spills", action="store_true")
    args = ap.parse_args(argv)
    with open(os.path.join(args.bundle, "manifest.json")) as f:
        manifest = json.load(f)
    chip = args.chip or manifest.get("chip", "sm_90")
    ptx = os.path.join(args.bundle, manifest.get("ptx", "kernels.ptx"))
    ptxas = find_ptxas(args.ptxas)
    with tempfile.TemporaryDirectory() as tmp:
        return check(args, manifest, chip, ptx, ptxas, tmp)


def check(args, manifest, chip, ptx, ptxas, tmp):
    proc = subprocess.run([ptxas, "-arch=" + chip, "-O3", "-v", ptx, "-o",
                           os.path.join(tmp, "k.cubin")], capture_output=True, text=True)
    if proc.returncode:
        print("ptxas_resources: ptxas failed on %s:\n%s" % (ptx, proc.stderr), file=sys.stderr)
        return 1
    kernels = parse_ptxas(proc.stdout + proc.stderr)
    problems = []
    launches = {}
    for l in manifest.get("launches", []):
        threads = l["block"][0] * l["block"][1] * l["block"][2]
        cur = launches.setdefault(l["kernel"], [0, 0])
        cur[0] = max(cur[0], threads)
        cur[1] = max(cur[1], l.get("shared_bytes", 0))
    for name in sorted(kernels):
        k = kernels[name]
        threads, dynamic = launches.get(name, (0, 0))
        shared = k["shared"] + dynamic
        print("%s: %d registers, %d threads, %d bytes shared (%d static + %d dynamic), "
              "%d bytes spilled, %d bytes stack" %
              (name, k["registers"], threads, shared, k["shared"], dynamic,
               k["spill_stores"] + k["spill_loads"], k["stack"]))
        if k["registers"] > MAX_REGISTERS:
            problems.append("%s: %d registers per thread" % (name, k["registers"]))
        if k["registers"] * threads > REGISTER_FILE:
            problems.append("%s: %d registers x %d threads exceed the register file of %d" %
                            (name, k["registers"], threads, REGISTER_FILE))
        if shared > MAX_SHARED:
            problems.append("%s: %d bytes of shared memory, more than %d" %
                            (name, shared, MAX_SHARED))
        if threads > MAX_THREADS:
            problems.append("%s: %d threads per block" % (name, threads))
        if (k["spill_stores"] or k["spill_loads"]) and not args.allow_spills:
            unconstrained = occupancy_spill(ptxas, chip, ptx, name, threads, tmp)
            if unconstrained is not None:
                print("ptxas_resources: %s: occupancy spill (%d bytes; none without .maxntid, "
                      "at %d registers)" % (name, k["spill_stores"] + k["spill_loads"],
                                            unconstrained))
            else:
                problems.append("%s: spills %d bytes" % (name, k["spill_stores"] + k["spill_loads"]))
    for line in (proc.stdout + proc.stderr).splitlines():
        if "Potential Performance Loss" in line:
            problems.append(line.split(":", 1)[-1].strip())
    missing = sorted(set(launches) - set(kernels))
    if missing:
        problems.append("launched but not in the PTX: " + ", ".join(missing))
    for p in problems:
        print("ptxas_resources: over the limit: " + p)
    print("ptxas_resources: %d kernels for %s: %s" %
          (len(kernels), chip, "within the limits" if not problems else "%d problems" %
           len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
