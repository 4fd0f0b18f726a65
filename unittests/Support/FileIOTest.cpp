//===- FileIOTest.cpp - NeoSupport: bounded reads, names, symlinks --------===//
#include "neo/Support/FileIO.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

using namespace mlir::neo;

namespace {

class FileIOTest : public ::testing::Test {
protected:
  void SetUp() override {
    char pattern[] = "/tmp/neo-support-test-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir = pattern;
  }
  void TearDown() override { EXPECT_TRUE(removeTree(dir).ok()); }
  std::string dir;
};

TEST_F(FileIOTest, ReadLimitOnRegularFiles) {
  std::string path = dir + "/f";
  ASSERT_TRUE(writeFileAtomically(path, {std::string(100, 'x')}).ok());
  std::string text;
  EXPECT_TRUE(readWholeFile(path, text, 100).ok());
  EXPECT_EQ(text.size(), 100u);
  Status s = readWholeFile(path, text, 99);
  EXPECT_EQ(s.code(), Status::Code::IO);
  EXPECT_EQ(s.message(), path + ": the file is larger than the limit of 99 bytes");
}

// A file without a size (a FIFO fed forever, like /dev/zero) is cut off at the
// limit while reading instead of being read until memory runs out.
TEST_F(FileIOTest, ReadLimitOnEndlessStreams) {
  std::signal(SIGPIPE, SIG_IGN);
  std::string fifo = dir + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer([&] {
    int fd = ::open(fifo.c_str(), O_WRONLY);
    if (fd < 0)
      return;
    std::string chunk(1 << 16, '\0');
    // Until the reader gives up (EPIPE) or 1 GiB, far past the limit.
    for (int i = 0; i < (1 << 14); ++i)
      if (::write(fd, chunk.data(), chunk.size()) < 0)
        break;
    ::close(fd);
  });
  std::string text;
  Status s = readWholeFile(fifo, text, 1 << 20);
  writer.join();
  EXPECT_EQ(s.code(), Status::Code::IO);
  EXPECT_EQ(s.message(), fifo + ": the file is larger than the limit of 1048576 bytes");
  EXPECT_TRUE(text.empty());
}

TEST_F(FileIOTest, FileNames) {
  for (const char *good : {"y", "a.b", "..x", "-", " "})
    EXPECT_TRUE(checkFileName(good, "output #0").ok()) << good;
  for (std::string bad : {std::string(""), std::string("."), std::string(".."), std::string("../x"),
                          std::string("a/b"), std::string("/abs"), std::string("a\0b", 3)}) {
    Status s = checkFileName(bad, "output #0 of 'f'");
    EXPECT_EQ(s.code(), Status::Code::Invalid) << bad;
  }
  EXPECT_EQ(checkFileName("../x", "output #0 of 'f'").message(),
            "output #0 of 'f' is named '../x', which is not a valid file name (it must be "
            "non-empty, not '.' or '..', and contain no '/')");
  EXPECT_TRUE(checkFileNames({"a", "b", "c"}, "output").ok());
  Status s = checkFileNames({"a", "b", "a"}, "output", "of 'f'");
  EXPECT_EQ(s.message(), "output #2 of 'f' is named 'a', like output #0: their files would "
                         "overwrite each other");
}

TEST_F(FileIOTest, ResolvesSymlinks) {
  ASSERT_EQ(::mkdir((dir + "/sub").c_str(), 0777), 0);
  ASSERT_EQ(::symlink("sub/target", (dir + "/a").c_str()), 0);
  ASSERT_EQ(::symlink((dir + "/a").c_str(), (dir + "/b").c_str()), 0);
  std::string resolved;
  ASSERT_TRUE(resolveSymlinks(dir + "/b", resolved).ok());
  EXPECT_EQ(resolved, dir + "/sub/target");
  ASSERT_TRUE(resolveSymlinks(dir + "/plain", resolved).ok());
  EXPECT_EQ(resolved, dir + "/plain");
  ASSERT_EQ(::symlink("loop", (dir + "/loop").c_str()), 0);
  EXPECT_FALSE(resolveSymlinks(dir + "/loop", resolved).ok());
}

TEST_F(FileIOTest, RemovesTreesWithoutFollowingLinks) {
  std::string keep = dir + "/keep";
  ASSERT_TRUE(writeFileAtomically(keep, {"k"}).ok());
  ASSERT_TRUE(createDirectories(dir + "/t/a/b").ok());
  ASSERT_TRUE(writeFileAtomically(dir + "/t/a/b/f", {"x"}).ok());
  ASSERT_EQ(::symlink(keep.c_str(), (dir + "/t/link").c_str()), 0);
  ASSERT_TRUE(removeTree(dir + "/t").ok());
  struct stat info;
  EXPECT_NE(::lstat((dir + "/t").c_str(), &info), 0);
  EXPECT_EQ(::stat(keep.c_str(), &info), 0);
  EXPECT_TRUE(removeTree(dir + "/none").ok());
}

} // namespace
