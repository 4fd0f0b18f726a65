"""Compares the outputs (DIR/NAME.npy) that neo-run wrote for a function
before and after neo-eqsat-fuse: every output present in both, equal within
the tolerance of float32 reassociation."""
import os
import sys

import numpy as np

before, after = sys.argv[1], sys.argv[2]
names = sorted(f for f in os.listdir(before) if f.endswith(".npy"))
assert names and names == sorted(f for f in os.listdir(after) if f.endswith(".npy")), names
for name in names:
    a, b = np.load(os.path.join(before, name)), np.load(os.path.join(after, name))
    assert a.shape == b.shape, (name, a.shape, b.shape)
    scale = max(1.0, float(np.abs(a).max()))
    err = float(np.abs(a - b).max())
    assert err <= 1e-4 * scale, (name, err, scale)
    print("same %s: max abs difference %.3g" % (name[:-4], err))
