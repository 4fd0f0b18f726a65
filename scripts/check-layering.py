#!/usr/bin/env python3
"""Checks Neo's libraries against the dependency table of docs/architecture.md.

Usage: check-layering.py LAYERING_TXT SOURCE_ROOT

LAYERING_TXT is written by CMake (build/neo-layering.txt): one line per
library or tool, "<target> <folder> <direct link libraries...>". The table is
the fenced ```layering block of docs/architecture.md: one line per target,
"Target: Allowed Allowed ...", with "[llvm-free]" after the colon for targets
that must use neither LLVM nor MLIR.

Two checks, each printing one line per violation:
  * link: every Neo library a target links directly is allowed for it;
  * include: every #include "neo/..." (or "neo-c/...") in the target's
    folder (and in its mirrored include/ folder) names a header of the target
    itself or of an allowed library; an [llvm-free] target includes no
    "mlir/" or "llvm/" header and links no MLIR or LLVM.
Exits 1 on any violation, else prints "layering ok: N targets".
"""
import os
import re
import sys


def parse_table(path):
    text = open(path).read()
    m = re.search(r"```layering\n(.*?)```", text, re.S)
    if not m:
        sys.exit(f"{path}: no ```layering block")
    table = {}
    for n, line in enumerate(m.group(1).splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        if ":" not in line:
            sys.exit(f"{path}: layering line {n}: expected 'Target: deps'")
        name, rest = line.split(":", 1)
        words = rest.split()
        llvm_free = "[llvm-free]" in words
        table[name.strip()] = (set(w for w in words if w != "[llvm-free]"), llvm_free)
    return table


def parse_layering(path):
    targets = {}
    for line in open(path):
        parts = line.split()
        if len(parts) < 2:
            continue
        deps = [d.strip(",;") for d in parts[2:]]
        targets[parts[0]] = (parts[1], [d for d in deps if d])
    return targets


def header_owner(header, folders):
    """The target whose folder holds `header` (a path like neo/Codegen/CPU/X.h)."""
    if header.startswith("neo-c/"):
        return folders.get("lib/CAPI")
    if not header.startswith("neo/"):
        return None
    rel = os.path.dirname(header[len("neo/"):])
    special = {"": {"Registration.h": "lib/Registration", "InitAllNeo.h": "lib/Registration"}}
    base = os.path.basename(header)
    if rel in special and base in special[rel]:
        return folders.get(special[rel][base])
    # The deepest library folder that is a prefix of the header's folder.
    parts = rel.split("/")
    while parts:
        owner = folders.get("lib/" + "/".join(parts))
        if owner:
            return owner
        parts.pop()
    return None


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    layering, root = sys.argv[1], sys.argv[2]
    table = parse_table(os.path.join(root, "docs", "architecture.md"))
    targets = parse_layering(layering)
    folders = {folder: t for t, (folder, _) in targets.items() if folder.startswith("lib/")}
    neo_targets = set(targets)
    errors = []
    for target, (folder, deps) in sorted(targets.items()):
        if target not in table:
            errors.append(f"{target}: not in the layering table of docs/architecture.md")
            continue
        allowed, llvm_free = table[target]
        for dep in deps:
            if dep in neo_targets and dep not in allowed:
                errors.append(f"{target}: links {dep}, which docs/architecture.md does not allow")
            if llvm_free and dep in ("MLIR", "LLVM") or llvm_free and dep.startswith("MLIR"):
                errors.append(f"{target}: is LLVM-free but links {dep}")
        dirs = [os.path.join(root, folder)]
        if folder.startswith("lib/"):
            dirs.append(os.path.join(root, "include", "neo", folder[len("lib/"):]))
        for d in dirs:
            if not os.path.isdir(d):
                continue
            for name in sorted(os.listdir(d)):
                path = os.path.join(d, name)
                if not os.path.isfile(path) or not name.endswith((".cpp", ".h", ".c")):
                    continue
                for n, line in enumerate(open(path, errors="replace"), 1):
                    m = re.match(r'\s*#\s*include\s+[<"]([^">]+)[">]', line)
                    if not m:
                        continue
                    inc = m.group(1)
                    where = f"{os.path.relpath(path, root)}:{n}"
                    if llvm_free and (inc.startswith("mlir/") or inc.startswith("llvm/")):
                        errors.append(f"{where}: {target} is LLVM-free but includes {inc}")
                    owner = header_owner(inc, folders)
                    if owner and owner != target and owner not in allowed:
                        errors.append(f"{where}: {target} includes {inc} of {owner}, "
                                      "which docs/architecture.md does not allow")
    for e in errors:
        print(e)
    if errors:
        print(f"layering: {len(errors)} violation(s)")
        return 1
    print(f"layering ok: {len(targets)} targets")
    return 0


if __name__ == "__main__":
    sys.exit(main())
