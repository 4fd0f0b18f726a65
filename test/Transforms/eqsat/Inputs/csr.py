"""Writes a random CSR pattern for the lit tests: PREFIX.rowptr.npy (ROWS + 1
non-decreasing i32 row pointers ending at NNZ, some rows empty, one row with
a third of the nonzeros) and PREFIX.col.npy (NNZ i32 columns in [0, COLS),
repeats allowed).

    python3 csr.py ROWS NNZ COLS PREFIX
"""
import sys

import numpy as np

rows, nnz, cols, prefix = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
rng = np.random.default_rng(7)
deg = np.zeros(rows, np.int64)
deg[rows // 2] = nnz // 3
rest = nnz - deg.sum()
deg += np.bincount(rng.integers(0, rows, rest), minlength=rows)
deg[1] += deg[0]  # row 0 empty
deg[0] = 0
rowptr = np.concatenate([[0], np.cumsum(deg)]).astype(np.int32)
assert rowptr[-1] == nnz
np.save(prefix + ".rowptr.npy", rowptr)
np.save(prefix + ".col.npy", rng.integers(0, cols, nnz).astype(np.int32))
