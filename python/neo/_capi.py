"""ctypes declarations of Neo's C API (include/neo-c/Neo.h)."""
import ctypes
import glob
import os

_HERE = os.path.dirname(os.path.abspath(__file__))


def _candidates():
    env = os.environ.get("NEO_LIBRARY")
    if env:
        yield env
    # Installed next to the package, or the repository's build tree.
    yield os.path.join(_HERE, "libNeoCAPI.so")
    root = os.path.dirname(os.path.dirname(_HERE))
    for build in [os.environ.get("NEO_BUILD_DIR", ""), os.path.join(root, "build")]:
        if build:
            yield os.path.join(build, "lib", "libNeoCAPI.so")
    for path in glob.glob(os.path.join(root, "build*", "lib", "libNeoCAPI.so")):
        yield path


def _load():
    tried = []
    for path in _candidates():
        if path and os.path.exists(path):
            return ctypes.CDLL(path)
        tried.append(path)
    raise ImportError("cannot find libNeoCAPI.so (set NEO_LIBRARY; looked at %s)"
                      % ", ".join(p for p in tried if p))


lib = _load()

c_char_p, c_int, c_int64, c_size_t, c_void_p, c_double, c_uint = (
    ctypes.c_char_p, ctypes.c_int, ctypes.c_int64, ctypes.c_size_t, ctypes.c_void_p,
    ctypes.c_double, ctypes.c_uint)


# NeoDevice.
DEVICE_CPU, DEVICE_CUDA, DEVICE_AUTO = 0, 1, 2
DEVICES = {"cpu": DEVICE_CPU, "cuda": DEVICE_CUDA, "auto": DEVICE_AUTO}


class NeoTensor(ctypes.Structure):
    _fields_ = [("data", c_void_p), ("type", c_int), ("rank", c_int64),
                ("shape", ctypes.POINTER(c_int64))]


class NeoImportOptions(ctypes.Structure):
    _fields_ = [("maxExpressionDepth", c_uint), ("maxStatementsPerFunction", c_uint),
                ("sizes", c_char_p)]


def _fn(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


apiVersion = _fn("neoApiVersion", c_int)
contextCreate = _fn("neoContextCreate", c_void_p, c_char_p)
contextDestroy = _fn("neoContextDestroy", None, c_void_p)
getLastError = _fn("neoGetLastError", c_char_p, c_void_p)
moduleImportFile = _fn("neoModuleImportFile", c_void_p, c_void_p, c_char_p)
moduleImportString = _fn("neoModuleImportString", c_void_p, c_void_p, c_char_p, c_char_p)
moduleImportSource = _fn("neoModuleImportSource", c_void_p, c_void_p, c_char_p, c_size_t,
                         c_char_p, ctypes.POINTER(NeoImportOptions))
sourceSignatures = _fn("neoSourceSignatures", c_void_p, c_void_p, c_char_p, c_size_t, c_char_p)
moduleDestroy = _fn("neoModuleDestroy", None, c_void_p)
moduleRunPipeline = _fn("neoModuleRunPipeline", c_int, c_void_p, c_char_p)
modulePrint = _fn("neoModulePrint", c_void_p, c_void_p)
free = _fn("neoFree", None, c_void_p)
moduleNumFunctions = _fn("neoModuleNumFunctions", c_int, c_void_p)
moduleFunctionName = _fn("neoModuleFunctionName", c_char_p, c_void_p, c_int)
compile = _fn("neoCompile", c_void_p, c_void_p, c_char_p, c_int)
compileFunctions = _fn("neoCompileFunctions", c_void_p, c_void_p, ctypes.POINTER(c_char_p), c_int,
                       c_char_p, c_int)
compileForDevice = _fn("neoCompileForDevice", c_void_p, c_void_p, c_int, c_char_p, c_int, c_char_p)
executableGetDevice = _fn("neoExecutableGetDevice", c_int, c_void_p)
cudaAvailable = _fn("neoCudaAvailable", c_int)
executableDestroy = _fn("neoExecutableDestroy", None, c_void_p)
executableNumInputs = _fn("neoExecutableNumInputs", c_int, c_void_p, c_char_p)
executableNumOutputs = _fn("neoExecutableNumOutputs", c_int, c_void_p, c_char_p)
_describe = [c_void_p, c_char_p, c_int, ctypes.POINTER(c_int), ctypes.POINTER(c_int64),
             ctypes.POINTER(ctypes.POINTER(c_int64)), ctypes.POINTER(c_char_p)]
executableGetInput = _fn("neoExecutableGetInput", c_int, *_describe)
executableGetOutput = _fn("neoExecutableGetOutput", c_int, *_describe)
executableRun = _fn("neoExecutableRun", c_int, c_void_p, c_char_p, ctypes.POINTER(NeoTensor),
                    c_int, ctypes.POINTER(NeoTensor), c_int, c_char_p, c_size_t)
# The same function without argtypes, for calls whose arguments are all
# prebuilt ctypes objects (neo.Function._run_pointers): nothing is converted
# per call.
executableRunPrepared = lib["neoExecutableRun"]
executableRunPrepared.restype = c_int
executableTime = _fn("neoExecutableTime", c_int, c_void_p, c_char_p, ctypes.POINTER(NeoTensor),
                     c_int, ctypes.POINTER(NeoTensor), c_int, c_uint, ctypes.POINTER(c_double),
                     c_char_p, c_size_t)
moduleInterpret = _fn("neoModuleInterpret", c_int, c_void_p, c_char_p,
                      ctypes.POINTER(NeoTensor), c_int, ctypes.POINTER(NeoTensor), c_int)
moduleGradcheck = _fn("neoModuleGradcheck", c_int, c_void_p, c_char_p, c_uint, c_uint, c_double,
                      ctypes.POINTER(c_void_p))
