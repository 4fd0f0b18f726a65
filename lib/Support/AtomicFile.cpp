//===- AtomicFile.cpp - One output file or a set, all or nothing ----------===//
#include "neo/Support/AtomicFile.h"
#include "neo/Support/TemporaryFiles.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

using namespace mlir;
using namespace mlir::neo;

static std::string errnoMessage(int error) { return std::strerror(error); }

/// A suffix ".tmp-XXXXXXXX" (or another `tag`) that differs between calls,
/// threads and processes.
static std::string uniqueSuffix(const char *tag) {
  static std::atomic<unsigned> counter{0};
  uint64_t seed =
      static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  uint64_t x = seed ^ (static_cast<uint64_t>(::getpid()) << 32) ^
               (static_cast<uint64_t>(counter++) * 0x9e3779b97f4a7c15ull);
  char suffix[48];
  std::snprintf(suffix, sizeof(suffix), "%s%08x", tag,
                static_cast<unsigned>((x ^ (x >> 29)) & 0xffffffffu));
  return suffix;
}

/// Creates a new file `base` + ".tmp-XXXXXXXX" with O_EXCL, so that
/// concurrent writers never share one; returns its descriptor (or -1 with
/// errno set).
static int createTemporaryFile(const std::string &base, std::string &tempPath) {
  for (unsigned attempt = 0; attempt < 100; ++attempt) {
    tempPath = base + uniqueSuffix(".tmp-");
    // 0666 minus the umask, as for any new file (mkstemp would give 0600).
    int fd = ::open(tempPath.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST)
      return fd;
  }
  errno = EEXIST;
  return -1;
}

/// Creates a new directory `base` + `tag` + "XXXXXXXX"; false with errno set.
static bool createUniqueDirectory(const std::string &base, const char *tag, std::string &path) {
  for (unsigned attempt = 0; attempt < 100; ++attempt) {
    path = base + uniqueSuffix(tag);
    if (::mkdir(path.c_str(), 0777) == 0)
      return true;
    if (errno != EEXIST)
      return false;
  }
  errno = EEXIST;
  return false;
}

static bool isSpecial(mode_t mode) {
  return S_ISCHR(mode) || S_ISBLK(mode) || S_ISFIFO(mode) || S_ISSOCK(mode);
}

static Status writeAll(int fd, std::initializer_list<std::string_view> parts, int &error) {
  for (std::string_view part : parts) {
    const char *p = part.data();
    size_t left = part.size();
    while (left > 0) {
      ssize_t n = ::write(fd, p, left);
      if (n < 0) {
        if (errno == EINTR)
          continue;
        error = errno;
        return Status::error(Status::Code::IO, errnoMessage(error));
      }
      p += n;
      left -= static_cast<size_t>(n);
    }
  }
  return Status::success();
}

//===----------------------------------------------------------------------===//
// AtomicFile
//===----------------------------------------------------------------------===//

Status AtomicFile::fail(const std::string &what, int error) {
  lastError = error;
  return Status::error(Status::Code::IO, path + ": " + what + errnoMessage(error));
}

Status AtomicFile::open(const std::string &destination, const Options &options) {
  discard();
  path = destination;
  sync = options.sync;
  direct = false;
  writeError = 0;
  lastError = 0;
  bool throughProc = false;
  if (Status s = resolveSymlinks(path, target, &throughProc); !s.ok()) {
    lastError = ELOOP;
    return s;
  }
  struct stat info;
  bool exists = ::lstat(target.c_str(), &info) == 0;
  if (!exists && errno != ENOENT)
    return fail("cannot write: ", errno);
  if (exists && S_ISDIR(info.st_mode))
    return fail("cannot write: ", EISDIR);
  struct stat followed;
  if ((exists && isSpecial(info.st_mode)) || throughProc ||
      (::stat(path.c_str(), &followed) == 0 && isSpecial(followed.st_mode))) {
    // Devices, FIFOs, sockets and links to open descriptors are written in
    // place: renaming over them would replace /dev/null with a regular file.
    direct = true;
    isOpen = true;
    if (!options.openSpecialFiles)
      return Status::success();
    fd_ = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd_ < 0) {
      isOpen = false;
      return fail("cannot open for writing: ", errno);
    }
    return Status::success();
  }
  fd_ = createTemporaryFile(target, tempPath);
  if (fd_ < 0) {
    tempPath.clear();
    return fail("cannot create a temporary file: ", errno);
  }
  cleanupHandle = registerTemporary(tempPath);
  isOpen = true;
  // Replacing a file keeps its permission bits.
  if (exists && S_ISREG(info.st_mode))
    (void)::fchmod(fd_, info.st_mode & 07777);
  return Status::success();
}

