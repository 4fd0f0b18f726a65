//===- Npy.cpp - Reading and writing .npy files ---------------------------===//
//
// The format (numpy/lib/format.py): the magic string "\x93NUMPY", a major and
// a minor version byte, the header length (uint16 LE for 1.0, uint32 LE for
// 2.0 and 3.0), then the header: a Python dict literal with the keys 'descr',
// 'fortran_order' and 'shape', padded with spaces and ended by '\n' so that
// the data starts at a multiple of 64 bytes. The data follows.
//
//===----------------------------------------------------------------------===//
#include "neo/Runtime/Npy.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SwapByteOrder.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <system_error>

using namespace mlir;
using namespace mlir::neo;
using llvm::StringRef;
using llvm::Twine;

StringRef mlir::neo::stringifyNpyDType(NpyDType dtype) {
  switch (dtype) {
  case NpyDType::F16:
    return "float16";
  case NpyDType::F32:
    return "float32";
  case NpyDType::F64:
    return "float64";
  }
  return "unknown";
}

int64_t NpyArray::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

size_t NpyArray::elementSize() const {
  switch (dtype) {
  case NpyDType::F16:
    return 2;
  case NpyDType::F32:
    return 4;
  case NpyDType::F64:
    return 8;
  }
  return 0;
}

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
constexpr size_t kAlign = 64;

llvm::Error makeError(StringRef name, const Twine &message,
                      std::errc code = std::errc::invalid_argument) {
  return llvm::createStringError(std::make_error_code(code), name + ": " + message);
}

/// `text` as a printable, quoted snippet for messages (at most ~40 chars).
std::string quote(StringRef text) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "'";
  llvm::printEscapedString(text.take_front(40), os);
  if (text.size() > 40)
    os << "...";
  os << "'";
  return s;
}

std::string formatShape(const std::vector<int64_t> &shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1)
    s += ",";
  return s + ")";
}

//===----------------------------------------------------------------------===//
// The header: a small parser of Python literals
//===----------------------------------------------------------------------===//

/// A Python literal of a header.
struct PyValue {
  enum class Kind { Str, Bool, None, Int, Tuple, List, Other } kind = Kind::Other;
  std::string str;      // Str
  bool boolean = false; // Bool
  int64_t integer = 0;  // Int
  bool overflow = false; // Int that does not fit in int64
  std::vector<PyValue> items; // Tuple, List
  StringRef source;           // the text of the literal
};

class HeaderParser {
public:
  explicit HeaderParser(StringRef text) : text(text) {}

  /// Parses the dict into (key, value) pairs; on error sets `error`.
  bool parseDict(std::vector<std::pair<std::string, PyValue>> &entries);
  std::string error;

private:
  static constexpr unsigned kMaxDepth = 32;

  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' ||
                                 text[pos] == '\n' || text[pos] == '\r'))
      ++pos;
  }
  bool atEnd() const { return pos >= text.size(); }
  char peek() const { return atEnd() ? '\0' : text[pos]; }
  bool fail(const Twine &message) {
    if (error.empty())
      error = (message + " at header offset " + Twine(pos)).str();
    return false;
  }
  /// A description of what is at `pos`, for messages.
  std::string found() const {
    if (atEnd())
      return "the end of the header";
    return quote(text.substr(pos, 1));
  }
  bool parseValue(PyValue &value, unsigned depth);
  bool parseString(PyValue &value);
  bool parseNumber(PyValue &value);
  bool parseSequence(PyValue &value, char close, unsigned depth);

  StringRef text;
  size_t pos = 0;
};

bool HeaderParser::parseDict(std::vector<std::pair<std::string, PyValue>> &entries) {
  skipSpace();
  if (peek() != '{')
    return fail("expected '{' but found " + found());
  ++pos;
  while (true) {
    skipSpace();
    if (peek() == '}') {
      ++pos;
      break;
    }
    PyValue key;
    if (peek() != '\'' && peek() != '"')
      return fail("expected a string key or '}' but found " + found());
    if (!parseString(key))
      return false;
    skipSpace();
    if (peek() != ':')
      return fail("expected ':' after key " + quote(key.str) + " but found " + found());
    ++pos;
    PyValue value;
    if (!parseValue(value, 0))
      return false;
    entries.emplace_back(key.str, std::move(value));
    skipSpace();
    if (peek() == ',') {
      ++pos;
      continue;
    }
    if (peek() == '}') {
      ++pos;
      break;
    }
    return fail("expected ',' or '}' in the dictionary but found " + found());
  }
  // Padding: spaces and the final newline (numpy also tolerates none).
  skipSpace();
  if (!atEnd())
    return fail("unexpected " + found() + " after the dictionary");
  return true;
}

