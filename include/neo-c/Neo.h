/*===- neo-c/Neo.h - The C API of Neo -------------------------------------===*\
|*                                                                            *|
|* A small, stable C interface to Neo for Python (ctypes) and other embedders: *|
|* import .neo or MLIR modules, run pass pipelines, compile modules for the   *|
|* host CPU or a CUDA GPU, run their functions on caller buffers, and        *|
|* evaluate them with the reference interpreter.                              *|
|*                                                                            *|
|* Errors: functions that can fail return NULL or a non-zero status and leave *|
|* a message (with file:line:col locations where there are any) that         *|
|* neoGetLastError() returns until the next call on the same context.         *|
|*                                                                            *|
|* Threads: a context, and the modules imported into it, are used by one      *|
|* thread at a time. Executables may be run from several threads at once;     *|
|* their errors are returned through neoExecutableRun's message buffer.       *|
|*                                                                            *|
|* Typical use:                                                               *|
|*   NeoContext *ctx = neoContextCreate(NULL);                                *|
|*   NeoModule *m = neoModuleImportFile(ctx, "model.neo");                    *|
|*   NeoExecutable *exe = neoCompile(m, NULL, 3);                             *|
|*   NeoTensor in[2] = {...}, out[1] = {...};                                 *|
|*   if (neoExecutableRun(exe, "f", in, 2, out, 1, NULL, 0)) ...error...      *|
|*   neoExecutableDestroy(exe); neoModuleDestroy(m); neoContextDestroy(ctx);  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
#ifndef NEO_C_NEO_H
#define NEO_C_NEO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct NeoContext NeoContext;
typedef struct NeoModule NeoModule;
typedef struct NeoExecutable NeoExecutable;

/* Mirrors mlir::neo::ElementType (neo/Support/ElementType.h), value
 * for value. NEO_I32 and NEO_I64 are index tensors (inputs only: token ids,
 * labels, CSR indices); results are floating-point. */
typedef enum NeoElementType {
  NEO_F16 = 0,
  NEO_BF16 = 1,
  NEO_F32 = 2,
  NEO_F64 = 3,
  NEO_I32 = 4,
  NEO_I64 = 5,
} NeoElementType;

/* Where compiled code runs. NEO_DEVICE_AUTO: a CUDA GPU when a driver with a
 * device can be opened here, else the host CPU. */
typedef enum NeoDevice {
  NEO_DEVICE_CPU = 0,
  NEO_DEVICE_CUDA = 1,
  NEO_DEVICE_AUTO = 2,
} NeoDevice;

/* A dense, row-major, caller-owned host tensor. */
typedef struct NeoTensor {
  void *data;
  NeoElementType type;
  int64_t rank;
  const int64_t *shape; /* rank entries; may be NULL when rank is 0 */
} NeoTensor;

/* The version of this API (bumped on incompatible changes). */
int neoApiVersion(void);

/* Contexts. `cacheDir` (may be NULL) is the on-disk cache of compiled code. */
NeoContext *neoContextCreate(const char *cacheDir);
void neoContextDestroy(NeoContext *ctx);
/* The message of the last failed call on `ctx` ("" if it succeeded). */
const char *neoGetLastError(NeoContext *ctx);

/* Modules. A file or buffer whose name ends in ".neo" is read as the .neo
 * language, anything else as MLIR. The module is verified. */
NeoModule *neoModuleImportFile(NeoContext *ctx, const char *path);
NeoModule *neoModuleImportString(NeoContext *ctx, const char *source,
                                 const char *bufferName);
/* Limits of the .neo importer (docs/errors.md#limits); 0 leaves a field at
 * its default. `sizes` (may be NULL) binds the size parameters of the
 * signatures (`x: f32[N, 784]`): "N=64,K=32". (Added in API version 3.) */
typedef struct NeoImportOptions {
  unsigned maxExpressionDepth;       /* default 256 */
  unsigned maxStatementsPerFunction; /* default 1000 */
  const char *sizes;
} NeoImportOptions;
/* Imports the `length` bytes at `source` (they need no terminating NUL; a NUL
 * byte among them is an error, not the end of the text). `options` may be
 * NULL. */
NeoModule *neoModuleImportSource(NeoContext *ctx, const char *source, size_t length,
                                 const char *bufferName, const NeoImportOptions *options);
/* The signatures of the functions of .neo source, without importing it (no
 * size parameter needs a value), as JSON: [{"name": "f", "params": [{"name":
 * "x", "dtype": "f32", "shape": ["N", 784]}], "results": [{"name": "y"}]}].
 * Free it with neoFree; NULL on a syntax error (neoGetLastError says where).
 * (Added in API version 3.) */
char *neoSourceSignatures(NeoContext *ctx, const char *source, size_t length,
                          const char *bufferName);
void neoModuleDestroy(NeoModule *module);
/* Runs a textual pass pipeline on the module, e.g. "canonicalize,cse" or
 * "neo-lower-to-cpu{stop-after=linalg}". Returns 0 on success. */
