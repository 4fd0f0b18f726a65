//===- TemporaryFiles.h - Removing temporaries when a tool dies -*- C++ -*-===//
//
// Every temporary file and staging directory that NeoSupport creates
// (AtomicFile, OutputFileSet, writeFileAtomically) is entered in one
// process-wide table of fixed size, which an async-signal-safe handler and an
// atexit hook empty by removing each entry:
//
//   int main(int argc, char **argv) {
//     llvm::InitLLVM init(argc, argv);      // (LLVM tools; either order works)
//     mlir::neo::installTemporaryFileCleanup();
//
// Libraries only register and unregister entries (a few atomic stores); only
// the tool's main installs the handlers, so that an embedder keeps control of
// its signals. The handler runs on SIGINT, SIGTERM and SIGHUP: it removes the
// registered files, then the registered directories (deepest first), restores
// the disposition the signal had before (LLVM's handler, the default, ...) and
// raises the signal again, so the process still dies of it (or LLVM removes
// its own files first). A signal that was ignored when the handlers were
// installed stays ignored. The atexit hook covers exit() from inside a
// library (LLVM's option parser exits on a bad option).
//
// The table holds 256 entries of up to 4095 bytes each; a temporary that does
// not fit is not registered (it is still removed on errors, just not on
// signals). SIGKILL cannot be caught: after it, `*.tmp-XXXXXXXX` files and
// `*.tmp-XXXXXXXX` / `.neo-staging-XXXXXXXX` directories may remain.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_SUPPORT_TEMPORARYFILES_H
#define NEO_SUPPORT_TEMPORARYFILES_H

#include <string>

namespace mlir {
namespace neo {

/// Enters `path` in the table; returns a handle for unregisterTemporary, or
/// -1 when the table is full or the path too long. `isDirectory` entries are
/// removed with rmdir after all files (so register what is inside too).
int registerTemporary(const std::string &path, bool isDirectory = false);

/// Removes the entry `handle` (from registerTemporary; -1 is ignored) from
/// the table, e.g. after the file was renamed into place or removed.
void unregisterTemporary(int handle);

/// Installs the SIGINT/SIGTERM/SIGHUP handlers and the atexit hook that remove
/// every registered temporary. Idempotent and thread-safe; for tools' main.
void installTemporaryFileCleanup();

/// Removes every registered temporary now (what the handlers do). For tests.
void removeRegisteredTemporaries();

} // namespace neo
} // namespace mlir

#endif // NEO_SUPPORT_TEMPORARYFILES_H