bool HeaderParser::parseValue(PyValue &value, unsigned depth) {
  if (depth > kMaxDepth)
    return fail("literals nested too deeply");
  skipSpace();
  size_t start = pos;
  char c = peek();
  bool ok;
  if (c == '\'' || c == '"') {
    ok = parseString(value);
  } else if (c == '(') {
    ok = parseSequence(value, ')', depth);
  } else if (c == '[') {
    ok = parseSequence(value, ']', depth);
  } else if (llvm::isDigit(c) || c == '-' || c == '+' || c == '.') {
    ok = parseNumber(value);
  } else if (llvm::isAlpha(c) || c == '_') {
    while (!atEnd() && (llvm::isAlnum(peek()) || peek() == '_'))
      ++pos;
    StringRef word = text.slice(start, pos);
    if (word == "True" || word == "False") {
      value.kind = PyValue::Kind::Bool;
      value.boolean = word == "True";
    } else if (word == "None") {
      value.kind = PyValue::Kind::None;
    } else {
      pos = start;
      return fail("unexpected name " + quote(word));
    }
    ok = true;
  } else {
    return fail("expected a value but found " + found());
  }
  if (!ok)
    return false;
  // A parenthesized expression may have reset the source; keep the outermost.
  value.source = text.slice(start, pos);
  return true;
}

bool HeaderParser::parseString(PyValue &value) {
  char quoteChar = text[pos++];
  value.kind = PyValue::Kind::Str;
  while (true) {
    if (atEnd())
      return fail("unterminated string");
    char c = text[pos++];
    if (c == quoteChar)
      return true;
    if (c == '\n')
      return fail("unterminated string");
    if (c == '\\') {
      if (atEnd())
        return fail("unterminated string");
      c = text[pos++];
    }
    value.str.push_back(c);
  }
}

bool HeaderParser::parseNumber(PyValue &value) {
  size_t start = pos;
  bool negative = false;
  while (peek() == '-' || peek() == '+') {
    negative ^= peek() == '-';
    ++pos;
    skipSpace();
  }
  if (!llvm::isDigit(peek()) && peek() != '.')
    return fail("expected a number but found " + found());
  value.kind = PyValue::Kind::Int;
  uint64_t magnitude = 0;
  while (llvm::isDigit(peek())) {
    unsigned digit = peek() - '0';
    if (magnitude > (UINT64_MAX - digit) / 10)
      value.overflow = true;
    else
      magnitude = magnitude * 10 + digit;
    ++pos;
  }
  // Floats, complex numbers, hexadecimal, digit separators: not integers.
  if (!atEnd() && (peek() == '.' || peek() == 'e' || peek() == 'E' || peek() == 'j' ||
                   peek() == 'J' || peek() == 'x' || peek() == 'X' || peek() == '_' ||
                   peek() == 'o' || peek() == 'b')) {
    while (!atEnd() && (llvm::isAlnum(peek()) || peek() == '.' || peek() == '_' ||
                        ((peek() == '-' || peek() == '+') && pos > 0 &&
                         (text[pos - 1] == 'e' || text[pos - 1] == 'E'))))
      ++pos;
    value.kind = PyValue::Kind::Other;
    value.source = text.slice(start, pos);
    return true;
  }
  // Python 2 longs: "3L".
  if (peek() == 'L' || peek() == 'l')
    ++pos;
  constexpr uint64_t kMaxPositive = static_cast<uint64_t>(INT64_MAX);
  if (value.overflow || magnitude > kMaxPositive + (negative ? 1 : 0)) {
    value.overflow = true;
  } else if (negative) {
    value.integer = static_cast<int64_t>(0 - magnitude);
  } else {
    value.integer = static_cast<int64_t>(magnitude);
  }
  return true;
}

bool HeaderParser::parseSequence(PyValue &value, char close, unsigned depth) {
  bool isTuple = close == ')';
  StringRef what = isTuple ? "tuple" : "list";
  ++pos; // '(' or '['
  std::vector<PyValue> items;
  bool sawComma = false;
  while (true) {
    skipSpace();
    if (peek() == close) {
      ++pos;
      break;
    }
    PyValue item;
    if (!parseValue(item, depth + 1))
      return false;
    items.push_back(std::move(item));
    skipSpace();
    if (peek() == ',') {
      ++pos;
      sawComma = true;
      continue;
    }
    if (peek() == close) {
      ++pos;
      break;
    }
    return fail("bad " + what + " syntax: expected ',' or '" + Twine(close) +
                "' but found " + found());
  }
  // "(x)" is x itself, not a tuple.
  if (isTuple && items.size() == 1 && !sawComma) {
    value = std::move(items[0]);
    return true;
  }
  value.kind = isTuple ? PyValue::Kind::Tuple : PyValue::Kind::List;
  value.items = std::move(items);
  return true;
}

} // namespace

