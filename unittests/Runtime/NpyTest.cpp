//===- NpyTest.cpp - Reading and writing .npy files -----------------------===//
#include "neo/Runtime/Execution/Npy.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include "gtest/gtest.h"

#include <cstring>
#include <string>

using namespace mlir::neo;
using llvm::StringRef;

namespace {

/// What numpy 1.x writes for np.save(f, np.arange(6, dtype=np.float32).reshape(2, 3)):
/// a 1.0 header of 118 bytes (so the data starts at 128), then 0.0 .. 5.0.
const char kNumpyArange[] =
    "\x93NUMPY\x01\x00\x76\x00"
    "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"
    "                                                          \n"
    "\x00\x00\x00\x00\x00\x00\x80\x3f\x00\x00\x00\x40"
    "\x00\x00\x40\x40\x00\x00\x80\x40\x00\x00\xa0\x40";
StringRef numpyArange() { return StringRef(kNumpyArange, sizeof(kNumpyArange) - 1); }

/// A .npy buffer of version `major`.0 with header `dict` (a newline is
/// appended) followed by `dataBytes` zero bytes.
std::string npy(StringRef dict, size_t dataBytes, unsigned major = 1) {
  std::string s("\x93NUMPY", 6);
  s.push_back(static_cast<char>(major));
  s.push_back(0);
  size_t length = dict.size() + 1;
  for (size_t i = 0; i < (major == 1 ? 2u : 4u); ++i)
    s.push_back(static_cast<char>((length >> (8 * i)) & 0xff));
  s += dict.str();
  s.push_back('\n');
  s.append(dataBytes, '\0');
  return s;
}

/// The error message of parsing `buffer` as "t.npy" ("" if it parses).
std::string parseError(StringRef buffer) {
  llvm::Expected<NpyArray> r = parseNpy(buffer, "t.npy");
  if (r)
    return "";
  return llvm::toString(r.takeError());
}

NpyArray makeArray(ElementType dtype, std::vector<int64_t> shape) {
  NpyArray a;
  a.dtype = dtype;
  a.shape = std::move(shape);
  a.bytes.resize(a.numElements() * a.elementSize());
  for (size_t i = 0; i < a.bytes.size(); ++i)
    a.bytes[i] = static_cast<char>(i * 37 + 11);
  return a;
}

class NpyFileTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("neo-npy-test", dir));
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir); }
  std::string path(StringRef name) {
    llvm::SmallString<128> p(dir);
    llvm::sys::path::append(p, name);
    return std::string(p);
  }
  /// The names in the test directory.
  std::vector<std::string> entries() {
    std::vector<std::string> names;
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
         it.increment(ec))
      names.push_back(llvm::sys::path::filename(it->path()).str());
    return names;
  }
  void roundTrip(const NpyArray &a) {
    std::string p = path("a.npy");
    llvm::Error e = writeNpy(p, a);
    ASSERT_FALSE(e) << llvm::toString(std::move(e));
    llvm::Expected<NpyArray> r = readNpy(p);
    ASSERT_TRUE(!!r) << llvm::toString(r.takeError());
    EXPECT_EQ(r->dtype, a.dtype);
    EXPECT_EQ(r->shape, a.shape);
    EXPECT_EQ(r->bytes, a.bytes);
    // The data starts at a multiple of 64 bytes.
    auto file = llvm::MemoryBuffer::getFile(p);
    ASSERT_TRUE(!!file);
    EXPECT_EQ(((*file)->getBufferSize() - a.bytes.size()) % 64, 0u);
    EXPECT_EQ(entries(), std::vector<std::string>{"a.npy"});
  }
  llvm::SmallString<128> dir;
};

} // namespace

TEST(NpyTest, DTypeNamesAndSizes) {
  EXPECT_EQ(stringifyNpyDType(ElementType::F16), "float16");
  EXPECT_EQ(stringifyNpyDType(ElementType::F32), "float32");
  EXPECT_EQ(stringifyNpyDType(ElementType::F64), "float64");
  NpyArray a;
  EXPECT_EQ(a.numElements(), 1);
  EXPECT_EQ(a.elementSize(), 4u);
  a.shape = {2, 3, 4};
  a.dtype = ElementType::F16;
  EXPECT_EQ(a.numElements(), 24);
  EXPECT_EQ(a.elementSize(), 2u);
  a.dtype = ElementType::F64;
  EXPECT_EQ(a.elementSize(), 8u);
}

