"""The summary of the workloads that have their own pages (SpMM, its
backward, SDDMM, GCN, GAT, DLRM, the PyTorch bridge) for docs/benchmarks.md:
per page and thread count, Neo's time against the fastest other system, with
the page's machine and a link to it (which holds the command that made it).
bench/run.py appends it to its report; run alone it prints the section.

    /usr/bin/python3 bench/summarize.py [--docs docs] [--insert docs/benchmarks.md]

With --insert, the section replaces the one in that report (or goes before
its GPU section), so that a report keeps its own measurements and gets the
pages' current numbers.

A page is named for the machine it was measured on when it is not the
default (docs/gcn-benchmarks-epyc-avx512.md); for each workload the page of
the machine this runs on is taken when there is one (by its CPU model and
ISA, as bench/spmm.py writes them), else the newest.
"""
import argparse
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# (workload, page stem, what neo's rows are called)
WORKLOADS = [
    ("SpMM, forward (100k nodes, 1M nonzeros, 64 features)", "sparse-benchmarks", "neo"),
    ("SpMM, forward + backward", "sparse-benchmarks-backward", "neo"),
    ("SDDMM (1M nonzeros, 64 features)", "sddmm-benchmarks", "neo"),
    ("GCN training step (100k nodes)", "gcn-benchmarks", "neo"),
    ("GAT training step (100k nodes)", "gat-benchmarks", "neo"),
    ("GAT training step, `eqsat=true`", "gat-benchmarks", "neo-eqsat"),
    ("DLRM-like EmbeddingBag + MLP step", "dlrm-benchmarks", "neo"),
]


def pages(docs, stem):
    """The pages of `stem`: stem.md and stem-<machine>.md (not longer stems)."""
    out = []
    for name in sorted(os.listdir(docs)):
        if not name.endswith(".md") or not name.startswith(stem):
            continue
        rest = name[len(stem):-3]
        if rest == "" or (rest.startswith("-") and not any(
                name.startswith(s + "-") and len(s) > len(stem) for _, s, _ in WORKLOADS)):
            out.append(os.path.join(docs, name))
    return out


def machine_of(text):
    m = re.search(r"Machine: ([^.]*?), (\d+) cores", text)
    return m.group(1) if m else ""


def this_machine():
    try:
        sys.path.insert(0, HERE)
        import spmm
        model, isa = spmm.cpu_model()
        return "%s, %s" % (model, isa)
    except Exception:  # noqa: BLE001 - a summary without a preference
        return ""


def rows(text):
    """(threads, system, ms) of the page's table."""
    header, out = None, []
    for line in text.splitlines():
        if not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if "threads" in cells and "system" in cells:
            header = cells
            continue
        if header is None or set(line) <= set("|-: "):
            continue
        try:
            rec = dict(zip(header, cells))
            out.append((int(rec["threads"]), rec["system"], float(rec["ms"])))
        except (KeyError, ValueError):
            continue
    return out


def pick(docs, stem, here):
    cands = pages(docs, stem)
    if not cands:
        return None
    same = [p for p in cands if here and machine_of(open(p).read()) == here]
    return (same or sorted(cands, key=os.path.getmtime))[-1]


def section(docs):
    here = this_machine()
    lines = ["## Workloads with index reads, and the PyTorch bridge", "",
             "Each has its own page, with the command that made it, its machine and every "
             "system's error against a float64 reference; `./neo.sh bench --all` makes them "
             "again. This section is made from the pages as they are by "
             "`/usr/bin/python3 bench/summarize.py --insert docs/benchmarks.md` (which "
             "`bench/run.py` and `./neo.sh bench --all` run), not by the run above. Neo's "
             "time against the fastest other system of the page (PyTorch eager "
             "and torch.compile, JAX, scipy; above 1, neo is faster):", "",
             "| workload | machine | threads | neo ms | fastest other | its ms | other / neo | page |",
             "|---|---|---|---|---|---|---|---|"]
    commands = []
    for title, stem, neo in WORKLOADS:
        page = pick(docs, stem, here)
        if not page:
            lines.append("| %s | | | | | | | (not measured) |" % title)
            continue
        text = open(page).read()
        made = re.search(r"Command: (`[^`]*`)", text)
        if made and (os.path.basename(page), made.group(1)) not in commands:
            commands.append((os.path.basename(page), made.group(1)))
        rs = rows(text)
        for threads in sorted({t for t, _, _ in rs}):
            mine = [ms for t, s, ms in rs if t == threads and s == neo]
            others = [(ms, s) for t, s, ms in rs if t == threads and not s.startswith("neo")]
            if not mine or not others:
                continue
            best, who = min(others)
            ratio = "%.2fx" % (best / mine[0])
            lines.append("| %s | %s | %d | %.2f | %s | %.2f | %s | [%s](%s) |" % (
                title, machine_of(text), threads, mine[0], who, best,
                "**%s**" % ratio if best >= mine[0] else ratio,
                os.path.basename(page), os.path.basename(page)))
    if commands:
        lines += ["", "The commands that made them:", ""]
        lines += ["- %s: %s" % (name, cmd) for name, cmd in commands]
    bridge = os.path.join(docs, "torch-bridge-benchmarks.md")
    if os.path.exists(bridge):
        text = open(bridge).read()
        cpu = re.search(r"- CPU: ([^\n]*)", text)
        made = re.search(r"Generated by (`[^`]*`)", text)
        lines += ["", "The PyTorch bridge (neo.torch, [torch-bridge-benchmarks.md]"
                  "(torch-bridge-benchmarks.md), %s): per-call overhead and the MI-LSTM "
                  "training step against the same model in PyTorch, made by %s:" % (
                      cpu.group(1) if cpu else "its machine",
                      made.group(1) if made else "bench/torch_bridge.py"), ""]
        for line in text.splitlines():
            if line.startswith(("threads ", "tiny op", "ratios")):
                lines.append("- " + line)
    return lines + [""]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--docs", default=os.path.join(ROOT, "docs"))
    p.add_argument("--insert", default="")
    args = p.parse_args()
    lines = section(args.docs)
    if not args.insert:
        print("\n".join(lines))
        return
    text = open(args.insert).read().split("\n")
    title = lines[0]
    if title in text:  # replace the old section: up to the next "## " heading
        start = text.index(title)
        end = next((k for k in range(start + 1, len(text)) if text[k].startswith("## ")),
                   len(text))
    else:
        start = end = next((k for k, line in enumerate(text) if line.startswith("## GPU")),
                           len(text))
    text[start:end] = lines
    with open(args.insert, "w") as f:
        f.write("\n".join(text))
    print("wrote %s" % args.insert)


if __name__ == "__main__":
    main()
