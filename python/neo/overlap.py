"""Compilation overlapped with training (NeoFlow's runtime).

    f = neo.overlap.HotFunction(module, "step")   # returns at once
    for batch in data:
        out = f(*inputs)                          # quick version first

The first calls run a version compiled quickly (no schedule, -O1); one
background thread compiles the tuned versions (GEMM kernels, vectors,
threads, -O3) of all hot functions, one after the other, and swaps each in
between calls. Calls and swaps are thread-safe: a call takes the current
function once and runs it whole.
"""
import atexit
import queue
import threading
import time

__all__ = ["HotFunction", "wait_all"]

QUICK = ("schedule=false threads=1", 1)
TUNED = ("", 3)

_jobs = queue.Queue()
_worker = None
_worker_lock = threading.Lock()
_pending = 0
_idle = threading.Condition(_worker_lock)


def _work():
    global _pending
    while True:
        job = _jobs.get()
        if job is None:
            return
        try:
            job()
        finally:
            with _worker_lock:
                _pending -= 1
                _idle.notify_all()


def _submit(job):
    global _worker, _pending
    with _worker_lock:
        _pending += 1
        if _worker is None:
            _worker = threading.Thread(target=_work, daemon=True, name="neo-compile")
            _worker.start()
    _jobs.put(job)


def wait_all(timeout=None):
    """Waits until every background compilation has finished."""
    with _worker_lock:
        return _idle.wait_for(lambda: _pending == 0, timeout)


# A compilation still running when the interpreter exits would be torn down
# inside LLVM: wait for it first.
atexit.register(wait_all)


class HotFunction:
    def __init__(self, module, function, quick=QUICK, tuned=TUNED, background=True):
        self.name = function
        self.timeline = {"created": time.perf_counter()}
        self._lock = threading.Lock()
        self._current = module.compile(function, options=quick[0], opt_level=quick[1])
        self.timeline["quick_ready"] = time.perf_counter()
        self.swapped = threading.Event()
        self.error = None
        self._done = threading.Event()
        if background:
            # The background compile gets its own copy of the module, in its
            # own context: the training thread keeps using this one.
            text = str(module)
            _submit(lambda: self._compile_tuned(text, tuned))
        else:
            self._done.set()

    def _compile_tuned(self, text, tuned):
        from . import Context, Module
        try:
            context = Context()
            module = Module.from_source(text, name=self.name + ".mlir", context=context)
            self.swap(module.compile(self.name, options=tuned[0], opt_level=tuned[1]))
        except Exception as e:  # reported through .error
            self.error = e
        finally:
            self._done.set()

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
        self._done.wait(timeout)
        return self.swapped.is_set()