TEST_F(NpyFileTest, RoundTripF16) { roundTrip(makeArray(ElementType::F16, {5})); }
TEST_F(NpyFileTest, RoundTripF32) { roundTrip(makeArray(ElementType::F32, {3, 7})); }
TEST_F(NpyFileTest, RoundTripF64) { roundTrip(makeArray(ElementType::F64, {4, 1})); }
TEST_F(NpyFileTest, RoundTrip0D) { roundTrip(makeArray(ElementType::F64, {})); }
TEST_F(NpyFileTest, RoundTrip3D) { roundTrip(makeArray(ElementType::F32, {2, 3, 4})); }
TEST_F(NpyFileTest, RoundTripEmpty) { roundTrip(makeArray(ElementType::F32, {0, 3})); }

TEST_F(NpyFileTest, WritesWhatNumpyWrites) {
  NpyArray a;
  a.dtype = ElementType::F32;
  a.shape = {2, 3};
  for (int i = 0; i < 6; ++i) {
    float f = static_cast<float>(i);
    char b[4];
    std::memcpy(b, &f, 4);
    a.bytes.insert(a.bytes.end(), b, b + 4);
  }
  std::string p = path("numpy.npy");
  ASSERT_FALSE(llvm::errorToBool(writeNpy(p, a)));
  auto file = llvm::MemoryBuffer::getFile(p);
  ASSERT_TRUE(!!file);
  EXPECT_EQ((*file)->getBuffer(), numpyArange());
}

TEST_F(NpyFileTest, OverwritesAnExistingFile) {
  std::string p = path("a.npy");
  ASSERT_FALSE(llvm::errorToBool(writeNpy(p, makeArray(ElementType::F64, {100}))));
  roundTrip(makeArray(ElementType::F16, {3}));
}

TEST_F(NpyFileTest, WriteToMissingDirectoryFailsAndLeavesNothing) {
  std::string p = path("missing/a.npy");
  llvm::Error e = writeNpy(p, makeArray(ElementType::F32, {2}));
  ASSERT_TRUE(!!e);
  std::string message = llvm::toString(std::move(e));
  EXPECT_EQ(message.rfind(p + ": ", 0), 0u) << message;
  EXPECT_FALSE(llvm::sys::fs::exists(p));
  EXPECT_FALSE(llvm::sys::fs::exists(path("missing")));
  EXPECT_TRUE(entries().empty());
}

TEST_F(NpyFileTest, WriteRejectsBytesThatDoNotMatchTheShape) {
  NpyArray a = makeArray(ElementType::F32, {2, 3});
  a.bytes.pop_back();
  std::string p = path("a.npy");
  llvm::Error e = writeNpy(p, a);
  ASSERT_TRUE(!!e);
  EXPECT_EQ(llvm::toString(std::move(e)),
            p + ": cannot write shape (2, 3) of float32 from 23 bytes of data");
  EXPECT_TRUE(entries().empty());
}

TEST_F(NpyFileTest, ReadMissingFile) {
  std::string p = path("none.npy");
  llvm::Expected<NpyArray> r = readNpy(p);
  ASSERT_FALSE(!!r);
  std::string message = llvm::toString(r.takeError());
  EXPECT_EQ(message.rfind(p + ": cannot read the file: ", 0), 0u) << message;
}

TEST(NpyTest, ParsesWhatNumpyWrites) {
  llvm::Expected<NpyArray> r = parseNpy(numpyArange(), "arange.npy");
  ASSERT_TRUE(!!r) << llvm::toString(r.takeError());
  EXPECT_EQ(r->dtype, ElementType::F32);
  EXPECT_EQ(r->shape, (std::vector<int64_t>{2, 3}));
  ASSERT_EQ(r->bytes.size(), 24u);
  for (int i = 0; i < 6; ++i) {
    float f;
    std::memcpy(&f, r->bytes.data() + 4 * i, 4);
    EXPECT_EQ(f, static_cast<float>(i));
  }
}

TEST(NpyTest, ParsesVersions2And3AndVariants) {
  for (unsigned major : {2u, 3u}) {
    llvm::Expected<NpyArray> r =
        parseNpy(npy("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", 24,
                     major),
                 "t.npy");
    ASSERT_TRUE(!!r) << llvm::toString(r.takeError());
    EXPECT_EQ(r->dtype, ElementType::F64);
    EXPECT_EQ(r->shape, std::vector<int64_t>{3});
  }
  // Other key order, double quotes, no trailing comma, a 0-d shape, and the
  // native ('=', '|') byte orders, which are little-endian on test machines.
  llvm::Expected<NpyArray> r = parseNpy(
      npy("{\"shape\":(),\"fortran_order\":False,\"descr\":\"<f2\"}", 2), "t.npy");
  ASSERT_TRUE(!!r) << llvm::toString(r.takeError());
  EXPECT_EQ(r->dtype, ElementType::F16);
  EXPECT_TRUE(r->shape.empty());
  EXPECT_EQ(parseError(npy("{'descr': '=f4', 'fortran_order': False, 'shape': (1,)}", 4)),
            "");
  EXPECT_EQ(parseError(npy("{'descr': '|f4', 'fortran_order': False, 'shape': (1,)}", 4)),
            "");
  // Python 2 longs.
  EXPECT_EQ(
      parseError(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 1L)}", 8)),
      "");
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