//===----------------------------------------------------------------------===//
// parseNpy
//===----------------------------------------------------------------------===//

llvm::Expected<NpyArray> mlir::neo::parseNpy(StringRef buffer, StringRef name) {
  if (buffer.size() < kMagicSize || buffer.substr(0, kMagicSize) != StringRef(kMagic, 6))
    return makeError(name, "not a .npy file (bad magic string)");
  if (buffer.size() < kMagicSize + 2)
    return makeError(name, "truncated header (the file ends in the format version)");
  unsigned major = static_cast<unsigned char>(buffer[6]);
  unsigned minor = static_cast<unsigned char>(buffer[7]);
  if (!((major == 1 || major == 2 || major == 3) && minor == 0))
    return makeError(name, "unsupported .npy format version " + Twine(major) + "." +
                               Twine(minor) + " (expected 1.0, 2.0 or 3.0)");
  size_t lengthSize = major == 1 ? 2 : 4;
  size_t prefix = kMagicSize + 2 + lengthSize;
  if (buffer.size() < prefix)
    return makeError(name, "truncated header (the file ends in the header length)");
  uint64_t headerLength =
      major == 1 ? llvm::support::endian::read16le(buffer.data() + 8)
                 : llvm::support::endian::read32le(buffer.data() + 8);
  if (headerLength > buffer.size() - prefix)
    return makeError(name, "truncated header (the header is " + Twine(headerLength) +
                               " bytes but only " + Twine(buffer.size() - prefix) +
                               " bytes follow its length)");
  StringRef header = buffer.substr(prefix, headerLength);
  StringRef data = buffer.substr(prefix + headerLength);

  std::vector<std::pair<std::string, PyValue>> entries;
  HeaderParser parser(header);
  if (!parser.parseDict(entries))
    return makeError(name, "malformed header: " + parser.error);

  const PyValue *descr = nullptr, *fortran = nullptr, *shape = nullptr;
  for (const auto &[key, value] : entries) {
    const PyValue **slot = key == "descr"           ? &descr
                           : key == "fortran_order" ? &fortran
                           : key == "shape"         ? &shape
                                                    : nullptr;
    if (!slot)
      return makeError(name, "malformed header: unexpected key " + quote(key));
    if (*slot)
      return makeError(name, "malformed header: duplicate key " + quote(key));
    *slot = &value;
  }
  for (auto [value, key] : {std::pair{descr, "descr"},
                            std::pair{fortran, "fortran_order"},
                            std::pair{shape, "shape"}})
    if (!value)
      return makeError(name, Twine("malformed header: missing '") + key + "'");

  // 'fortran_order'.
  if (fortran->kind != PyValue::Kind::Bool)
    return makeError(name, "malformed header: 'fortran_order' must be True or False, "
                           "not " + quote(fortran->source));
  if (fortran->boolean)
    return makeError(name, "Fortran-ordered arrays are not supported");

  // 'shape'.
  NpyArray array;
  if (shape->kind != PyValue::Kind::Tuple)
    return makeError(name, "malformed header: 'shape' must be a tuple, not " +
                               quote(shape->source));
  for (auto [i, dim] : llvm::enumerate(shape->items)) {
    if (dim.kind != PyValue::Kind::Int)
      return makeError(name, "malformed header: dim #" + Twine(i) +
                                 " of 'shape' is not an integer: " + quote(dim.source));
    if (dim.overflow)
      return makeError(name, "malformed header: dim #" + Twine(i) +
                                 " of 'shape' is too large: " + quote(dim.source));
    if (dim.integer < 0)
      return makeError(name, "malformed header: dim #" + Twine(i) +
                                 " of 'shape' is negative: " + Twine(dim.integer));
    array.shape.push_back(dim.integer);
  }

  // 'descr'.
  if (descr->kind != PyValue::Kind::Str)
    return makeError(name, "unsupported dtype " + quote(descr->source) +
                               " (expected '<f2', '<f4' or '<f8')");
  StringRef type = descr->str;
  char order = '=';
  if (!type.empty() && StringRef("<>|=").contains(type.front())) {
    order = type.front();
    type = type.drop_front();
  }
  std::optional<NpyDType> dtype;
  if (type == "f2")
    dtype = NpyDType::F16;
  else if (type == "f4")
    dtype = NpyDType::F32;
  else if (type == "f8")
    dtype = NpyDType::F64;
  if (!dtype)
    return makeError(name, "unsupported dtype " + quote(descr->str) +
                               " (expected '<f2', '<f4' or '<f8')");
  if (order == '>')
    return makeError(name, "big-endian dtype " + quote(descr->str) +
                               " is not supported (expected '<f2', '<f4' or '<f8')");
  if (order != '<' && !llvm::sys::IsLittleEndianHost)
    return makeError(name, "dtype " + quote(descr->str) +
                               " is in the native byte order, which is big-endian "
                               "on this machine (expected '<f2', '<f4' or '<f8')");
  array.dtype = *dtype;

  // The data.
  int64_t count = 1;
  for (int64_t d : array.shape) {
    std::optional<int64_t> next = llvm::checkedMul(count, d);
    if (!next)
      return makeError(name, "shape " + formatShape(array.shape) +
                                 " has too many elements (the count overflows int64)");
    count = *next;
  }
  std::optional<int64_t> size =
      llvm::checkedMul(count, static_cast<int64_t>(array.elementSize()));
  if (!size)
    return makeError(name, "shape " + formatShape(array.shape) + " of " +
                               stringifyNpyDType(array.dtype) +
                               " is too large (its byte size overflows int64)");
  if (static_cast<uint64_t>(*size) != data.size())
    return makeError(name, "expected " + Twine(*size) + " bytes of data but found " +
                               Twine(data.size()));
  array.bytes.assign(data.begin(), data.end());
  return array;
}

