#!/usr/bin/python3
"""Fails when docs/reference/ differs from the reference that ODS generates
(run scripts/update-docs.sh after changing a .td file)."""
import filecmp
import os
import sys

generated, committed = sys.argv[1], sys.argv[2]
stale = []
for dirpath, _, files in os.walk(generated):
    for f in files:
        if not f.endswith(".md"):
            continue
        mine = os.path.join(committed, f)
        if not os.path.exists(mine) or not filecmp.cmp(os.path.join(dirpath, f), mine, False):
            stale.append(f)
if stale:
    print("stale or missing in docs/reference: %s (run scripts/update-docs.sh)" % ", ".join(stale))
    sys.exit(1)
print("docs/reference is up to date")
