"""Helpers of the neo-tune lit tests (they need this host's target).

  records_tool.py seed FILE KEY THREADS
      writes a records file with one slow, valid record for KEY on this
      host's target (a 1 x 16 register tile, 1-deep blocks)
  records_tool.py check-gemm FILE KEY M N K THREADS IR
      the record for KEY beat the seed, and IR (neo-lower-to-cpu up to the
      schedule) holds the packing buffers of its schedule
  records_tool.py check-generic FILE PREFIX INNER FUNCTION IR
      the record whose key starts with PREFIX is valid, and FUNCTION in IR
      uses vectors of its length (at most INNER)
"""
import json
import os
import re
import subprocess
import sys

SLOW = {"mr": 1, "nr": 16, "mc": 1, "nc": 16, "kc": 1, "threads": 1}


def target(threads):
    tool = os.path.join(os.environ["NEO_BIN"], "neo-tune")
    out = subprocess.run([tool, "--print-target", "--target-threads", threads],
                         check=True, capture_output=True, text=True).stdout
    return out.strip()


def load(path):
    with open(path) as f:
        doc = json.load(f)
    assert doc["format"] == "neo-tuning-records" and doc["version"] == 1, doc
    return doc["records"]


def seed(path, key, threads):
    doc = {"format": "neo-tuning-records", "version": 1, "records": [
        {"key": key, "target": target(threads), "schedule": SLOW, "time_ms": 1e6,
         "gflops": 0, "neo_version": "seed"}]}
    with open(path, "w") as f:
        json.dump(doc, f)


def ceil_div(a, b):
    return (a + b - 1) // b


def check_gemm(path, key, m, n, k, threads, ir_path):
    m, n, k = int(m), int(n), int(k)
    records = [r for r in load(path) if r["key"] == key and r["target"] == target(threads)]
    assert len(records) == 1, records
    r = records[0]
    assert r["time_ms"] < 1e6 and r["neo_version"] != "seed", r
    print("the tuned record replaced the seed")
    s = r["schedule"]
    # The generator's clamps (GemmCodegen.cpp).
    mr, nr = s["mr"], s["nr"]
    mc = min(s["mc"], ceil_div(m, mr) * mr)
    kc = min(s["kc"], k)
    nc = min(s["nc"], ceil_div(n, nr) * nr)
    if s["threads"] > 1 and n >= 2 * nr:  # batch 1 < threads
        nc = min(nc, ceil_div(ceil_div(n, s["threads"]), nr) * nr)
    ir = open(ir_path).read()
    for shape in [(nc // nr, kc, nr), (mc // mr, kc, mr), (mr, nr)]:
        text = "memref<%sxf32>" % "x".join(map(str, shape))
        assert re.search(r"memref\.alloc\(\).*: " + re.escape(text), ir), text
    print("the schedule %s is applied" % " ".join("%s=%d" % kv for kv in s.items()))


def check_generic(path, prefix, inner, function, ir_path):
    records = [r for r in load(path) if r["key"].startswith(prefix)]
    assert len(records) == 1, records
    s = records[0]["schedule"]
    assert 1 <= s["vector"] <= 64 and s["threads"] >= 1, s
    ir = open(ir_path).read()
    body = ir[ir.index("func.func @%s(" % function):]
    body = body[:body.index("return")]
    lanes = min(s["vector"], int(inner))
    if lanes > 1:
        assert "vector<%dxf32>" % lanes in body, lanes
    print("the generic schedule vector=%d threads=%d is applied" % (s["vector"], s["threads"]))


if __name__ == "__main__":
    commands = {"seed": seed, "check-gemm": check_gemm, "check-generic": check_generic}
    commands[sys.argv[1]](*sys.argv[2:])
