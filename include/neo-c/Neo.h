/*===- neo-c/Neo.h - The C API of Neo -------------------------------------===*\
|*                                                                            *|
|* A small, stable C interface to Neo for Python (ctypes) and other embedders: *|
|* import .neo or MLIR modules, run pass pipelines, compile modules for the   *|
|* host CPU, run their functions on caller buffers, and evaluate them with the *|
|* reference interpreter.                                                     *|
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

typedef enum NeoElementType {
  NEO_F16 = 0,
  NEO_BF16 = 1,
  NEO_F32 = 2,
  NEO_F64 = 3,
} NeoElementType;

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
 * its default. */
typedef struct NeoImportOptions {
  unsigned maxExpressionDepth;       /* default 256 */
  unsigned maxStatementsPerFunction; /* default 1000 */
} NeoImportOptions;
/* Imports the `length` bytes at `source` (they need no terminating NUL; a NUL
 * byte among them is an error, not the end of the text). `options` may be
 * NULL. */
NeoModule *neoModuleImportSource(NeoContext *ctx, const char *source, size_t length,
                                 const char *bufferName, const NeoImportOptions *options);
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
