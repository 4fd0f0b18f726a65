"""The pure parts of the benchmark harness (bench/run.py): parsing neo-run's
output and /proc/cpuinfo, comparing results, ratios and geomeans, and the
markdown report. No PyTorch or JAX here; bench/test_harness.py tests these
with fake data.

A result row is {"case", "threads", "group" (training), "systems": {name:
cell}} with a cell {"status": "ok" | "mismatch" | "failed" | "n/a",
"ms", "cores", "error", "reason", "compile_ms"}."""
import math
import re

# Display names; the order is the table's.
SGEMM_SYSTEMS = ["neo", "onednn", "openblas", "eager", "jax"]
TRAIN_SYSTEMS = ["neo", "eager", "compile", "jax"]
ALL_SYSTEMS = ["neo", "onednn", "openblas", "eager", "compile", "jax"]
LABELS = {"neo": "neo", "onednn": "oneDNN", "openblas": "OpenBLAS", "eager": "PyTorch eager",
          "compile": "torch.compile", "jax": "JAX jit"}
SHORT = {"neo": "neo", "onednn": "dnnl", "openblas": "oblas", "eager": "eager",
         "compile": "compile", "jax": "jax"}


def parse_neo_run(text):
    """compile_ms, from_cache, median_ms and cores (the cores the timed runs
    used; None without --repeat) and the output names in order, from neo-run's
    stdout."""
    m = re.search(r"compiled '[^']*' .*? in ([0-9.]+) ms( \(from the cache\))?", text)
    if not m:
        raise ValueError("no 'compiled ... in N ms' line in neo-run's output:\n" + text[-2000:])
    t = re.search(r"median time: ([0-9.]+) ms", text)
    c = re.search(r"median time: .*cores used ([0-9.]+)\)", text)
    names = re.findall(r"^([^\s:]+): [a-z0-9]+\[[^\]]*\] =", text, re.M)
    return dict(compile_ms=float(m.group(1)), from_cache=bool(m.group(2)),
                median_ms=float(t.group(1)) if t else None,
                cores=float(c.group(1)) if c else None, outputs=names)


def parse_kv(text):
    """'key value' lines (the baselines program) as a dict of floats."""
    out = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2:
            try:
                out[parts[0]] = float(parts[1])
            except ValueError:
                pass
    return out


def cpu_info(cpuinfo_text):
    """(model name, ISA summary) from /proc/cpuinfo's text."""
    m = re.search(r"^model name\s*:\s*(.*)$", cpuinfo_text, re.M)
    model = m.group(1).strip() if m else "unknown CPU"
    f = re.search(r"^flags\s*:\s*(.*)$", cpuinfo_text, re.M)
    flags = set(f.group(1).split()) if f else set()
    if "avx512f" in flags:
        isa = "AVX-512 (%s)" % ", ".join(x for x in ("avx512f", "avx512bw", "avx512vl",
                                                     "avx512_bf16", "amx_tile") if x in flags)
    elif "avx2" in flags:
        isa = "AVX2"
    elif "avx" in flags:
        isa = "AVX"
    else:
        isa = "SSE" if "sse2" in flags else "unknown ISA"
    if "fma" in flags:
        isa += " + FMA"
    return model, isa


def max_error(got, want):
    """max |got - want| scaled by max(1e-6, max |want|) (NumPy arrays)."""
    import numpy as np
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    if got.shape != want.shape:
        return float("inf")
    if got.size == 0:
        return 0.0
    if not np.all(np.isfinite(got)):
        return float("inf")
    return float(np.max(np.abs(got - want)) / max(1e-6, float(np.max(np.abs(want)))))


def check_outputs(gots, wants, tol):
    """(worst error, ok) over paired output lists."""
    if len(gots) != len(wants):
        return float("inf"), False
    err = max([max_error(g, w) for g, w in zip(gots, wants)] or [0.0])
    return err, err <= tol


def geomean(xs):
    xs = [x for x in xs if x is not None and x > 0 and math.isfinite(x)]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def ok_ms(row, system):
    c = row["systems"].get(system)
    return c["ms"] if c and c.get("status") == "ok" and c.get("ms") else None


