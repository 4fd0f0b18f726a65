//===- FileIO.cpp - Whole-file reads and atomic writes without LLVM -------===//
#include "neo/Runtime/FileIO.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace mlir;
using namespace mlir::neo;

static std::string errnoMessage(int error) { return std::strerror(error); }

Status mlir::neo::readWholeFile(const std::string &path, std::string &contents) {
  auto fail = [&](int error) {
    return Status::error(Status::Code::IO, path + ": cannot read the file: " + errnoMessage(error));
  };
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return fail(errno);
  struct stat info;
  if (::fstat(fd, &info) != 0) {
    int error = errno;
    ::close(fd);
    return fail(error);
  }
  if (S_ISDIR(info.st_mode)) {
    ::close(fd);
    return fail(EISDIR);
  }
  contents.clear();
  if (S_ISREG(info.st_mode) && info.st_size > 0)
    contents.reserve(static_cast<size_t>(info.st_size));
  // Read to the end rather than trusting st_size (pipes, files that grow).
  char chunk[1 << 16];
  while (true) {
    ssize_t n = ::read(fd, chunk, sizeof(chunk));
    if (n < 0) {
      if (errno == EINTR)
        continue;
      int error = errno;
      ::close(fd);
      return fail(error);
    }
    if (n == 0)
      break;
    contents.append(chunk, static_cast<size_t>(n));
  }
  ::close(fd);
  return Status::success();
}

/// Creates a new file next to `path` with O_EXCL, so that concurrent writers
/// never share one; returns its descriptor (or -1 with errno set).
static int createTemporaryFile(const std::string &path, std::string &tempPath) {
  static std::atomic<unsigned> counter{0};
  uint64_t seed =
      static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  for (unsigned attempt = 0; attempt < 100; ++attempt) {
    uint64_t x = seed ^ (static_cast<uint64_t>(::getpid()) << 32) ^
                 (static_cast<uint64_t>(counter++) * 0x9e3779b97f4a7c15ull);
    char suffix[32];
    std::snprintf(suffix, sizeof(suffix), ".tmp-%08x",
                  static_cast<unsigned>((x ^ (x >> 29)) & 0xffffffffu));
    tempPath = path + suffix;
    // 0666 minus the umask, as for any new file (mkstemp would give 0600).
    int fd = ::open(tempPath.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST)
      return fd;
  }
  errno = EEXIST;
  return -1;
}

Status mlir::neo::writeFileAtomically(const std::string &path,
                                      std::initializer_list<std::string_view> parts) {
  auto fail = [&](const std::string &what, int error) {
    return Status::error(Status::Code::IO, path + ": " + what + errnoMessage(error));
  };
  std::string tempPath;
  int fd = createTemporaryFile(path, tempPath);
  if (fd < 0)
    return fail("cannot create a temporary file: ", errno);
  int writeError = 0;
  for (std::string_view part : parts) {
    const char *p = part.data();
    size_t left = part.size();
    while (left > 0 && !writeError) {
      ssize_t n = ::write(fd, p, left);
      if (n < 0) {
        if (errno != EINTR)
          writeError = errno;
        continue;
      }
      p += n;
      left -= static_cast<size_t>(n);
    }
  }
  if (::close(fd) != 0 && !writeError)
    writeError = errno;
  if (writeError) {
    ::unlink(tempPath.c_str());
    return fail("cannot write: ", writeError);
  }
  if (::rename(tempPath.c_str(), path.c_str()) != 0) {
    int error = errno;
    ::unlink(tempPath.c_str());
    return fail("cannot rename " + tempPath + " to it: ", error);
  }
  return Status::success();
}

Status mlir::neo::createDirectories(const std::string &path) {
  auto fail = [&](int error) {
    return Status::error(Status::Code::IO, "cannot create '" + path + "': " + errnoMessage(error));
  };
  if (path.empty())
    return fail(ENOENT);
  // Each prefix ending before a '/', then the whole path.
  for (size_t end = path.find('/', 1);; end = path.find('/', end + 1)) {
    std::string prefix = path.substr(0, end);
    if (::mkdir(prefix.c_str(), 0777) != 0 && errno != EEXIST)
      return fail(errno);
    if (end == std::string::npos)
      break;
  }
  struct stat info;
  if (::stat(path.c_str(), &info) != 0)
    return fail(errno);
  if (!S_ISDIR(info.st_mode))
    return fail(ENOTDIR);
  return Status::success();
}