Status AtomicFile::write(std::initializer_list<std::string_view> parts) {
  if (!isOpen || fd_ < 0)
    return Status::error(Status::Code::Usage, path + ": the file is not open");
  if (writeError)
    return fail("cannot write: ", writeError);
  if (Status s = writeAll(fd_, parts, writeError); !s.ok())
    return fail("cannot write: ", writeError);
  return Status::success();
}

Status AtomicFile::commit() {
  if (!isOpen)
    return Status::error(Status::Code::Usage, path + ": the file is not open");
  if (writeError) {
    int error = writeError;
    discard();
    return fail("cannot write: ", error);
  }
  int error = 0;
  if (fd_ >= 0) {
    if (sync && !direct && ::fsync(fd_) != 0)
      error = errno;
    if (::close(fd_) != 0 && !error)
      error = errno;
    fd_ = -1;
  }
  if (error) {
    discard();
    return fail("cannot write: ", error);
  }
  if (direct) {
    isOpen = false;
    return Status::success();
  }
  if (::rename(tempPath.c_str(), target.c_str()) != 0) {
    error = errno;
    std::string temp = tempPath;
    discard();
    return fail("cannot rename " + temp + " to it: ", error);
  }
  unregisterTemporary(cleanupHandle);
  cleanupHandle = -1;
  tempPath.clear();
  isOpen = false;
  return Status::success();
}

void AtomicFile::closeDescriptor() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

void AtomicFile::discard() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  if (!tempPath.empty()) {
    ::unlink(tempPath.c_str());
    tempPath.clear();
  }
  unregisterTemporary(cleanupHandle);
  cleanupHandle = -1;
  isOpen = false;
}

//===----------------------------------------------------------------------===//
// OutputFileSet
//===----------------------------------------------------------------------===//

namespace {
/// Blocks SIGINT, SIGTERM and SIGHUP in this thread while alive, so that
/// commit() is not interrupted half-way; a pending signal is delivered when
/// it ends (and then finds nothing left to remove).
class BlockTerminationSignals {
public:
  BlockTerminationSignals() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &set, &saved);
  }
  ~BlockTerminationSignals() { pthread_sigmask(SIG_SETMASK, &saved, nullptr); }

private:
  sigset_t saved;
};

/// Whether `path` is a directory with no entries.
bool isEmptyDirectory(const std::string &path) {
  DIR *dir = ::opendir(path.c_str());
  if (!dir)
    return false;
  bool empty = true;
  while (struct dirent *entry = ::readdir(dir))
    if (std::strcmp(entry->d_name, ".") != 0 && std::strcmp(entry->d_name, "..") != 0) {
      empty = false;
      break;
    }
  ::closedir(dir);
  return empty;
}

/// `path` without trailing slashes (but "/" stays "/").
std::string stripTrailingSlashes(std::string path) {
  while (path.size() > 1 && path.back() == '/')
    path.pop_back();
  return path;
}
} // namespace

