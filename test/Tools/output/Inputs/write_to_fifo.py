"""Runs TOOL ARGS... -o FIFO with a reader on the FIFO; checks that the tool
succeeds, that the FIFO is still a FIFO (the atomic writer used to rename a
temporary file over the output, which replaced /dev/null for the machine),
and prints what came through it."""
import os
import stat
import subprocess
import sys
import threading

fifo, cmd = sys.argv[1], sys.argv[2:]
os.mkfifo(fifo)
got = []
reader = threading.Thread(target=lambda: got.append(open(fifo).read()))
reader.start()
rc = subprocess.call(cmd + ["-o", fifo])
reader.join(timeout=60)
assert rc == 0, rc
assert stat.S_ISFIFO(os.stat(fifo).st_mode), "the FIFO was replaced"
assert not [n for n in os.listdir(os.path.dirname(os.path.abspath(fifo)))
            if n.startswith(os.path.basename(fifo) + ".tmp-")], "a temporary file was left"
print(got[0] if got else "<nothing>")
