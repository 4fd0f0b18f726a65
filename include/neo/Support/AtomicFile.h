//===- AtomicFile.h - One output file or a set, all or nothing --*- C++ -*-===//
//
// AtomicFile writes one output by the rule of FileIO.h (temporary file and
// rename; special files directly; symbolic links followed):
//
//   AtomicFile file;
//   if (Status s = file.open(path); !s.ok()) return s;
//   if (Status s = file.write({header, data}); !s.ok()) return s;
//   return file.commit();        // the destructor discards an uncommitted file
//
// OutputFileSet writes several files that must appear together:
//
//   OutputFileSet set;
//   if (Status s = set.begin(dir, OutputFileSet::Mode::AddFiles); !s.ok()) ...
//   set.write("a.npy", {...}); set.write("b.npy", {...});
//   return set.commit();
//
// Every file is first written into a staging directory next to the
// destination (same file system); commit() then moves them into place with
// SIGINT/SIGTERM/SIGHUP blocked. The guarantee, on any error (a failed write,
// a full disk, a destination that cannot be replaced) and on those signals
// before commit(): the destination is as it was, no file of the set is
// there, changed or removed, and the staging directory is removed. Each file
// is replaced atomically (a reader sees the old or the new file, never a
// partial one). Across files the set is all-or-nothing for failures, but not
// for readers during the few renames of commit(): a reader that looks then
// may see some files new and others old. Only SIGKILL or a crash during
// commit() can leave a mix (and a staging directory) behind.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_SUPPORT_ATOMICFILE_H
#define NEO_SUPPORT_ATOMICFILE_H

#include "neo/Support/FileIO.h"
#include "neo/Support/Status.h"

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace mlir {
namespace neo {

class AtomicFile {
public:
  struct Options {
    /// Open special files (devices, FIFOs, sockets) for writing. When false,
    /// open() succeeds for them without opening anything (isDirect() is true
    /// and fd() is -1): for callers that hand the path to other code.
    bool openSpecialFiles = true;
    /// fsync before the rename.
    bool sync = false;
  };

  AtomicFile() = default;
  AtomicFile(const AtomicFile &) = delete;
  AtomicFile &operator=(const AtomicFile &) = delete;
  ~AtomicFile() { discard(); }

  /// Prepares to write `path`. Errors start with "`path`: ".
  Status open(const std::string &path, const Options &options);
  Status open(const std::string &path) { return open(path, Options()); }

  /// Appends `parts` to the file.
  Status write(std::initializer_list<std::string_view> parts);

  /// Closes the descriptor without committing, for callers that let other
  /// code write the temporary file by its name (getTemporaryPath()); commit()
  /// and discard() work as before.
  void closeDescriptor();

  /// Makes the output visible: closes it and renames the temporary file over
  /// the destination (or just closes a special file).
  Status commit();

  /// Closes and removes the temporary file (nothing happens to a special
  /// file or to the destination). Idempotent.
  void discard();

  /// The destination as given to open().
  const std::string &getPath() const { return path; }
  /// The file the output lands in (symbolic links followed).
  const std::string &getTarget() const { return target; }
  /// The temporary file ("" when the destination is written directly).
  const std::string &getTemporaryPath() const { return tempPath; }
  /// Whether the destination is a special file, written in place.
  bool isDirect() const { return direct; }
  /// The descriptor being written (-1 when none is open).
  int fd() const { return fd_; }
  /// The errno of the last failure (0 if none), for callers that word their
  /// own message.
  int getErrorNumber() const { return lastError; }

private:
  Status fail(const std::string &what, int error);

  std::string path, target, tempPath;
  int fd_ = -1;
  int cleanupHandle = -1;
  bool direct = false, isOpen = false, sync = false;
  int writeError = 0, lastError = 0;
};

class OutputFileSet {
public:
  enum class Mode {
    /// Add (or replace) the staged files in the directory, which is created
    /// with its parents if missing; the directory's other entries stay. Names
    /// are single file names (checkFileName). An existing entry of a staged
    /// name must be a regular file: a directory, symbolic link or special
    /// file there is an error before anything changes.
    AddFiles,
    /// The directory becomes exactly the staged tree (names may hold '/',
    /// each component a valid file name). It must not exist, or be empty,
    /// unless `replaceExisting`; then the old directory is replaced (swapped
    /// atomically where the file system allows, else renamed aside) only
    /// after the new one is complete, and removed after the swap.
    ReplaceDirectory,
  };

  OutputFileSet() = default;
  OutputFileSet(const OutputFileSet &) = delete;
  OutputFileSet &operator=(const OutputFileSet &) = delete;
  ~OutputFileSet() { discard(); }

  /// Starts a set for `directory`. Fails early (nothing created) when the
  /// destination cannot take it: not a directory, or (ReplaceDirectory) not
  /// empty without `replaceExisting`, with the message "'DIR' exists and is
  /// not empty".
  Status begin(const std::string &directory, Mode mode, bool replaceExisting = false);

  /// Writes the staged file `name` (relative to the directory). A name given
  /// twice is an error.
  Status write(const std::string &name, std::initializer_list<std::string_view> parts);

  /// Moves every staged file into place (see the guarantee above).
  Status commit();

  /// Removes the staging directory and what is in it. Idempotent.
  void discard();

  /// The staging directory ("" before begin()).
  const std::string &getStagingDirectory() const { return staging; }

private:
  struct Entry {
    std::string name;
    int handle;
  };
  Status commitAddFiles();
  Status commitReplace();
  Status ensureStagedParents(const std::string &name);

  std::string directory, staging;
  Mode mode = Mode::AddFiles;
  bool replaceExisting = false, stagingIsDestination = false;
  int stagingHandle = -1;
  std::vector<Entry> files;                         // in the order written
  std::vector<std::pair<std::string, int>> subdirs; // staged subdirectories
};

} // namespace neo
} // namespace mlir

#endif // NEO_SUPPORT_ATOMICFILE_H
