"""Compilation overlapped with training (NeoFlow's runtime).

    f = neo.overlap.HotFunction(module, "step")   # returns at once
    for batch in data:
        out = f(*inputs)                          # quick version first

The first calls run a version compiled quickly (no schedule, -O1); a
background thread compiles the tuned version (GEMM kernels, vectors,
threads, -O3) and swaps it in between calls. Calls and the swap are
thread-safe: a call takes the current function once and runs it whole.
"""
import atexit
import threading
import time

__all__ = ["HotFunction"]

# Background compilations still running when the interpreter exits would be
# torn down inside LLVM: wait for them first.
_running = set()
_running_lock = threading.Lock()


@atexit.register
def _join_background_compiles():
    with _running_lock:
        threads = list(_running)
    for t in threads:
        t.join()

QUICK = ("schedule=false threads=1", 1)
TUNED = ("", 3)


class HotFunction:
    def __init__(self, module, function, quick=QUICK, tuned=TUNED, background=True):
        self.name = function
        self.timeline = {"created": time.perf_counter()}
        self._lock = threading.Lock()
        self._current = module.compile(function, options=quick[0], opt_level=quick[1])
        self.timeline["quick_ready"] = time.perf_counter()
        self.swapped = threading.Event()
        self.error = None
        # The background compile gets its own module text: the context is not
        # shared with the training thread.
        self._thread = None
        if background:
            text = str(module)
            self._thread = threading.Thread(target=self._compile_tuned,
                                            args=(text, tuned), daemon=True)
            with _running_lock:
                _running.add(self._thread)
            self._thread.start()

    def _compile_tuned(self, text, tuned):
        from . import Context, Module
        try:
            context = Context()
            module = Module.from_source(text, name=self.name + ".mlir", context=context)
            fn = module.compile(self.name, options=tuned[0], opt_level=tuned[1])
            self.swap(fn)
        except Exception as e:  # reported through .error
            self.error = e
        finally:
            with _running_lock:
                _running.discard(threading.current_thread())

    def swap(self, fn):
        with self._lock:
            self._current = fn
        self.timeline["swapped"] = time.perf_counter()
        self.swapped.set()

    @property
    def current(self):
        with self._lock:
            return self._current

    def __call__(self, *args, **kwargs):
        return self.current(*args, **kwargs)

    def wait(self, timeout=None):
        """Waits for the tuned version; returns whether it is in use."""
        if self._thread:
            self._thread.join(timeout)
        return self.swapped.is_set()
