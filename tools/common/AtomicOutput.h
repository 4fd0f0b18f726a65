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
//===----------------------------------------------------------------------===//
#ifndef NEO_TOOLS_COMMON_ATOMICOUTPUT_H
#define NEO_TOOLS_COMMON_ATOMICOUTPUT_H

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace neo_tools {

class AtomicOutput {
public:
  /// Copies the arguments, redirecting each `-o FILE`, `-o=FILE`, `--o FILE`
  /// and `--o=FILE` (FILE other than "-") to one temporary file.
  AtomicOutput(int argc, char **argv) {
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
    if (tempPath.empty())
      return ok ? 0 : 1;
    if (!ok) {
      llvm::sys::fs::remove(tempPath);
      return 1;
    }
    if (std::error_code ec = llvm::sys::fs::rename(tempPath, finalPath)) {
      llvm::sys::fs::remove(tempPath);
      llvm::errs() << "cannot write output file '" << finalPath << "': " << ec.message() << "\n";
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
    // An output that exists and is not a regular file (/dev/null, a FIFO, a
    // terminal) is written in place: renaming a temporary file over it would
    // replace the device (-o /dev/null run as root replaced /dev/null with a
    // regular file for the whole machine).
    llvm::sys::fs::file_status status;
    if (!llvm::sys::fs::status(path, status) && llvm::sys::fs::exists(status) &&
        !llvm::sys::fs::is_regular_file(status) && !llvm::sys::fs::is_directory(status))
      return false;
    if (tempPath.empty()) {
      finalPath = path;
      llvm::SmallString<256> temp;
      int fd;
      if (std::error_code ec = llvm::sys::fs::createUniqueFile(path + ".tmp-%%%%%%%%", fd, temp)) {
        setupError = "cannot open output file '" + path + "': " + ec.message();
        return false;
      }
      llvm::sys::Process::SafelyCloseFileDescriptor(fd);
      tempPath = temp.str().str();
    } else if (path != finalPath) {
      setupError = "the output file is given twice ('" + finalPath + "' and '" + path + "')";
      return false;
    }
    path = tempPath;
    return true;
  }

  std::vector<std::string> args;
  std::vector<char *> pointers;
  std::string finalPath, tempPath, setupError;
};

} // namespace neo_tools

#endif // NEO_TOOLS_COMMON_ATOMICOUTPUT_H
