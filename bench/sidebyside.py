"""What bench/spmm.py, bench/gcn.py and bench/dlrm.py share: their common
command-line options, the median process of each system, and the report."""


def add_run_options(parser, rounds):
    """--rounds (timed runs per process), --threads, --repeats, --out."""
    parser.add_argument("--rounds", type=int, default=rounds)
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--repeats", type=int, default=3,
                        help="processes per system, alternated; the median is reported")
    parser.add_argument("--out", default="")


def median_process(runs):
    """The run of the median process (by its time), with every process's
    time as all_ms."""
    rs = sorted(runs, key=lambda r: r["ms"])
    return dict(rs[len(rs) // 2], all_ms=[r["ms"] for r in rs])


def write_report(lines, out):
    """Prints the report and writes it to `out` (if given)."""
    text = "\n".join(lines) + "\n"
    print(text)
    if out:
        with open(out, "w") as f:
            f.write(text)
