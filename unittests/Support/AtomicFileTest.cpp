//===- AtomicFileTest.cpp - NeoSupport: the one output writer -------------===//
//
// Regressions of issue 18: outputs that are devices, FIFOs or symbolic links;
// sets of outputs that must appear all or nothing; directories that must not
// be deleted; temporaries that must not survive a SIGTERM.
//
//===----------------------------------------------------------------------===//
#include "neo/Support/AtomicFile.h"
#include "neo/Support/FileIO.h"
#include "neo/Support/TemporaryFiles.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <dirent.h>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace mlir::neo;

namespace {

std::vector<std::string> listDir(const std::string &path) {
  std::vector<std::string> names;
  if (DIR *d = ::opendir(path.c_str())) {
    while (struct dirent *e = ::readdir(d))
      if (std::string(e->d_name) != "." && std::string(e->d_name) != "..")
        names.push_back(e->d_name);
    ::closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string readText(const std::string &path) {
  std::string text;
  if (!readWholeFile(path, text).ok())
    return "<unreadable>";
  return text;
}

class AtomicFileTest : public ::testing::Test {
protected:
  void SetUp() override {
    char pattern[] = "/tmp/neo-atomic-test-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir = pattern;
  }
  void TearDown() override { EXPECT_TRUE(removeTree(dir).ok()); }
  void put(const std::string &name, const std::string &text) {
    size_t slash = name.rfind('/');
    if (slash != std::string::npos) {
      ASSERT_TRUE(createDirectories(dir + "/" + name.substr(0, slash)).ok());
    }
    ASSERT_TRUE(writeFileAtomically(dir + "/" + name, {text}).ok());
  }
  std::string dir;
};

TEST_F(AtomicFileTest, RegularFilesKeepTheirMode) {
  put("f", "old");
  ASSERT_EQ(::chmod((dir + "/f").c_str(), 0640), 0);
  AtomicFile file;
  ASSERT_TRUE(file.open(dir + "/f").ok());
  EXPECT_FALSE(file.isDirect());
  ASSERT_TRUE(file.write({"ne", "w"}).ok());
  EXPECT_EQ(readText(dir + "/f"), "old"); // not visible before commit
  ASSERT_TRUE(file.commit().ok());
  EXPECT_EQ(readText(dir + "/f"), "new");
  struct stat info;
  ASSERT_EQ(::stat((dir + "/f").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 07777, 0640u);
  EXPECT_EQ(listDir(dir), std::vector<std::string>{"f"});
}

TEST_F(AtomicFileTest, DiscardLeavesNothing) {
  put("f", "old");
  {
    AtomicFile file;
    ASSERT_TRUE(file.open(dir + "/f").ok());
    ASSERT_TRUE(file.write({"partial"}).ok());
  } // destroyed without commit
  EXPECT_EQ(readText(dir + "/f"), "old");
  EXPECT_EQ(listDir(dir), std::vector<std::string>{"f"});
  Status s = writeFileAtomically(dir, {"x"});
  EXPECT_EQ(s.message(), dir + ": cannot write: Is a directory");
}

// A symbolic link is followed: its target is replaced atomically and the link
// stays a link (also a dangling one, whose target is created).
TEST_F(AtomicFileTest, SymlinksAreFollowed) {
  put("real", "old");
  ASSERT_EQ(::symlink("real", (dir + "/link").c_str()), 0);
  ASSERT_TRUE(writeFileAtomically(dir + "/link", {"new"}).ok());
  struct stat info;
  ASSERT_EQ(::lstat((dir + "/link").c_str(), &info), 0);
  EXPECT_TRUE(S_ISLNK(info.st_mode));
  EXPECT_EQ(readText(dir + "/real"), "new");
  ASSERT_EQ(::symlink("created", (dir + "/dangling").c_str()), 0);
  ASSERT_TRUE(writeFileAtomically(dir + "/dangling", {"c"}).ok());
  ASSERT_EQ(::lstat((dir + "/dangling").c_str(), &info), 0);
  EXPECT_TRUE(S_ISLNK(info.st_mode));
  EXPECT_EQ(readText(dir + "/created"), "c");
  EXPECT_EQ(listDir(dir), (std::vector<std::string>{"created", "dangling", "link", "real"}));
}

// A FIFO is written directly, never renamed over: the reader gets the data
// and the FIFO is still a FIFO.
TEST_F(AtomicFileTest, FifosAreWrittenDirectly) {
  std::string fifo = dir + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string got;
  std::thread reader([&] { (void)readWholeFile(fifo, got); });
  Status s = writeFileAtomically(fifo, {"through ", "the fifo"});
  reader.join();
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(got, "through the fifo");
  struct stat info;
  ASSERT_EQ(::lstat(fifo.c_str(), &info), 0);
  EXPECT_TRUE(S_ISFIFO(info.st_mode));
  EXPECT_EQ(listDir(dir), std::vector<std::string>{"fifo"});
}

// A link to an open descriptor (what /dev/stdout is) is written through, not
// replaced: /proc/self/fd/N names no directory entry a rename could replace.
TEST_F(AtomicFileTest, DescriptorLinksAreWrittenDirectly) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  std::string path = "/proc/self/fd/" + std::to_string(fds[1]);
  Status s = writeFileAtomically(path, {"to the pipe"});
  ::close(fds[1]);
  ASSERT_TRUE(s.ok()) << s.message();
  char buffer[64] = {0};
  ssize_t n = ::read(fds[0], buffer, sizeof(buffer) - 1);
  ::close(fds[0]);
  EXPECT_EQ(std::string(buffer, n > 0 ? static_cast<size_t>(n) : 0), "to the pipe");
  // A regular file reached through /proc is appended to in place.
  put("f", "old ");
  int fd = ::open((dir + "/f").c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(writeFileAtomically("/proc/self/fd/" + std::to_string(fd), {"new"}).ok());
  ::close(fd);
  EXPECT_EQ(readText(dir + "/f"), "old new");
  EXPECT_EQ(listDir(dir), std::vector<std::string>{"f"});
}

// Run as root, renaming over /dev/null replaced it with a regular file.
TEST_F(AtomicFileTest, DevNullStaysACharacterDevice) {
  struct stat info;
  ASSERT_EQ(::lstat("/dev/null", &info), 0);
  ASSERT_TRUE(S_ISCHR(info.st_mode))
      << "/dev/null is not a character device before the test: something else replaced it "
         "(as root: mknod -m 666 /dev/null.new c 1 3 && mv /dev/null.new /dev/null)";
  ASSERT_TRUE(writeFileAtomically("/dev/null", {"discarded"}).ok());
  ASSERT_EQ(::lstat("/dev/null", &info), 0);
  EXPECT_TRUE(S_ISCHR(info.st_mode));
  AtomicFile file;
  AtomicFile::Options options;
  options.openSpecialFiles = false;
  ASSERT_TRUE(file.open("/dev/null", options).ok());
  EXPECT_TRUE(file.isDirect());
  EXPECT_EQ(file.fd(), -1);
  EXPECT_TRUE(file.getTemporaryPath().empty());
}

// Issue 18: when the 3rd of 4 outputs fails, nothing in the destination
// changes (before, the first two were new and the 4th stale).
TEST_F(AtomicFileTest, FileSetIsAllOrNothingOnWriteErrors) {
  ASSERT_TRUE(createDirectories(dir + "/out").ok());
  for (const char *n : {"a", "b", "c", "d", "other"})
    put(std::string("out/") + n, "old");
  {
    OutputFileSet set;
    ASSERT_TRUE(set.begin(dir + "/out", OutputFileSet::Mode::AddFiles).ok());
    ASSERT_TRUE(set.write("a", {"new"}).ok());
    ASSERT_TRUE(set.write("b", {"new"}).ok());
    Status s = set.write("../c", {"new"});
    EXPECT_EQ(s.code(), Status::Code::Invalid);
    EXPECT_TRUE(set.write("a", {"again"}).message().find("is written twice") != std::string::npos);
  } // abandoned
  for (const char *n : {"a", "b", "c", "d", "other"})
    EXPECT_EQ(readText(dir + "/out/" + n), "old") << n;
  EXPECT_EQ(listDir(dir + "/out"), (std::vector<std::string>{"a", "b", "c", "d", "other"}));
  EXPECT_EQ(listDir(dir), std::vector<std::string>{"out"});
}

TEST_F(AtomicFileTest, FileSetIsAllOrNothingOnCommitErrors) {
  ASSERT_TRUE(createDirectories(dir + "/out/c").ok()); // a directory in the way
  put("out/a", "old");
  OutputFileSet set;
  ASSERT_TRUE(set.begin(dir + "/out", OutputFileSet::Mode::AddFiles).ok());
  for (const char *n : {"a", "b", "c", "d"})
    ASSERT_TRUE(set.write(n, {"new"}).ok());
  Status s = set.commit();
  EXPECT_EQ(s.message(),
            "'" + dir + "/out/c' exists and is not a regular file; nothing was written");
  EXPECT_EQ(readText(dir + "/out/a"), "old");
  EXPECT_EQ(listDir(dir + "/out"), (std::vector<std::string>{"a", "c"}));
}

TEST_F(AtomicFileTest, FileSetCommits) {
  put("out/a", "old");
  OutputFileSet set;
  ASSERT_TRUE(set.begin(dir + "/out", OutputFileSet::Mode::AddFiles).ok());
  ASSERT_TRUE(set.write("a", {"new a"}).ok());
  ASSERT_TRUE(set.write("b", {"new b"}).ok());
  ASSERT_TRUE(set.commit().ok());
  EXPECT_EQ(readText(dir + "/out/a"), "new a");
  EXPECT_EQ(readText(dir + "/out/b"), "new b");
  EXPECT_EQ(listDir(dir + "/out"), (std::vector<std::string>{"a", "b"}));
  // A directory that does not exist yet appears whole.
  OutputFileSet fresh;
  ASSERT_TRUE(fresh.begin(dir + "/new/deep", OutputFileSet::Mode::AddFiles).ok());
  ASSERT_TRUE(fresh.write("x", {"x"}).ok());
  EXPECT_EQ(listDir(dir + "/new").size(), 1u); // only the staging directory
  ASSERT_TRUE(fresh.commit().ok());
  EXPECT_EQ(listDir(dir + "/new"), std::vector<std::string>{"deep"});
  EXPECT_EQ(readText(dir + "/new/deep/x"), "x");
}

// Issue 18: --emit-bundle deleted an existing DIR (and DIR.old) without
// asking. A non-empty directory is replaced only when asked to, after the new
// tree is complete; DIR.old is never touched.
TEST_F(AtomicFileTest, ReplacesDirectoriesOnlyWhenAsked) {
  put("b/mine", "precious");
  put("b.old/also", "precious");
  OutputFileSet set;
  Status s = set.begin(dir + "/b", OutputFileSet::Mode::ReplaceDirectory);
  EXPECT_EQ(s.message(), "'" + dir + "/b' exists and is not empty");
  EXPECT_EQ(readText(dir + "/b/mine"), "precious");

  ASSERT_TRUE(set.begin(dir + "/b", OutputFileSet::Mode::ReplaceDirectory, true).ok());
  ASSERT_TRUE(set.write("manifest.json", {"{}"}).ok());
  ASSERT_TRUE(set.write("inputs/x.npy", {"x"}).ok());
  EXPECT_FALSE(set.write("inputs/../y", {"y"}).ok());
  EXPECT_EQ(readText(dir + "/b/mine"), "precious"); // not before commit
  ASSERT_TRUE(set.commit().ok());
  EXPECT_EQ(listDir(dir + "/b"), (std::vector<std::string>{"inputs", "manifest.json"}));
  EXPECT_EQ(readText(dir + "/b/inputs/x.npy"), "x");
  EXPECT_EQ(readText(dir + "/b.old/also"), "precious");
  EXPECT_EQ(listDir(dir), (std::vector<std::string>{"b", "b.old"}));

  // An empty directory, or none, is fine without asking.
  ASSERT_TRUE(createDirectories(dir + "/empty").ok());
  OutputFileSet empty;
  ASSERT_TRUE(empty.begin(dir + "/empty", OutputFileSet::Mode::ReplaceDirectory).ok());
  ASSERT_TRUE(empty.write("f", {"f"}).ok());
  ASSERT_TRUE(empty.commit().ok());
  EXPECT_EQ(readText(dir + "/empty/f"), "f");
  // A file in the way.
  put("file", "x");
  OutputFileSet onFile;
  EXPECT_EQ(onFile.begin(dir + "/file", OutputFileSet::Mode::ReplaceDirectory, true).message(),
            "'" + dir + "/file' exists and is not a directory");
}

// Issue 18: a tool killed by SIGTERM left FILE.tmp-XXXX behind. A child
// process with an open AtomicFile and a staged OutputFileSet is killed; its
// temporaries are gone and it still dies of the signal.
TEST_F(AtomicFileTest, SigtermRemovesTemporaries) {
  put("out/keep", "old");
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(ready[0]);
    installTemporaryFileCleanup();
    AtomicFile file;
    OutputFileSet set, bundle;
    bool ok = file.open(dir + "/out/keep").ok() && file.write({"partial"}).ok() &&
              set.begin(dir + "/out", OutputFileSet::Mode::AddFiles).ok() &&
              set.write("a.npy", {"a"}).ok() &&
              bundle.begin(dir + "/bundle", OutputFileSet::Mode::ReplaceDirectory).ok() &&
              bundle.write("inputs/x.npy", {"x"}).ok();
    char c = ok ? '1' : '0';
    (void)::write(ready[1], &c, 1);
    for (;;)
      ::pause();
  }
  ::close(ready[1]);
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  ::close(ready[0]);
  EXPECT_EQ(c, '1');
  // The temporaries exist while the child runs.
  EXPECT_EQ(listDir(dir + "/out").size(), 3u); // keep, its temporary, the staging directory
  EXPECT_EQ(listDir(dir).size(), 2u);          // out, the bundle's staging directory
  ASSERT_EQ(::kill(child, SIGTERM), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
  EXPECT_EQ(listDir(dir + "/out"), std::vector<std::string>{"keep"});
  EXPECT_EQ(readText(dir + "/out/keep"), "old");
  EXPECT_EQ(listDir(dir), std::vector<std::string>{"out"});
}

} // namespace