TEST(NpyTest, ErrorBadMagic) {
  EXPECT_EQ(parseError(""), "t.npy: not a .npy file (bad magic string)");
  EXPECT_EQ(parseError("\x93NUMP"), "t.npy: not a .npy file (bad magic string)");
  EXPECT_EQ(parseError("PK\x03\x04 a zip file"),
            "t.npy: not a .npy file (bad magic string)");
}

TEST(NpyTest, ErrorUnsupportedVersion) {
  std::string s = npy("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", 4);
  s[6] = 4;
  EXPECT_EQ(parseError(s),
            "t.npy: unsupported .npy format version 4.0 (expected 1.0, 2.0 or 3.0)");
  s[6] = 1;
  s[7] = 1;
  EXPECT_EQ(parseError(s),
            "t.npy: unsupported .npy format version 1.1 (expected 1.0, 2.0 or 3.0)");
}

TEST(NpyTest, ErrorTruncatedHeader) {
  StringRef full = numpyArange();
  EXPECT_EQ(parseError(full.take_front(7)),
            "t.npy: truncated header (the file ends in the format version)");
  EXPECT_EQ(parseError(full.take_front(9)),
            "t.npy: truncated header (the file ends in the header length)");
  EXPECT_EQ(parseError(full.take_front(100)),
            "t.npy: truncated header (the header is 118 bytes but only 90 bytes follow "
            "its length)");
}

TEST(NpyTest, ErrorMissingKeys) {
  EXPECT_EQ(parseError(npy("{'fortran_order': False, 'shape': (2,), }", 8)),
            "t.npy: malformed header: missing 'descr'");
  EXPECT_EQ(parseError(npy("{'descr': '<f4', 'shape': (2,), }", 8)),
            "t.npy: malformed header: missing 'fortran_order'");
  EXPECT_EQ(parseError(npy("{'descr': '<f4', 'fortran_order': False}", 4)),
            "t.npy: malformed header: missing 'shape'");
}

TEST(NpyTest, ErrorMalformedDict) {
  EXPECT_EQ(parseError(npy("descr: '<f4'", 4)),
            "t.npy: malformed header: expected '{' but found 'd' at header offset 0");
  EXPECT_EQ(parseError(npy("{'descr' '<f4'}", 4)),
            "t.npy: malformed header: expected ':' after key 'descr' but found '''"
            " at header offset 9");
  EXPECT_EQ(parseError(npy("{'descr': '<f4", 4)),
            "t.npy: malformed header: unterminated string at header offset 15");
  EXPECT_EQ(parseError(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), "
                           "'extra': 1}",
                           8)),
            "t.npy: malformed header: unexpected key 'extra'");
  EXPECT_EQ(parseError(npy("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, "
                           "'shape': (2,)}",
                           8)),
            "t.npy: malformed header: duplicate key 'descr'");
  EXPECT_EQ(
      parseError(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} x", 8)),
      "t.npy: malformed header: unexpected 'x' after the dictionary at header offset "
      "56");
  EXPECT_EQ(parseError(npy("{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}", 8)),
            "t.npy: malformed header: 'fortran_order' must be True or False, not '0'");
}

TEST(NpyTest, ErrorBadTupleSyntax) {
  EXPECT_EQ(
      parseError(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2 3), }", 24)),
      "t.npy: malformed header: bad tuple syntax: expected ',' or ')' but found '3' at "
      "header offset 53");
  EXPECT_EQ(
      parseError(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, }", 24)),
      "t.npy: malformed header: expected a value but found '}' at header offset 57");
  EXPECT_EQ(
      parseError(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3", 24)),
      "t.npy: malformed header: bad tuple syntax: expected ',' or ')' but found the "
      "end of the header at header offset 56");
  // (2) is an int, [2, 3] a list: neither is a tuple.
  EXPECT_EQ(parseError(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2)}", 8)),
            "t.npy: malformed header: 'shape' must be a tuple, not '(2)'");
  EXPECT_EQ(
      parseError(npy("{'descr': '<f4', 'fortran_order': False, 'shape': [2, 3]}", 24)),
      "t.npy: malformed header: 'shape' must be a tuple, not '[2, 3]'");
}