llvm::Expected<NpyArray> mlir::neo::readNpy(StringRef path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (std::error_code ec = file.getError())
    return llvm::createStringError(ec, path + ": cannot read the file: " + ec.message());
  return parseNpy((*file)->getBuffer(), path);
}

//===----------------------------------------------------------------------===//
// writeNpy
//===----------------------------------------------------------------------===//

/// The magic string, version, header length and header of `array`, laid out
/// as numpy (>= 1.23) writes them.
static std::string makePreamble(const NpyArray &array) {
  std::string dict = "{'descr': '<f";
  dict += std::to_string(array.elementSize());
  dict += "', 'fortran_order': False, 'shape': " + formatShape(array.shape) + ", }";
  // Room for the first dim to grow in place (numpy's GROWTH_AXIS_MAX_DIGITS).
  if (!array.shape.empty())
    dict.append(21 - std::min<size_t>(21, std::to_string(array.shape[0]).size()), ' ');
  unsigned major = 1;
  size_t lengthSize = 2;
  size_t unpadded = kMagicSize + 2 + lengthSize + dict.size() + 1;
  size_t padding = kAlign - unpadded % kAlign;
  if (dict.size() + 1 + padding > 0xffff) {
    major = 2;
    lengthSize = 4;
    unpadded = kMagicSize + 2 + lengthSize + dict.size() + 1;
    padding = kAlign - unpadded % kAlign;
  }
  uint32_t headerLength = static_cast<uint32_t>(dict.size() + padding + 1);
  std::string preamble(kMagic, kMagicSize);
  preamble.push_back(static_cast<char>(major));
  preamble.push_back(0);
  for (size_t i = 0; i < lengthSize; ++i)
    preamble.push_back(static_cast<char>((headerLength >> (8 * i)) & 0xff));
  preamble += dict;
  preamble.append(padding, ' ');
  preamble.push_back('\n');
  return preamble;
}

llvm::Error mlir::neo::writeNpy(StringRef path, const NpyArray &array) {
  int64_t count = 1;
  for (int64_t d : array.shape) {
    if (d < 0)
      return makeError(path, "cannot write an array with a negative dim: shape " +
                                 formatShape(array.shape));
    std::optional<int64_t> next = llvm::checkedMul(count, d);
    if (!next)
      return makeError(path, "cannot write shape " + formatShape(array.shape) +
                                 ": the element count overflows int64");
    count = *next;
  }
  std::optional<int64_t> size =
      llvm::checkedMul(count, static_cast<int64_t>(array.elementSize()));
  if (!size || static_cast<uint64_t>(*size) != array.bytes.size())
    return makeError(path, "cannot write shape " + formatShape(array.shape) + " of " +
                               stringifyNpyDType(array.dtype) + " from " +
                               Twine(array.bytes.size()) + " bytes of data");

  std::string preamble = makePreamble(array);
  int fd;
  llvm::SmallString<256> tempPath;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueFile(path + ".tmp-%%%%%%%%", fd, tempPath))
    return llvm::createStringError(ec, path + ": cannot create a temporary file: " +
                                           ec.message());
  std::error_code writeError;
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os.write(preamble.data(), preamble.size());
    os.write(array.bytes.data(), array.bytes.size());
    os.close();
    if (os.has_error()) {
      writeError = os.error();
      os.clear_error();
    }
  }
  if (writeError) {
    llvm::sys::fs::remove(tempPath);
    return llvm::createStringError(writeError,
                                   path + ": cannot write: " + writeError.message());
  }
  if (std::error_code ec = llvm::sys::fs::rename(tempPath, path)) {
    llvm::sys::fs::remove(tempPath);
    return llvm::createStringError(ec, path + ": cannot rename " + tempPath + " to it: " +
                                           ec.message());
  }
  return llvm::Error::success();
}