def ratio(row, peer):
    """peer time / neo time (above 1: neo is faster), or None."""
    neo, p = ok_ms(row, "neo"), ok_ms(row, peer)
    return p / neo if neo and p else None


def best_peer(row, peers):
    """(name, ms) of the fastest peer that ran and matched, or (None, None)."""
    times = [(ok_ms(row, p), p) for p in peers if ok_ms(row, p)]
    if not times:
        return None, None
    ms, p = min(times)
    return p, ms


def best_ratio(row, peers):
    p, ms = best_peer(row, peers)
    neo = ok_ms(row, "neo")
    return ms / neo if ms and neo else None


def failures(results):
    """'case tN system: reason' for every mismatch or failure."""
    out = []
    for kind in ("sgemm", "training"):
        for r in results.get(kind, []):
            for s, c in r["systems"].items():
                if c.get("status") in ("mismatch", "failed"):
                    out.append("%s %s t%d %s: %s %s" % (kind, r["case"], r["threads"], s,
                                                        c["status"], c.get("reason", "")))
    return out


def _f(x, fmt="%.2f", none="n/a"):
    return fmt % x if x is not None else none


def _cell_ms(c, fmt="%.3f"):
    if not c:
        return "n/a"
    st = c.get("status")
    if st == "ok":
        return fmt % c["ms"]
    if st == "mismatch":
        return "**MISMATCH**"
    return st or "n/a"


def _cores(row, systems):
    return " / ".join(_f(row["systems"].get(s, {}).get("cores"), "%.2f", "-") for s in systems)


def _check(row):
    bad = ["%s %s" % (SHORT[s], c["status"]) for s, c in row["systems"].items()
           if c.get("status") in ("mismatch", "failed")]
    if bad:
        return "**" + ", ".join(bad) + "**"
    errs = [c.get("error") for c in row["systems"].values() if c.get("error") is not None]
    return "ok (%.0e)" % max(errs) if errs else "unchecked"


def ratio_text(row, peer):
    c = row["systems"].get(peer, {})
    if c.get("status") == "mismatch":
        return "mismatch"
    return _f(ratio(row, peer))


def geomeans(results, threads, peers, group="cell"):
    """{peer or 'best': geomean of peer/neo} over the training rows of `group`."""
    rows = [r for r in results.get("training", []) if r["threads"] == threads
            and r.get("group") == group]
    out = {p: geomean([ratio(r, p) for r in rows]) for p in peers}
    out["best"] = geomean([best_ratio(r, peers) for r in rows])
    out["n"] = len(rows)
    return out


