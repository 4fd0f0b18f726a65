"""A tool killed by SIGTERM while it holds an output temporary (issue 18).

neo-opt and neo-translate create `-o FILE`'s temporary `FILE.tmp-XXXXXXXX`
before they read their input. Here the input is a FIFO that the test feeds
half a module and then holds open, so the tool is stuck reading with the
temporary in place; it is then killed with SIGTERM (and, for neo-translate,
SIGINT and SIGHUP). Before NeoSupport's cleanup handlers the temporary stayed
behind. Every wait is bounded.

usage: kill_writer.py TMPDIR
"""
import errno
import os
import signal
import subprocess
import sys
import time

BIN = os.environ["NEO_BIN"]
tmp = sys.argv[1]


def open_writer(fifo, proc, deadline):
    """Opens the FIFO for writing once the tool opened it for reading."""
    while time.time() < deadline:
        try:
            return os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as e:
            if e.errno != errno.ENXIO:
                raise
        if proc.poll() is not None:
            sys.exit("FAIL: the tool exited early: %s" % proc.stderr.read())
        time.sleep(0.02)
    sys.exit("FAIL: the tool never opened its input")


def case(name, args, text, sig):
    out = os.path.join(tmp, name)
    os.mkdir(out)
    fifo = os.path.join(tmp, name + ".fifo")
    os.mkfifo(fifo)
    proc = subprocess.Popen([os.path.join(BIN, args[0])] + args[1:] +
                            [fifo, "-o", os.path.join(out, "out.mlir")],
                            stderr=subprocess.PIPE, text=True,
                            # Not ignored, even if this runs in the background.
                            preexec_fn=lambda: signal.signal(sig, signal.SIG_DFL))
    fd = None
    try:
        fd = open_writer(fifo, proc, time.time() + 60)
        os.write(fd, text.encode())
        deadline = time.time() + 30
        while not any(".tmp-" in n for n in os.listdir(out)):
            if time.time() > deadline:
                sys.exit("FAIL: no temporary file appeared")
            time.sleep(0.02)
        time.sleep(0.2)  # well inside the read
        proc.send_signal(sig)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if fd is not None:
            os.close(fd)
    left = sorted(os.listdir(out))
    print("%s: killed by %s: %s, left: %s" % (
        name, signal.Signals(sig).name, proc.returncode == -sig, left or "nothing"))


case("opt", ["neo-opt"], "func.func @f(%a: f32) -> f32 {\n", signal.SIGTERM)
case("translate", ["neo-translate", "--import-neo"], "def f(x: f32[4]) -> y {\n", signal.SIGINT)
case("hup", ["neo-opt", "--canonicalize"], "module {\n", signal.SIGHUP)