int neoModuleRunPipeline(NeoModule *module, const char *pipeline);
/* The textual IR of the module; free it with neoFree. */
char *neoModulePrint(NeoModule *module);
void neoFree(void *ptr);

/* Functions of a module (public func.func ops), and their signatures. */
int neoModuleNumFunctions(NeoModule *module);
const char *neoModuleFunctionName(NeoModule *module, int index);

/* Compiles the module for the host CPU. `pipelineOptions` (may be NULL) are
 * options of neo-lower-to-cpu; `optLevel` is 0..3. Compilation is cached by
 * the IR and the options. */
NeoExecutable *neoCompile(NeoModule *module, const char *pipelineOptions, int optLevel);
/* Compiles only the public functions `names[0..count)` of the module, and
 * what they call, for the host CPU (the other functions of an autodiff
 * module, such as the forward function next to `f_fwdbwd`, would add their
 * compile time); otherwise as neoCompile. An unknown or private name is an
 * error. */
NeoExecutable *neoCompileFunctions(NeoModule *module, const char *const *names, int count,
                                   const char *pipelineOptions, int optLevel);
/* Compiles the module for `device`. On the CPU this is neoCompile. On a
 * CUDA GPU every public function becomes a bundle of PTX kernels (and a
 * cubin when ptxas is found) loaded on the first device; `gpuPipelineOptions`
 * (may be NULL) are options of neo-lower-to-ptx (e.g. "chip=sm_90"), and
 * `pipelineOptions`/`optLevel` are ignored. NEO_DEVICE_CUDA without a usable
 * driver or device fails with the driver's reason; NEO_DEVICE_AUTO then
 * compiles for the CPU. `device` is one of NeoDevice, passed as an int so that
 * any other value is a clear error rather than an invalid enum. */
NeoExecutable *neoCompileForDevice(NeoModule *module, int device,
                                   const char *pipelineOptions, int optLevel,
                                   const char *gpuPipelineOptions);
/* The device an executable runs on (NEO_DEVICE_CPU or NEO_DEVICE_CUDA). */
NeoDevice neoExecutableGetDevice(NeoExecutable *exe);
/* 1 when a CUDA driver with a device can be opened here, else 0. */
int neoCudaAvailable(void);
void neoExecutableDestroy(NeoExecutable *exe);

/* Signatures of a compiled function: counts (-1 if `function` is unknown),
 * then each input or output: its element type, rank, shape (valid as long as
 * the executable) and source name. Return 0 on success. */
int neoExecutableNumInputs(NeoExecutable *exe, const char *function);
int neoExecutableNumOutputs(NeoExecutable *exe, const char *function);
int neoExecutableGetInput(NeoExecutable *exe, const char *function, int index,
                          NeoElementType *type, int64_t *rank, const int64_t **shape,
                          const char **name);
int neoExecutableGetOutput(NeoExecutable *exe, const char *function, int index,
                           NeoElementType *type, int64_t *rank, const int64_t **shape,
                           const char **name);

/* Runs `function`, reading `inputs` and writing `outputs` (which must not
 * overlap the inputs). Types and shapes must match the signature. Returns 0
 * on success; on failure writes a message into `error` (if not NULL), cut to
 * `errorSize` bytes. Safe to call from several threads at once. */
int neoExecutableRun(NeoExecutable *exe, const char *function, const NeoTensor *inputs,
                     int numInputs, const NeoTensor *outputs, int numOutputs,
                     char *error, size_t errorSize);

/* Times `repeat` (>= 1) runs of `function` like neoExecutableRun, writing
 * the median milliseconds to `medianMs`: on the CPU the wall time of each
 * run, on the GPU the kernel time by CUDA events (inputs uploaded once, one
 * untimed warm-up run, outputs copied back once at the end). Returns 0 on
 * success; errors as neoExecutableRun. */
int neoExecutableTime(NeoExecutable *exe, const char *function, const NeoTensor *inputs,
                      int numInputs, const NeoTensor *outputs, int numOutputs,
                      unsigned repeat, double *medianMs, char *error, size_t errorSize);

/* Evaluates `function` with the reference interpreter (double precision,
 * straight from the semantics of neo ops) and converts the results to the
 * outputs' types. Returns 0 on success. */
int neoModuleInterpret(NeoModule *module, const char *function, const NeoTensor *inputs,
                       int numInputs, const NeoTensor *outputs, int numOutputs);

/* Differentiates `function` with neo-autodiff and compares its gradient,
 * evaluated by the reference interpreter in float64, with central finite
 * differences on random inputs from `seed` (one random direction and
 * `probes` coordinates per input). Returns 0 when every input is within the
 * relative `tolerance`, 1 when one is not, -1 on error (see neoGetLastError).
 * `report` (may be NULL) receives a malloc'ed text with a line per input:
 * free it with neoFree. */
int neoModuleGradcheck(NeoModule *module, const char *function, unsigned seed,
                       unsigned probes, double tolerance, char **report);

#ifdef __cplusplus
}
#endif

#endif /* NEO_C_NEO_H */