def render(results):
    """The markdown lines of docs/benchmarks.md (without the GPU section)."""
    meta = results["meta"]
    threads = meta["threads"]
    lines = ["# Benchmarks", "",
             "Generated by `%s` on %s." % (meta["command"], meta["date"]), "",
             "- CPU: %s, %s, %d cores (%s)" % (meta["cpu"], meta["isa"], meta["cores"],
                                               meta.get("platform", "")),
             "- Peers, each in its own process with its thread count applied (environment "
             "variables, its own setting and the CPU affinity); *cores used* is the process's "
             "CPU time / wall time over the timed loop:"]
    for s in ALL_SYSTEMS:
        if s in meta.get("na", {}):
            lines.append("  - %s: n/a (%s)" % (LABELS[s], meta["na"][s]))
        elif s in meta.get("versions", {}):
            lines.append("  - %s: %s" % (LABELS[s], meta["versions"][s]))
    lines += ["- Times are medians over %d rounds x %s reps (at least %.2f s per round), "
              "the systems alternating round by round. Ratios are peer time / neo time: "
              "above 1, neo is faster. Before timing, every system's outputs (and for "
              "training, every gradient) are compared with %s; a mismatch fails its row."
              % (meta["rounds"], meta["reps"], meta["min_round_s"], meta["reference"]), ""]
    if results.get("triad"):
        lines += ["STREAM triad: " + ", ".join(
            "%.1f GB/s on %s thread%s" % (v, t, "s" if int(t) > 1 else "")
            for t, v in sorted(results["triad"].items(), key=lambda kv: int(kv[0]))), ""]
    if results.get("sgemm"):
        peers = SGEMM_SYSTEMS[1:]
        lines += ["## sgemm (f32, row-major, C = A B), GFLOP/s", "",
                  "| M x N x K | threads | " + " | ".join(LABELS[s] for s in SGEMM_SYSTEMS) +
                  " | best peer / neo | cores used (%s) | check |" %
                  " / ".join(SHORT[s] for s in SGEMM_SYSTEMS),
                  "|---|---|" + "---|" * (len(SGEMM_SYSTEMS) + 3)]
        for r in results["sgemm"]:
            flops = 2.0 * r["m"] * r["n"] * r["k"]
            cells = []
            for s in SGEMM_SYSTEMS:
                ms = ok_ms(r, s)
                cells.append("%.1f" % (flops / ms / 1e6) if ms else _cell_ms(r["systems"].get(s)))
            bp, _ = best_peer(r, peers)
            lines.append("| %s | %d | %s | %s | %s | %s |" % (
                r["case"], r["threads"], " | ".join(cells),
                "%s (%s)" % (_f(best_ratio(r, peers)), LABELS[bp]) if best_ratio(r, peers)
                else "n/a",
                _cores(r, SGEMM_SYSTEMS), _check(r)))
        lines.append("")
    if results.get("training"):
        peers = TRAIN_SYSTEMS[1:]
        lines += ["## Forward + backward (training), ms", "",
                  "| benchmark | threads | neo | neo compile (s) | " +
                  " | ".join(LABELS[s] for s in peers) + " | " +
                  " | ".join("%s / neo" % SHORT[s] for s in peers) +
                  " | best peer / neo | cores used (%s) | check | neo bandwidth |" %
                  " / ".join(SHORT[s] for s in TRAIN_SYSTEMS),
                  "|---|---|---|---|" + "---|" * (2 * len(peers) + 4)]
        triad = results.get("triad", {})
        for r in results["training"]:
            neo = r["systems"].get("neo", {})
            bp, _ = best_peer(r, peers)
            bw = ""
            if r.get("bytes") and ok_ms(r, "neo"):
                gbps = r["bytes"] / (ok_ms(r, "neo") * 1e6)
                bw = "%.1f GB/s" % gbps
                if triad.get(str(r["threads"])):
                    bw += " (%.0f%% of triad)" % (100 * gbps / triad[str(r["threads"])])
            lines.append("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                r["case"], r["threads"], _cell_ms(neo),
                _f(neo.get("compile_ms") / 1e3 if neo.get("compile_ms") else None, "%.2f", "-"),
                " | ".join(_cell_ms(r["systems"].get(s)) for s in peers),
                " | ".join(ratio_text(r, s) for s in peers),
                "%s (%s)" % (_f(best_ratio(r, peers)), SHORT[bp]) if best_ratio(r, peers)
                else "n/a",
                _cores(r, TRAIN_SYSTEMS), _check(r), bw))
        lines += ["", "Where neo misses a target, [performance.md](performance.md) profiles "
                  "where the time goes.", ""]
        lines += ["Geomeans of peer / neo over the novel cells and the MLP step:", "",
                  "| threads | vs PyTorch eager | vs torch.compile | vs JAX | vs best peer | rows |",
                  "|---|---|---|---|---|---|"]
        for t in threads:
            g = geomeans(results, t, peers)
            lines.append("| %d | %s | %s | %s | %s | %d |" % (
                t, _f(g["eager"], "**%.2fx**"), _f(g["compile"], "**%.2fx**"),
                _f(g["jax"], "**%.2fx**"), _f(g["best"], "**%.2fx**"), g["n"]))
        lines.append("")
    bad = failures(results)
    if bad:
        lines += ["## Failures", ""] + ["- " + b for b in bad] + [""]
    return lines


def plot_points(results):
    """(label, ratio) pairs for the PNG: neo against the best peer per row."""
    pts = []
    for r in results.get("sgemm", []):
        v = best_ratio(r, SGEMM_SYSTEMS[1:])
        if v:
            pts.append(("sgemm %s t%d" % (r["case"], r["threads"]), v))
    for r in results.get("training", []):
        v = best_ratio(r, TRAIN_SYSTEMS[1:])
        if v:
            pts.append(("%s t%d" % (r["case"], r["threads"]), v))
    return pts