Status OutputFileSet::begin(const std::string &dir, Mode setMode, bool replace) {
  discard();
  mode = setMode;
  replaceExisting = replace;
  auto fail = [&](const std::string &message) { return Status::error(Status::Code::IO, message); };
  if (dir.empty())
    return fail("cannot create '': " + errnoMessage(ENOENT));
  if (Status s = resolveSymlinks(stripTrailingSlashes(dir), directory); !s.ok())
    return s;
  struct stat info;
  if (::lstat(directory.c_str(), &info) == 0) {
    if (!S_ISDIR(info.st_mode))
      return fail("'" + dir + "' exists and is not a directory");
    if (mode == Mode::AddFiles) {
      // Inside the destination: the same file system, whatever is mounted.
      if (!createUniqueDirectory(directory + "/", ".neo-staging-", staging))
        return fail("cannot create a staging directory in '" + dir + "': " + errnoMessage(errno));
      stagingIsDestination = false;
      stagingHandle = registerTemporary(staging, /*isDirectory=*/true);
      return Status::success();
    }
    if (!replaceExisting && !isEmptyDirectory(directory))
      return fail("'" + dir + "' exists and is not empty");
  } else if (errno != ENOENT) {
    return fail("cannot create '" + dir + "': " + errnoMessage(errno));
  } else {
    size_t slash = directory.rfind('/');
    if (slash != std::string::npos && slash > 0)
      if (Status s = createDirectories(directory.substr(0, slash)); !s.ok())
        return s;
  }
  // Next to the destination, renamed to it when complete.
  if (!createUniqueDirectory(directory, ".tmp-", staging))
    return fail("cannot create '" + dir + "': " + errnoMessage(errno));
  stagingIsDestination = true;
  stagingHandle = registerTemporary(staging, /*isDirectory=*/true);
  return Status::success();
}

Status OutputFileSet::ensureStagedParents(const std::string &name) {
  for (size_t slash = name.find('/'); slash != std::string::npos;
       slash = name.find('/', slash + 1)) {
    std::string sub = name.substr(0, slash);
    bool known = false;
    for (const auto &[existing, handle] : subdirs)
      known |= existing == sub;
    if (known)
      continue;
    std::string full = staging + "/" + sub;
    if (::mkdir(full.c_str(), 0777) != 0)
      return Status::error(Status::Code::IO,
                           "cannot create '" + full + "': " + errnoMessage(errno));
    subdirs.emplace_back(sub, registerTemporary(full, /*isDirectory=*/true));
  }
  return Status::success();
}

Status OutputFileSet::write(const std::string &name,
                            std::initializer_list<std::string_view> parts) {
  if (staging.empty())
    return Status::error(Status::Code::Usage, "OutputFileSet::write before begin()");
  std::string dest = directory + "/" + name;
  if (mode == Mode::AddFiles) {
    if (Status s = checkFileName(name, "the output file '" + dest + "'"); !s.ok())
      return s;
  } else {
    for (size_t start = 0; start <= name.size();) {
      size_t end = std::min(name.find('/', start), name.size());
      if (Status s = checkFileName(name.substr(start, end - start),
                                   "a component of the output file '" + dest + "'");
          !s.ok())
        return s;
      start = end + 1;
    }
  }
  for (const Entry &e : files)
    if (e.name == name)
      return Status::error(Status::Code::Invalid,
                           "the output file '" + dest + "' is written twice");
  if (Status s = ensureStagedParents(name); !s.ok())
    return s;
  std::string staged = staging + "/" + name;
  int fd = ::open(staged.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0)
    return Status::error(Status::Code::IO,
                         dest + ": cannot create '" + staged + "': " + errnoMessage(errno));
  files.push_back({name, registerTemporary(staged)});
  int error = 0;
  (void)writeAll(fd, parts, error);
  if (::close(fd) != 0 && !error)
    error = errno;
  if (error)
    return Status::error(Status::Code::IO, dest + ": cannot write: " + errnoMessage(error));
  return Status::success();
}

Status OutputFileSet::commit() {
  if (staging.empty())
    return Status::error(Status::Code::Usage, "OutputFileSet::commit before begin()");
  BlockTerminationSignals block;
  Status s = mode == Mode::AddFiles && !stagingIsDestination ? commitAddFiles() : commitReplace();
  discard();
  return s;
}

