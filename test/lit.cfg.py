# -*- Python -*-
import os

import lit.formats
import lit.util
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "NEO"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".neo", ".test"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs", "unit"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.neo_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%neo_src", config.neo_src_root))
config.substitutions.append(("%neo_obj", config.neo_obj_root))
config.substitutions.append(("%python", config.python_executable))
# In the ASan build (scripts/sanitize.sh) the uninstrumented python3 loads the
# instrumented libNeoCAPI.so with the ASan runtime preloaded.
capi_python = config.python_executable
if config.neo_asan_runtime:
    config.available_features.add("asan")
    capi_python = "env LD_PRELOAD=%s ASAN_OPTIONS=detect_leaks=0:allow_user_poisoning=0 %s" % (
        config.neo_asan_runtime, config.python_executable)
config.substitutions.append(("%capi_python", capi_python))
# Tests that repeat a whole corpus for another configuration (the ISA levels
# of isa_targets.py, the GPU bundles of every operator) take its core subset
# under ASan, whose suite checks
# Neo's memory accesses, not its numbers, and would otherwise run each
# operator's checks once more at a tenth of the speed.
# (make_bundles.py also takes its references from the CPU pipeline there.)
config.substitutions.append(
    ("%asan_quick", "--quick --reference cpu" if config.neo_asan_runtime else ""))
config.substitutions.append(
    ("%asan_subset",
     "--only=matmul,conv2d,lstm_cell,softmax,layernorm,depthwise_conv"
     if config.neo_asan_runtime else ""))
config.environment["PYTHONPATH"] = os.path.join(config.neo_src_root, "test", "lib")
config.environment["NEO_BIN"] = config.neo_tools_dir
# Split .neo files at "# -----" lines (spelled here so that RUN lines do not
# contain the marker themselves).
config.substitutions.append(("%neo_split", '--split-input-file="# ' + '-' * 5 + '"'))
llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

# The LLVM optimization level of the code neo-run compiles (`--param
# jit_opt=N`). The ASan suite uses 0: libLLVM.so is not instrumented, nor is
# the JIT-compiled code, so LLVM's optimizer and instruction selection (most
# of a test's time at -O3) check nothing there, while Neo's own code (the
# frontend, every MLIR pass, the runtime) does the same work at any level.
# The Release suite keeps neo-run's default (-O3), the code users run.
jit_opt = lit_config.params.get("jit_opt", "0" if config.neo_asan_runtime else "")
run_args = ["-O%s" % jit_opt] if jit_opt else []
if jit_opt:
    lit_config.note("neo-run compiles at -O%s in this suite" % jit_opt)
config.environment["NEO_RUN_ARGS"] = " ".join(run_args)
# The Python integration tests (test/lib/neotest.py) compare with numpy or
# PyTorch; under ASan they skip neo-run's second comparison with the
# interpreter, whose instrumented build is too slow for their sizes.
config.environment["NEO_TEST_INTERPRETER"] = "0" if config.neo_asan_runtime else "1"
# Tests of what LLVM's optimizer does to the JIT's code need it to run.
if jit_opt in ("", "1", "2", "3"):
    config.available_features.add("jit-optimized")

tool_dirs = [config.neo_tools_dir, config.llvm_tools_dir]
tools = ["neo-opt", "neo-translate", ToolSubst("neo-run", extra_args=run_args), "neo-tune",
         "neo-cuda-runner"]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# The host's vector ISA (from /proc/cpuinfo): `host-x86_64`, `host-avx2`
# (AVX2 and FMA), `host-avx512` (AVX-512F). Tests of the code for narrower
# ISAs (test/Integration/CPU/isa_targets.py) run the levels the host has.
def _cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()

import platform
if platform.machine() in ("x86_64", "AMD64"):
    config.available_features.add("host-x86_64")
    _flags = _cpu_flags()
    if {"avx2", "fma"} <= _flags:
        config.available_features.add("host-avx2")
    if "avx512f" in _flags:
        config.available_features.add("host-avx512")

# `cuda-device`: a CUDA device is usable here (`neo-cuda-runner --probe`
# succeeds), so tests that run kernels on a GPU say `REQUIRES: cuda-device`.
def _has_cuda_device():
    import subprocess
    runner = os.path.join(config.neo_tools_dir, "neo-cuda-runner")
    if not os.path.exists(runner):
        return False
    try:
        return subprocess.run([runner, "--probe"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=120).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False

if _has_cuda_device():
    config.available_features.add("cuda-device")

# `ptxas`: the CUDA toolkit's assembler is here, so neo-run --emit-bundle
# assembles every kernel into a cubin (tests of generated PTX REQUIRE it).
def _find_ptxas():
    import shutil
    for home in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if home and os.access(os.path.join(home, "bin", "ptxas"), os.X_OK):
            return os.path.join(home, "bin", "ptxas")
    return shutil.which("ptxas")

if _find_ptxas():
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", _find_ptxas()))
else:
    lit_config.note("ptxas not found (set CUDA_HOME): GPU codegen tests that assemble "
                    "PTX are skipped")
if "CUDA_HOME" in os.environ:
    config.environment["CUDA_HOME"] = os.environ["CUDA_HOME"]
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.neo_tools_dir, append_path=True)

# `torch2`: the benchmark venv (scripts/bench-env.sh: PyTorch 2.x from PyPI
# and pytest) is here, so test/Python/torch2.test runs neo.torch's
# torch.compile tests with it. Only its stamp file is read (no interpreter
# start): a fresh CI machine has no venv and skips that test.
def _torch2_python():
    venv = os.environ.get("NEO_BENCH_VENV",
                          os.path.join(os.path.expanduser("~"), ".cache", "neo", "bench-venv"))
    python = os.path.join(venv, "bin", "python")
    try:
        with open(os.path.join(venv, ".neo-bench-ok")) as f:
            packages = f.readline()
    except OSError:
        return None
    return python if "pytest" in packages and os.access(python, os.X_OK) else None

if _torch2_python() and not config.neo_asan_runtime:
    config.available_features.add("torch2")
    config.substitutions.append(("%torch2_python", _torch2_python()))
else:
    lit_config.note("no PyTorch 2.x venv (scripts/bench-env.sh): neo.torch's torch.compile "
                    "tests are skipped")