TEST(NpyTest, ErrorNegativeOrNonIntegerDims) {
  EXPECT_EQ(
      parseError(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3), }", 0)),
      "t.npy: malformed header: dim #1 of 'shape' is negative: -3");
  EXPECT_EQ(
      parseError(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2.5,), }", 0)),
      "t.npy: malformed header: dim #0 of 'shape' is not an integer: '2.5'");
  EXPECT_EQ(
      parseError(npy("{'descr': '<f4', 'fortran_order': False, 'shape': ('2',), }", 0)),
      "t.npy: malformed header: dim #0 of 'shape' is not an integer: ''2''");
  EXPECT_EQ(parseError(npy("{'descr': '<f4', 'fortran_order': False, "
                           "'shape': (99999999999999999999,), }",
                           0)),
            "t.npy: malformed header: dim #0 of 'shape' is too large: "
            "'99999999999999999999'");
}

TEST(NpyTest, ErrorFortranOrder) {
  EXPECT_EQ(
      parseError(npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", 24)),
      "t.npy: Fortran-ordered arrays are not supported");
}

TEST(NpyTest, ErrorUnsupportedDType) {
  EXPECT_EQ(parseError(npy("{'descr': '<u1', 'fortran_order': False, 'shape': (2,), }", 2)),
            "t.npy: unsupported dtype '<u1' (expected '<f2', '<f4', '<f8', '<i4', '<i8' or '<u2' "
            "(bf16 bits))");
  EXPECT_EQ(parseError(npy("{'descr': '<f16', 'fortran_order': False, 'shape': (2,), }", 32)),
            "t.npy: unsupported dtype '<f16' (expected '<f2', '<f4', '<f8', '<i4', '<i8' or '<u2' "
            "(bf16 bits))");
  EXPECT_EQ(parseError(npy("{'descr': [('a', '<f4')], 'fortran_order': False, "
                           "'shape': (2,), }",
                           8)),
            "t.npy: unsupported dtype '[('a', '<f4')]' (expected '<f2', '<f4', '<f8', '<i4', '<i8' "
            "or '<u2' (bf16 bits))");
}

TEST(NpyTest, ErrorBigEndian) {
  EXPECT_EQ(parseError(npy("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 8)),
            "t.npy: big-endian dtype '>f4' is not supported (expected '<f2', '<f4', '<f8', "
            "'<i4', '<i8' or '<u2' (bf16 bits))");
}

TEST(NpyTest, ErrorShapeOverflow) {
  EXPECT_EQ(parseError(npy("{'descr': '<f4', 'fortran_order': False, "
                           "'shape': (4294967296, 4294967296), }",
                           0)),
            "t.npy: shape (4294967296, 4294967296) has too many elements (the count "
            "overflows int64)");
  EXPECT_EQ(parseError(npy("{'descr': '<f4', 'fortran_order': False, "
                           "'shape': (4611686018427387904,), }",
                           0)),
            "t.npy: shape (4611686018427387904,) of float32 is too large (its byte size "
            "overflows int64)");
}

TEST(NpyTest, ErrorDataSizeMismatch) {
  std::string s = numpyArange().str();
  EXPECT_EQ(parseError(StringRef(s).drop_back(4)),
            "t.npy: expected 24 bytes of data but found 20");
  EXPECT_EQ(parseError(s + "xx"), "t.npy: expected 24 bytes of data but found 26");
}

TEST(NpyTest, NeverCrashesOnCorruptInput) {
  // Every prefix, and every single-byte change of the header to a few values.
  std::string s = numpyArange().str();
  for (size_t n = 0; n <= s.size(); ++n)
    (void)parseError(StringRef(s).take_front(n));
  const char values[] = {'\0', '\'', '"', '(', ')', '[', ']', '{', '}', ',', ':', '-',
                         '9', 'L', '\\', '\xff', '\n', ' '};
  for (size_t i = 0; i < 128; ++i)
    for (char v : values) {
      std::string t = s;
      t[i] = v;
      (void)parseError(t);
    }
  // Deep nesting.
  std::string deep = "{'descr': '<f4', 'fortran_order': False, 'shape': " +
                     std::string(10000, '(') + "}";
  EXPECT_EQ(parseError(npy(deep, 0)).rfind("t.npy: malformed header: literals nested "
                                           "too deeply",
                                           0),
            0u);
}
