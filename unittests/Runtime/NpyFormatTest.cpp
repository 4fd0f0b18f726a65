//===- NpyFormatTest.cpp - The LLVM-free .npy core and file helpers -------===//
//
// NpyTest.cpp covers the format through the llvm::Error wrappers (which call
// this core); these tests use the plain API of NpyFormat.h and FileIO.h that
// the lean neo-cuda-runner uses.
//
//===----------------------------------------------------------------------===//
#include "neo/Runtime/Support/NpyFormat.h"
#include "neo/Support/FileIO.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace mlir::neo;

namespace {

class NpyFormatTest : public ::testing::Test {
protected:
  void SetUp() override {
    char pattern[] = "/tmp/neo-npyformat-test-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir = pattern;
  }
  void TearDown() override {
    for (const std::string &name : entries())
      ::unlink((dir + "/" + name).c_str());
    ::rmdir(dir.c_str());
  }
  std::vector<std::string> entries() {
    std::vector<std::string> names;
    if (DIR *d = ::opendir(dir.c_str())) {
      while (dirent *e = ::readdir(d))
        if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, ".."))
          names.push_back(e->d_name);
      ::closedir(d);
    }
    return names;
  }
  std::string dir;
};

NpyArray makeArray(ElementType dtype, std::vector<int64_t> shape) {
  NpyArray a;
  a.dtype = dtype;
  a.shape = std::move(shape);
  a.bytes.resize(a.numElements() * a.elementSize());
  for (size_t i = 0; i < a.bytes.size(); ++i)
    a.bytes[i] = static_cast<char>(i * 37 + 11);
  return a;
}

} // namespace

TEST_F(NpyFormatTest, RoundTripsThroughMemoryAndFiles) {
  for (const NpyArray &a :
       {makeArray(ElementType::F16, {5}), makeArray(ElementType::F32, {2, 3, 4}),
        makeArray(ElementType::F64, {}), makeArray(ElementType::F32, {0, 3}),
        makeArray(ElementType::BF16, {3, 2})}) {
    std::string file;
    Status s = encodeNpy(a, "a.npy", file);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ((file.size() - a.bytes.size()) % 64, 0u);
    NpyArray b;
    s = decodeNpy(file.data(), file.size(), "a.npy", b);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(b.dtype, a.dtype);
    EXPECT_EQ(b.shape, a.shape);
    EXPECT_EQ(b.bytes, a.bytes);

    std::string path = dir + "/a.npy";
    s = saveNpyFile(path, a);
    ASSERT_TRUE(s.ok()) << s.message();
    NpyArray c;
    s = loadNpyFile(path, c);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(c.bytes, a.bytes);
    EXPECT_EQ(c.shape, a.shape);
    // Written atomically: no temporary file is left.
    EXPECT_EQ(entries(), std::vector<std::string>{"a.npy"});
    std::string onDisk;
    ASSERT_TRUE(readWholeFile(path, onDisk).ok());
    EXPECT_EQ(onDisk, file);
  }
}

TEST_F(NpyFormatTest, Errors) {
  NpyArray a;
  Status s = decodeNpy("PK", 2, "x.npy", a);
  EXPECT_EQ(s.code(), Status::Code::Invalid);
  EXPECT_EQ(s.message(), "x.npy: not a .npy file (bad magic string)");

  NpyArray bad = makeArray(ElementType::F32, {2, 3});
  bad.bytes.pop_back();
  std::string file;
  s = encodeNpy(bad, "b.npy", file);
  EXPECT_EQ(s.message(), "b.npy: cannot write shape (2, 3) of float32 from 23 bytes of data");
  s = saveNpyFile(dir + "/b.npy", bad);
  EXPECT_EQ(s.code(), Status::Code::Invalid);
  EXPECT_TRUE(entries().empty());
  // numpy has no bfloat16: bf16 travels as its bits, '<u2'.
  s = encodeNpy(makeArray(ElementType::BF16, {2}), "h.npy", file);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_NE(file.find("'descr': '<u2'"), std::string::npos);

  s = loadNpyFile(dir + "/none.npy", a);
  EXPECT_EQ(s.code(), Status::Code::IO);
  EXPECT_EQ(s.message(), dir + "/none.npy: cannot read the file: No such file or directory");
  s = loadNpyFile(dir, a);
  EXPECT_EQ(s.message(), dir + ": cannot read the file: Is a directory");
}

TEST_F(NpyFormatTest, AtomicWrites) {
  std::string path = dir + "/f.txt";
  ASSERT_TRUE(writeFileAtomically(path, {"abc", std::string_view("d\0e", 3)}).ok());
  std::string text;
  ASSERT_TRUE(readWholeFile(path, text).ok());
  EXPECT_EQ(text, std::string("abcd\0e", 6));
  // Overwrites, with the usual permissions of a new file (not mkstemp's 0600).
  ASSERT_TRUE(writeFileAtomically(path, {"x"}).ok());
  ASSERT_TRUE(readWholeFile(path, text).ok());
  EXPECT_EQ(text, "x");
  mode_t mask = ::umask(0);
  ::umask(mask);
  struct stat info;
  ASSERT_EQ(::stat(path.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0666 & ~mask);
  EXPECT_EQ(entries(), std::vector<std::string>{"f.txt"});
  // A missing directory: an error naming the path, and nothing left behind.
  Status s = writeFileAtomically(dir + "/missing/f.txt", {"x"});
  EXPECT_EQ(s.code(), Status::Code::IO);
  EXPECT_EQ(s.message(), dir + "/missing/f.txt: cannot create a temporary file: No such "
                               "file or directory");
  EXPECT_EQ(entries(), std::vector<std::string>{"f.txt"});
}

TEST_F(NpyFormatTest, CreatesDirectories) {
  ASSERT_TRUE(createDirectories(dir + "/x/y/z").ok());
  ASSERT_TRUE(createDirectories(dir + "/x/y/z/").ok()); // exists: fine
  struct stat info;
  EXPECT_EQ(::stat((dir + "/x/y/z").c_str(), &info), 0);
  EXPECT_TRUE(S_ISDIR(info.st_mode));
  ASSERT_TRUE(writeFileAtomically(dir + "/file", {"x"}).ok());
  Status s = createDirectories(dir + "/file/sub");
  EXPECT_EQ(s.code(), Status::Code::IO);
  EXPECT_EQ(s.message(), "cannot create '" + dir + "/file/sub': Not a directory");
  for (const char *d : {"/x/y/z", "/x/y", "/x"})
    ::rmdir((dir + d).c_str());
}
