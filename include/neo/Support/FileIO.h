//===- FileIO.h - Bounded reads and atomic writes without LLVM --*- C++ -*-===//
//
// NeoSupport's file operations, in plain C++17 and POSIX (no LLVM), shared by
// the compiler's libraries and tools and by the lean `neo-cuda-runner`. Every
// output file Neo writes goes through writeFileAtomically or AtomicFile, and
// every set of output files through OutputFileSet (AtomicFile.h): the one
// place that decides how an output is written.
//
// Output rule (docs/errors.md#output-files), by what `path` names:
//   - nothing, or a regular file: a new temporary file `path.tmp-XXXXXXXX` in
//     the same directory, renamed over `path` when complete;
//   - a symbolic link: the link is followed (to its final target, which need
//     not exist yet) and the target is written by the rule above; the link
//     stays a link;
//   - a character or block device, a FIFO or a socket (after following links),
//     or a path that is or leads through /proc/ (/dev/stdout, /dev/fd/N):
//     written directly (appending), never renamed over or removed
//     (`-o /dev/null` stays /dev/null, `-o /dev/stdout` writes to stdout);
//   - a directory: an error (EISDIR).
//
// Reads are bounded: readWholeFile stops with an error once a file grows past
// its limit, whether or not the file has a size (/dev/zero, a FIFO).
//
//===----------------------------------------------------------------------===//
#ifndef NEO_SUPPORT_FILEIO_H
#define NEO_SUPPORT_FILEIO_H

#include "neo/Support/Status.h"

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace mlir {
namespace neo {

/// No limit for readWholeFile.
constexpr uint64_t kNoReadLimit = UINT64_MAX;

/// Reads the whole file at `path` into `contents`, failing once more than
/// `maxBytes` bytes have been read (checked against the size of regular files
/// first, and while reading for files without one). On failure, an IO error
/// "`path`: cannot read the file: <reason>", or for the limit "`path`: the
/// file is larger than the limit of N bytes".
Status readWholeFile(const std::string &path, std::string &contents,
                     uint64_t maxBytes = kNoReadLimit);

/// How writeFileAtomically writes.
struct AtomicWriteOptions {
  /// fsync the temporary file before the rename (for files whose loss after a
  /// power failure matters, such as tuning records).
  bool sync = false;
};

/// Writes the concatenation of `parts` (any bytes) to `path` by the output
/// rule above: readers never see a partial file and a failure leaves nothing
/// behind (the temporary file is removed, also when the process is killed by
/// SIGINT, SIGTERM or SIGHUP once installTemporaryFileCleanup() has run). An
/// existing regular file's permission bits are kept. On failure, an IO error
/// starting with "`path`: ".
Status writeFileAtomically(const std::string &path, std::initializer_list<std::string_view> parts,
                           const AtomicWriteOptions &options = {});

/// Creates the directory `path` and any missing parents (mkdir -p). On
/// failure, an IO error "cannot create '`path`': <reason>".
Status createDirectories(const std::string &path);

/// Removes `path` and, if it is a directory, everything below it, without
/// following symbolic links. A missing `path` is success.
Status removeTree(const std::string &path);

/// Follows `path` while it names a symbolic link (at most 40 links), so that
/// the result names the file a write through `path` lands in. A relative link
/// target is taken relative to the link's directory. Paths that are not links
/// (or do not exist) are returned as they are. `throughProc`, if given, is set
/// when `path` or a link on the way lies under /proc/ (/dev/stdout ->
/// /proc/self/fd/1: links to open descriptors, which name no directory
/// entry that could be replaced).
Status resolveSymlinks(const std::string &path, std::string &resolved, bool *throughProc = nullptr);

/// Checks that `name`, taken from IR or another input, is usable as one file
/// name inside an output directory: not empty, not "." or "..", and without
/// '/' or NUL. `what` names it in the message (e.g. "output #0 of 'f'"): an
/// Invalid error "`what` is named '`name`', which is not a valid file name
/// (it must be non-empty, not '.' or '..', and contain no '/')".
Status checkFileName(const std::string &name, const std::string &what);

/// Checks each of `names` with checkFileName and that no two are equal
/// (their files would overwrite each other). Each is called `what` #i
/// `owner`, e.g. "output #1 of 'f'": "output #1 of 'f' is named 'y', like
/// output #0: their files would overwrite each other".
Status checkFileNames(const std::vector<std::string> &names, const std::string &what,
                      const std::string &owner = "");

} // namespace neo
} // namespace mlir

#endif // NEO_SUPPORT_FILEIO_H