Status OutputFileSet::commitAddFiles() {
  auto fail = [](const std::string &message) { return Status::error(Status::Code::IO, message); };
  // First every check, so that a destination that cannot be replaced fails
  // before anything changed.
  std::vector<bool> existed(files.size(), false);
  for (size_t i = 0; i < files.size(); ++i) {
    std::string dest = directory + "/" + files[i].name;
    struct stat info;
    if (::lstat(dest.c_str(), &info) == 0) {
      if (!S_ISREG(info.st_mode))
        return fail("'" + dest + "' exists and is not a regular file; nothing was written");
      existed[i] = true;
    } else if (errno != ENOENT) {
      return fail(dest + ": " + errnoMessage(errno) + "; nothing was written");
    }
  }
  // Keep the old files (hard links in the staging directory), then rename
  // the new ones over them; on a failure put the old ones back.
  std::string backups = staging + "/.old";
  if (::mkdir(backups.c_str(), 0700) != 0)
    return fail("cannot create '" + backups + "': " + errnoMessage(errno));
  size_t placed = 0;
  std::vector<bool> backedUp(files.size(), false), movedAside(files.size(), false);
  Status result = Status::success();
  for (; placed < files.size(); ++placed) {
    const std::string &name = files[placed].name;
    std::string dest = directory + "/" + name, staged = staging + "/" + name;
    std::string backup = backups + "/" + name;
    if (existed[placed]) {
      if (::link(dest.c_str(), backup.c_str()) == 0) {
        backedUp[placed] = true;
      } else if (::rename(dest.c_str(), backup.c_str()) == 0) {
        backedUp[placed] = movedAside[placed] = true;
      } else {
        result = fail("cannot keep the old '" + dest + "': " + errnoMessage(errno) +
                      "; nothing was changed");
        break;
      }
    }
    if (::rename(staged.c_str(), dest.c_str()) != 0) {
      result = fail("cannot rename '" + staged + "' to '" + dest + "': " + errnoMessage(errno) +
                    "; nothing was changed");
      if (movedAside[placed])
        (void)::rename(backup.c_str(), dest.c_str());
      break;
    }
  }
  if (!result.ok())
    for (size_t j = 0; j < placed; ++j) {
      std::string dest = directory + "/" + files[j].name;
      if (backedUp[j])
        (void)::rename((backups + "/" + files[j].name).c_str(), dest.c_str());
      else
        (void)::unlink(dest.c_str());
    }
  return result;
}

Status OutputFileSet::commitReplace() {
  auto fail = [](const std::string &message) { return Status::error(Status::Code::IO, message); };
  struct stat info;
  bool exists = ::lstat(directory.c_str(), &info) == 0;
  if (exists && !S_ISDIR(info.st_mode))
    return fail("'" + directory + "' exists and is not a directory");
  if (!exists || isEmptyDirectory(directory)) {
    if (::rename(staging.c_str(), directory.c_str()) != 0)
      return fail("cannot create '" + directory + "': " + errnoMessage(errno));
    staging.clear(); // It is the destination now.
    return Status::success();
  }
  if (mode == Mode::AddFiles || !replaceExisting)
    return fail("'" + directory + "' exists and is not empty");
#ifdef SYS_renameat2
  if (::syscall(SYS_renameat2, AT_FDCWD, staging.c_str(), AT_FDCWD, directory.c_str(),
                RENAME_EXCHANGE) == 0)
    return removeTree(staging); // The old tree, swapped out.
  if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP)
    return fail("cannot replace '" + directory + "': " + errnoMessage(errno));
#endif
  // No atomic exchange here: rename the old directory aside (onto a new empty
  // one), the new one in, and the old one back if that fails.
  std::string aside;
  if (!createUniqueDirectory(directory, ".old-", aside))
    return fail("cannot replace '" + directory + "': " + errnoMessage(errno));
  if (::rename(directory.c_str(), aside.c_str()) != 0) {
    int error = errno;
    ::rmdir(aside.c_str());
    return fail("cannot replace '" + directory + "': " + errnoMessage(error));
  }
  if (::rename(staging.c_str(), directory.c_str()) != 0) {
    int error = errno;
    (void)::rename(aside.c_str(), directory.c_str());
    return fail("cannot replace '" + directory + "': " + errnoMessage(error));
  }
  staging.clear();
  return removeTree(aside);
}

void OutputFileSet::discard() {
  if (!staging.empty())
    (void)removeTree(staging);
  for (const Entry &e : files)
    unregisterTemporary(e.handle);
  for (const auto &[name, handle] : subdirs)
    unregisterTemporary(handle);
  unregisterTemporary(stagingHandle);
  files.clear();
  subdirs.clear();
  staging.clear();
  stagingHandle = -1;
}
