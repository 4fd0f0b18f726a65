//===- FileIO.cpp - Bounded reads and atomic writes without LLVM ----------===//
#include "neo/Support/FileIO.h"
#include "neo/Support/AtomicFile.h"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace mlir;
using namespace mlir::neo;

static std::string strerrorText(int error) { return std::strerror(error); }

Status mlir::neo::readWholeFile(const std::string &path, std::string &contents, uint64_t maxBytes) {
  auto fail = [&](int error) {
    return Status::error(Status::Code::IO, path + ": cannot read the file: " + strerrorText(error));
  };
  auto tooLarge = [&]() {
    return Status::error(Status::Code::IO, path + ": the file is larger than the limit of " +
                                               std::to_string(maxBytes) + " bytes");
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
  if (S_ISREG(info.st_mode) && info.st_size > 0) {
    if (static_cast<uint64_t>(info.st_size) > maxBytes) {
      ::close(fd);
      return tooLarge();
    }
    contents.reserve(static_cast<size_t>(info.st_size));
  }
  // Read to the end rather than trusting st_size (pipes, devices, files that
  // grow), counting against the limit as the bytes come.
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
    if (static_cast<uint64_t>(n) > maxBytes - contents.size()) {
      ::close(fd);
      contents.clear();
      contents.shrink_to_fit();
      return tooLarge();
    }
    contents.append(chunk, static_cast<size_t>(n));
  }
  ::close(fd);
  return Status::success();
}

Status mlir::neo::writeFileAtomically(const std::string &path,
                                      std::initializer_list<std::string_view> parts,
                                      const AtomicWriteOptions &options) {
  AtomicFile file;
  AtomicFile::Options fileOptions;
  fileOptions.sync = options.sync;
  if (Status s = file.open(path, fileOptions); !s.ok())
    return s;
  if (Status s = file.write(parts); !s.ok())
    return s;
  return file.commit();
}

Status mlir::neo::createDirectories(const std::string &path) {
  auto fail = [&](int error) {
    return Status::error(Status::Code::IO, "cannot create '" + path + "': " + strerrorText(error));
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

static int removeEntry(const char *path, const struct stat *, int, struct FTW *) {
  return ::remove(path) != 0 && errno != ENOENT ? -1 : 0;
}

Status mlir::neo::removeTree(const std::string &path) {
  struct stat info;
  if (::lstat(path.c_str(), &info) != 0)
    return errno == ENOENT ? Status::success()
                           : Status::error(Status::Code::IO,
                                           "cannot remove '" + path + "': " + strerrorText(errno));
  if (::nftw(path.c_str(), removeEntry, 16, FTW_DEPTH | FTW_PHYS) != 0)
    return Status::error(Status::Code::IO, "cannot remove '" + path + "': " + strerrorText(errno));
  return Status::success();
}

Status mlir::neo::resolveSymlinks(const std::string &path, std::string &resolved,
                                  bool *throughProc) {
  resolved = path;
  if (throughProc)
    *throughProc = false;
  for (int hops = 0;; ++hops) {
    if (throughProc && resolved.compare(0, 6, "/proc/") == 0)
      *throughProc = true;
    struct stat info;
    if (::lstat(resolved.c_str(), &info) != 0 || !S_ISLNK(info.st_mode))
      return Status::success();
    if (hops == 40)
      return Status::error(Status::Code::IO, path + ": " + strerrorText(ELOOP));
    std::string link(static_cast<size_t>(info.st_size > 0 ? info.st_size : 255) + 1, '\0');
    ssize_t n;
    while ((n = ::readlink(resolved.c_str(), link.data(), link.size())) >= 0 &&
           static_cast<size_t>(n) == link.size())
      link.resize(link.size() * 2);
    if (n < 0)
      return Status::error(Status::Code::IO, path + ": cannot read the symbolic link " + resolved +
                                                 ": " + strerrorText(errno));
    link.resize(static_cast<size_t>(n));
    if (link.empty())
      return Status::error(Status::Code::IO,
                           path + ": the symbolic link " + resolved + " is empty");
    if (link.front() == '/') {
      resolved = link;
    } else {
      size_t slash = resolved.rfind('/');
      resolved = slash == std::string::npos ? link : resolved.substr(0, slash + 1) + link;
    }
  }
}

Status mlir::neo::checkFileName(const std::string &name, const std::string &what) {
  if (name.empty() || name == "." || name == ".." ||
      name.find_first_of(std::string("/\0", 2)) != std::string::npos)
    return Status::error(Status::Code::Invalid,
                         what + " is named '" + name +
                             "', which is not a valid file name (it must be non-empty, not '.' "
                             "or '..', and contain no '/')");
  return Status::success();
}

Status mlir::neo::checkFileNames(const std::vector<std::string> &names, const std::string &what,
                                 const std::string &owner) {
  auto name = [&](size_t i) {
    return what + " #" + std::to_string(i) + (owner.empty() ? "" : " " + owner);
  };
  for (size_t i = 0; i < names.size(); ++i) {
    if (Status s = checkFileName(names[i], name(i)); !s.ok())
      return s;
    for (size_t j = 0; j < i; ++j)
      if (names[j] == names[i])
        return Status::error(Status::Code::Invalid,
                             name(i) + " is named '" + names[i] + "', like " + what + " #" +
                                 std::to_string(j) + ": their files would overwrite each other");
  }
  return Status::success();
}
