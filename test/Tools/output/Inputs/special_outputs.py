"""`-o` naming a FIFO, a symbolic link or /dev/null (issue 18).

Before NeoSupport's AtomicFile, neo-opt and neo-translate wrote `-o PATH` to a
temporary file and renamed it over PATH whatever PATH was: a FIFO (whose reader
then waited forever) or /dev/null (run as root) became a regular file, and a
symbolic link was replaced by a file. Now special files are written directly
and links are followed. Every wait here is bounded.

usage: special_outputs.py TMPDIR
"""
import os
import stat
import subprocess
import sys

BIN = os.environ["NEO_BIN"]
tmp = sys.argv[1]
INPUT = os.path.join(tmp, "in.mlir")
with open(INPUT, "w") as f:
    f.write("func.func @f(%a: f32) -> f32 {\n  return %a : f32\n}\n")


def run(tool, *args):
    r = subprocess.run([os.path.join(BIN, tool), *args], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, (tool, args, r.stderr)


def kind(path):
    return stat.S_IFMT(os.lstat(path).st_mode)


# A FIFO: a reader gets the output, and the FIFO stays a FIFO.
fifo = os.path.join(tmp, "fifo")
os.mkfifo(fifo)
reader = subprocess.Popen(["cat", fifo], stdout=subprocess.PIPE)
try:
    run("neo-opt", INPUT, "-o", fifo)
    out, _ = reader.communicate(timeout=30)
finally:
    if reader.poll() is None:
        reader.kill()  # it would wait forever on a FIFO renamed over
        reader.wait()
        print("FAIL: the FIFO's reader got no end of file")
assert b"func.func @f" in out, out
assert kind(fifo) == stat.S_IFIFO, "the FIFO was replaced"
print("fifo: ok")

# A symbolic link: its target is written, the link stays a link.
real = os.path.join(tmp, "real.mlir")
link = os.path.join(tmp, "link.mlir")
with open(real, "w") as f:
    f.write("old\n")
os.symlink("real.mlir", link)
run("neo-opt", INPUT, "-o", link)
assert kind(link) == stat.S_IFLNK, "the link was replaced"
assert "func.func @f" in open(real).read()
# A dangling link: its target is created.
os.symlink("created.mlir", os.path.join(tmp, "dangling.mlir"))
run("neo-opt", INPUT, "--o=" + os.path.join(tmp, "dangling.mlir"))
assert kind(os.path.join(tmp, "dangling.mlir")) == stat.S_IFLNK
assert "func.func @f" in open(os.path.join(tmp, "created.mlir")).read()
print("symlink: ok")

# A link to an open descriptor (like /dev/stdout): written through.
r = subprocess.run([os.path.join(BIN, "neo-opt"), INPUT, "-o", "/proc/self/fd/1"],
                   capture_output=True, text=True, timeout=120)
assert r.returncode == 0 and "func.func @f" in r.stdout, (r.stdout, r.stderr)
print("descriptor link: ok")

# /dev/null is written and stays a character device (run as root, it was
# replaced by a regular file).
assert kind("/dev/null") == stat.S_IFCHR, (
    "/dev/null is not a character device before the test: something else replaced it "
    "(as root: mknod -m 666 /dev/null.new c 1 3 && mv /dev/null.new /dev/null)")
run("neo-opt", INPUT, "-o", "/dev/null")
neo = os.path.join(tmp, "f.neo")
with open(neo, "w") as f:
    f.write("def f(x: f32[4]) -> y {\n  y[i] = x[i] * 2\n}\n")
run("neo-translate", "--import-neo", neo, "-o", "/dev/null")
run("neo-opt", INPUT, "--neo-eqsat-fuse=report=/dev/null", "-o", "/dev/null")
assert kind("/dev/null") == stat.S_IFCHR, "/dev/null is no longer a character device"
print("/dev/null: ok")

leftovers = [n for n in os.listdir(tmp) if ".tmp-" in n]
assert not leftovers, leftovers
print("no temporaries")
