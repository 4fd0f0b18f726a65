//===- AtomicOutput.h - `-o FILE` written atomically by MLIR drivers -*- C++ -*-===//
//
// MlirOptMain and mlirTranslateMain write `-o FILE` in place: while they run
// the file holds part of the output, and when they fail they delete it (and
// whatever was there before). Neo's drivers instead point `-o` at a temporary
// file next to FILE and rename it over FILE only on success, so FILE is
// always either its old contents or the complete new output:
//
//   AtomicOutput output(argc, argv);
//   return output.finish(succeeded(mlir::MlirOptMain(output.argc(), output.argv(), ...)));
//
// This is a thin argv wrapper: which file is written how (a symbolic link
// followed, a device or FIFO written directly and left to the driver, the
// temporary removed on errors, on exit() and on SIGINT/SIGTERM/SIGHUP) is
// NeoSupport's AtomicFile (neo/Support/AtomicFile.h).
//
//===----------------------------------------------------------------------===//
#ifndef NEO_TOOLS_COMMON_ATOMICOUTPUT_H
#define NEO_TOOLS_COMMON_ATOMICOUTPUT_H

#include "neo/Support/AtomicFile.h"
#include "neo/Support/TemporaryFiles.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace neo_tools {

class AtomicOutput {
public:
  /// Copies the arguments, redirecting each `-o FILE`, `-o=FILE`, `--o FILE`
  /// and `--o=FILE` (FILE other than "-") to one temporary file.
  AtomicOutput(int argc, char **argv) {
    mlir::neo::installTemporaryFileCleanup();
    for (int i = 0; i < argc; ++i)
      args.emplace_back(argv[i]);
    for (size_t i = 1; i < args.size(); ++i) {
      llvm::StringRef arg = args[i];
      if (arg == "--")
        break;
      if ((arg == "-o" || arg == "--o") && i + 1 < args.size()) {
        redirect(args[i + 1]);
        ++i;
      } else if (arg.starts_with("-o=") || arg.starts_with("--o=")) {
        size_t eq = arg.find('=');
        std::string path = arg.substr(eq + 1).str();
        std::string flag = arg.substr(0, eq + 1).str();
        if (redirect(path))
          args[i] = flag + path;
      }
    }
    for (std::string &a : args)
      pointers.push_back(a.data());
    pointers.push_back(nullptr);
  }

  int argc() const { return static_cast<int>(args.size()); }
  char **argv() { return pointers.data(); }

  /// Renames the temporary file over the output when `ok`, else removes it;
  /// returns the exit status.
  int finish(bool ok) {
    if (!setupError.empty()) {
      llvm::errs() << setupError << "\n";
      return 1;
    }
    if (!file || file->isDirect())
      return ok ? 0 : 1;
    if (!ok) {
      file->discard();
      return 1;
    }
    // The driver wrote and closed the temporary file by its name.
    if (mlir::neo::Status s = file->commit(); !s.ok()) {
      llvm::errs() << "cannot write output file '" << finalPath
                   << "': " << std::strerror(file->getErrorNumber()) << "\n";
      return 1;
    }
    return 0;
  }

  /// Whether the arguments could not be set up (the output's directory does
  /// not exist, ...): then the tool must not run; finish() reports it.
  bool failedSetup() const { return !setupError.empty(); }

private:
  /// Points `path` at the temporary file; false when it stays as it is.
  bool redirect(std::string &path) {
    if (path == "-" || path.empty())
      return false;
    if (!file) {
      finalPath = path;
      file = std::make_unique<mlir::neo::AtomicFile>();
      mlir::neo::AtomicFile::Options options;
      options.openSpecialFiles = false; // The driver opens them itself.
      if (mlir::neo::Status s = file->open(path, options); !s.ok()) {
        setupError =
            "cannot open output file '" + path + "': " + std::strerror(file->getErrorNumber());
        return false;
      }
      // The driver writes the temporary file by its name; close ours.
      file->closeDescriptor();
    } else if (path != finalPath) {
      setupError = "the output file is given twice ('" + finalPath + "' and '" + path + "')";
      return false;
    }
    // A device or FIFO is left to the driver, which writes it in place.
    if (file->isDirect())
      return false;
    path = file->getTemporaryPath();
    return true;
  }

  std::vector<std::string> args;
  std::vector<char *> pointers;
  std::unique_ptr<mlir::neo::AtomicFile> file;
  std::string finalPath, setupError;
};

} // namespace neo_tools

#endif // NEO_TOOLS_COMMON_ATOMICOUTPUT_H
