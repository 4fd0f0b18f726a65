//===- CudaBundle.cpp - GPU bundles: loading and running ------------------===//
//
// The manifest is parsed with nlohmann::json's SAX interface into a DOM of our
// own, which reports syntax errors with their line and column and rejects
// duplicate keys (which a DOM parse would silently resolve to the last), and
// works without exceptions (the full build compiles with -fno-exceptions).
// Every field is then checked with its path for messages.
//
//===----------------------------------------------------------------------===//
#include "neo/Runtime/CudaBundle.h"

#include "neo/Runtime/HalfFloat.h"
#include "neo/Support/FileIO.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <map>
#include <set>

using namespace mlir;
using namespace mlir::neo;
using namespace mlir::neo::cuda;
using json = nlohmann::json;

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

const char *mlir::neo::getBundleDTypeName(BundleDType dtype) {
  switch (dtype) {
  case BundleDType::F16: return "f16";
  case BundleDType::BF16: return "bf16";
  case BundleDType::F32: return "f32";
  case BundleDType::F64: return "f64";
  }
  return "?";
}

std::optional<BundleDType> mlir::neo::parseBundleDType(const std::string &name) {
  for (BundleDType d : {BundleDType::F16, BundleDType::BF16, BundleDType::F32, BundleDType::F64})
    if (name == getBundleDTypeName(d))
      return d;
  return std::nullopt;
}

size_t mlir::neo::getBundleDTypeSize(BundleDType dtype) {
  switch (dtype) {
  case BundleDType::F16:
  case BundleDType::BF16: return 2;
  case BundleDType::F32: return 4;
  case BundleDType::F64: return 8;
  }
  return 4;
}

double mlir::neo::loadBundleElement(BundleDType dtype, const void *data, size_t i) {
  const char *p = static_cast<const char *>(data) + i * getBundleDTypeSize(dtype);
  switch (dtype) {
  case BundleDType::F16:
  case BundleDType::BF16: {
    uint16_t bits;
    std::memcpy(&bits, p, 2);
    return dtype == BundleDType::F16 ? halfToDouble(bits) : bfloat16ToDouble(bits);
  }
  case BundleDType::F32: {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  case BundleDType::F64: {
    double d;
    std::memcpy(&d, p, 8);
    return d;
  }
  }
  return 0;
}

void mlir::neo::storeBundleElement(BundleDType dtype, void *data, size_t i, double value) {
  char *p = static_cast<char *>(data) + i * getBundleDTypeSize(dtype);
  switch (dtype) {
  case BundleDType::F16:
  case BundleDType::BF16: {
    uint16_t bits = dtype == BundleDType::F16 ? doubleToHalf(value) : doubleToBFloat16(value);
    std::memcpy(p, &bits, 2);
    return;
  }
  case BundleDType::F32: {
    float f = static_cast<float>(value);
    std::memcpy(p, &f, 4);
    return;
  }
  case BundleDType::F64: std::memcpy(p, &value, 8); return;
  }
}

/// The bits of `value` in `dtype` (zero-extended).
static uint64_t encodeBundleElement(BundleDType dtype, double value) {
  uint64_t bits = 0;
  storeBundleElement(dtype, &bits, 0, value);
  return bits;
}

//===----------------------------------------------------------------------===//
// The manifest structures
//===----------------------------------------------------------------------===//

uint64_t BundleBuffer::getNumElements() const {
  uint64_t n = 1;
  for (int64_t d : shape)
    n *= static_cast<uint64_t>(d);
  return n;
}

std::string BundleBuffer::getTypeString() const {
  std::string s = getBundleDTypeName(dtype);
  s += "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

const char *mlir::neo::getBufferRoleName(BundleBuffer::Role role) {
  switch (role) {
  case BundleBuffer::Role::Input: return "input";
  case BundleBuffer::Role::Output: return "output";
  case BundleBuffer::Role::Temp: return "temp";
  }
  return "?";
}

size_t BundleArg::getParamSize() const { return kind == Kind::I32 || kind == Kind::F32 ? 4 : 8; }

static const char *getArgKindName(BundleArg::Kind kind) {
  switch (kind) {
  case BundleArg::Kind::Buffer: return "buffer";
  case BundleArg::Kind::I32: return "i32";
  case BundleArg::Kind::I64: return "i64";
  case BundleArg::Kind::F32: return "f32";
  case BundleArg::Kind::F64: return "f64";
  }
  return "?";
}

/// "a buffer", "an i32".
static std::string withArticle(const char *kind) {
  return std::string(kind[0] == 'b' ? "a " : "an ") + kind;
}

std::vector<size_t> BundleManifest::getInputs() const {
  std::vector<size_t> r;
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].role == BundleBuffer::Role::Input)
      r.push_back(i);
  return r;
}

std::vector<size_t> BundleManifest::getOutputs() const {
  std::vector<size_t> r;
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].role == BundleBuffer::Role::Output)
      r.push_back(i);
  return r;
}

//===----------------------------------------------------------------------===//
// JSON: a DOM built from SAX events
//===----------------------------------------------------------------------===//

namespace {

/// Builds a json DOM from SAX events, rejecting duplicate keys and documents
/// nested more deeply than any manifest needs, and keeping the parser's
/// message (with line and column) on a syntax error.
class DomBuilder : public nlohmann::json_sax<json> {
public:
  explicit DomBuilder(json &root) : root(root) {}

  bool null() override { return add(json(nullptr)); }
  bool boolean(bool v) override { return add(json(v)); }
  bool number_integer(number_integer_t v) override { return add(json(v)); }
  bool number_unsigned(number_unsigned_t v) override { return add(json(v)); }
  bool number_float(number_float_t v, const string_t &) override { return add(json(v)); }
  bool string(string_t &v) override { return add(json(std::move(v))); }
  bool binary(binary_t &) override { return failWith("binary values are not JSON"); }
  bool start_object(std::size_t) override { return open(json::object()); }
  bool key(string_t &k) override {
    Frame &f = stack.back();
    if (!f.keys.insert(k).second)
      return failWith(pathOfTop() + "duplicate key '" + k + "'");
    f.pendingKey = k;
    return true;
  }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(json::array()); }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t, const std::string &, const nlohmann::json::exception &e) override {
    // "[json.exception.parse_error.101] parse error at line 2, column 3: ..."
    std::string what = e.what();
    if (size_t end = what.find("] "); what.rfind("[json.", 0) == 0 && end != std::string::npos)
      what = what.substr(end + 2);
    return failWith("not valid JSON: " + what);
  }

  std::string error;

private:
  static constexpr size_t kMaxDepth = 32;

  struct Frame {
    json *value;
    std::set<std::string> keys; // objects
    std::string pendingKey;     // objects: the key of the value being parsed
  };

  bool failWith(const std::string &message) {
    if (error.empty())
      error = message;
    return false;
  }
  /// "buffers[1].alias: " for the innermost open container ("" at the root).
  std::string pathOfTop() const {
    std::string path;
    for (size_t i = 0; i + 1 < stack.size(); ++i) {
      const json &v = *stack[i].value;
      if (v.is_object())
        path += (path.empty() ? "" : ".") + stack[i].pendingKey;
      else
        path += "[" + std::to_string(v.size() - 1) + "]";
    }
    return path.empty() ? path : path + ": ";
  }
  /// Puts `v` where the parser is, returning a pointer to it.
  json *place(json &&v) {
    if (stack.empty()) {
      root = std::move(v);
      return &root;
    }
    json &parent = *stack.back().value;
    if (parent.is_array()) {
      parent.push_back(std::move(v));
      return &parent.back();
    }
    json &slot = parent[stack.back().pendingKey];
    slot = std::move(v);
    return &slot;
  }
  bool add(json &&v) {
    place(std::move(v));
    return true;
  }
  bool open(json &&container) {
    if (stack.size() >= kMaxDepth)
      return failWith("nested more than " + std::to_string(kMaxDepth) + " levels deep");
    json *p = place(std::move(container));
    stack.push_back(Frame{p, {}, {}});
    return true;
  }
  bool close() {
    stack.pop_back();
    return true;
  }

  json &root;
  std::vector<Frame> stack;
};

/// A short description of a JSON value for messages: `a string "abc"`.
std::string describe(const json &v) {
  auto snippet = [](std::string s) {
    if (s.size() > 40)
      s = s.substr(0, 40) + "...";
    return s;
  };
  if (v.is_null())
    return "null";
  if (v.is_boolean())
    return v.get<bool>() ? "true" : "false";
  if (v.is_number_integer())
    return "the integer " + v.dump();
  if (v.is_number_float())
    return "the number " + v.dump();
  if (v.is_string())
    return "the string " + snippet(v.dump());
  if (v.is_array())
    return "an array";
  return "an object";
}

//===----------------------------------------------------------------------===//
// The manifest checker
//===----------------------------------------------------------------------===//

/// Reads and checks a manifest's fields. Each method returns false after
/// recording the first error ("<file>: <path>: <message>").
class ManifestReader {
public:
  explicit ManifestReader(std::string file) : file(std::move(file)) {}

  bool read(const json &root, BundleManifest &m);
  std::string error;

private:
  bool fail(const std::string &path, const std::string &message) {
    if (error.empty())
      error = file + ": " + (path.empty() ? "" : path + ": ") + message;
    return false;
  }
  static std::string join(const std::string &path, const std::string &key) {
    return path.empty() ? key : path + "." + key;
  }
  static std::string at(const std::string &path, size_t i) {
    return path + "[" + std::to_string(i) + "]";
  }

  /// Fails on keys of `object` not in `allowed`.
  bool checkKeys(const json &object, const std::string &path,
                 std::initializer_list<const char *> allowed);
  /// The member `key` of `object`: nullptr (and an error if `required`) when absent.
  const json *member(const json &object, const std::string &path, const char *key, bool required);
  bool getString(const json &v, const std::string &path, std::string &out);
  bool getInteger(const json &v, const std::string &path, int64_t lo, int64_t hi, int64_t &out);
  /// A number, or "inf", "+inf", "-inf" or "nan" (which JSON cannot spell).
  bool getReal(const json &v, const std::string &path, double &out);
  bool getFileName(const json &v, const std::string &path, std::string &out);
  bool getDims(const json &v, const std::string &path, bool isGrid, std::array<uint32_t, 3> &out);

  bool readBuffer(const json &v, const std::string &path, BundleBuffer &b);
  bool checkBuffers(BundleManifest &m);
  bool readLaunch(const json &v, const std::string &path, size_t numBuffers, BundleLaunch &l);
  bool readArg(const json &v, const std::string &path, size_t numBuffers, BundleArg &a);

  std::string file;
};

bool ManifestReader::checkKeys(const json &object, const std::string &path,
                               std::initializer_list<const char *> allowed) {
  for (auto it = object.begin(); it != object.end(); ++it) {
    bool known = false;
    for (const char *k : allowed)
      known |= it.key() == k;
    if (!known) {
      std::string list;
      for (const char *k : allowed)
        list += std::string(list.empty() ? "" : ", ") + k;
      return fail(path, "unknown key '" + it.key() + "' (expected " + list + ")");
    }
  }
  return true;
}

const json *ManifestReader::member(const json &object, const std::string &path, const char *key,
                                   bool required) {
  auto it = object.find(key);
  if (it != object.end())
    return &*it;
  if (required)
    fail(path, std::string("missing key '") + key + "'");
  return nullptr;
}

bool ManifestReader::getString(const json &v, const std::string &path, std::string &out) {
  if (!v.is_string())
    return fail(path, "expected a string, found " + describe(v));
  out = v.get<std::string>();
  return true;
}

bool ManifestReader::getInteger(const json &v, const std::string &path, int64_t lo, int64_t hi,
                                int64_t &out) {
  if (!v.is_number_integer())
    return fail(path, "expected an integer, found " + describe(v));
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(hi) || (lo > 0 && u < static_cast<uint64_t>(lo)))
      return fail(path, std::to_string(u) + " is out of range [" + std::to_string(lo) + ", " +
                            std::to_string(hi) + "]");
    out = static_cast<int64_t>(u);
    return true;
  }
  int64_t i = v.get<int64_t>();
  if (i < lo || i > hi)
    return fail(path, std::to_string(i) + " is out of range [" + std::to_string(lo) + ", " +
                          std::to_string(hi) + "]");
  out = i;
  return true;
}

bool ManifestReader::getReal(const json &v, const std::string &path, double &out) {
  if (v.is_number()) {
    out = v.get<double>();
    return true;
  }
  if (v.is_string()) {
    std::string s = v.get<std::string>();
    if (s == "inf" || s == "+inf") {
      out = INFINITY;
      return true;
    }
    if (s == "-inf") {
      out = -INFINITY;
      return true;
    }
    if (s == "nan") {
      out = NAN;
      return true;
    }
  }
  return fail(path, "expected a number or \"inf\", \"-inf\" or \"nan\", found " + describe(v));
}

bool ManifestReader::getFileName(const json &v, const std::string &path, std::string &out) {
  if (!getString(v, path, out))
    return false;
  bool ok = !out.empty() && out.front() != '/' && out.find('\0') == std::string::npos;
  // No ".." component: the file must lie inside the bundle.
  for (size_t start = 0; ok && start <= out.size();) {
    size_t end = std::min(out.find('/', start), out.size());
    ok = out.compare(start, end - start, "..") != 0;
    start = end + 1;
  }
  if (!ok)
    return fail(path, "'" + out + "' is not a relative path inside the bundle");
  return true;
}

bool ManifestReader::getDims(const json &v, const std::string &path, bool isGrid,
                             std::array<uint32_t, 3> &out) {
  if (!v.is_array() || v.size() != 3)
    return fail(path, "expected an array of 3 positive integers, found " + describe(v) +
                          (v.is_array() ? " of " + std::to_string(v.size()) : ""));
  // The hardware limits of every CUDA device since compute capability 3.0.
  const int64_t gridLimits[3] = {2147483647, 65535, 65535};
  const int64_t blockLimits[3] = {1024, 1024, 64};
  for (size_t i = 0; i < 3; ++i) {
    int64_t d;
    if (!getInteger(v[i], at(path, i), 1, isGrid ? gridLimits[i] : blockLimits[i], d))
      return false;
    out[i] = static_cast<uint32_t>(d);
  }
  if (!isGrid && uint64_t(out[0]) * out[1] * out[2] > 1024)
    return fail(path, std::to_string(out[0]) + "x" + std::to_string(out[1]) + "x" +
                          std::to_string(out[2]) + " = " +
                          std::to_string(uint64_t(out[0]) * out[1] * out[2]) +
                          " threads, more than the 1024 a block may have");
  return true;
}

bool ManifestReader::read(const json &root, BundleManifest &m) {
  if (!root.is_object())
    return fail("", "expected an object, found " + describe(root));
  // The format and version first: a newer bundle fails on its version, not
  // on a field this reader does not know.
  const json *format = member(root, "", "format", true);
  if (!format)
    return false;
  if (!format->is_string() || format->get<std::string>() != "neo-bundle")
    return fail("format", "expected \"neo-bundle\", found " + describe(*format));
  const json *version = member(root, "", "version", true);
  if (!version)
    return false;
  if (!version->is_number_integer())
    return fail("version", "expected an integer, found " + describe(*version));
  if (*version != 1)
    return fail("version", "unsupported bundle format version " + version->dump() +
                               " (this runner reads version 1)");
  if (!checkKeys(root, "",
                 {"format", "version", "function", "chip", "ptx", "cubin", "buffers", "launches"}))
    return false;

  const json *v;
  if (!(v = member(root, "", "function", true)) || !getString(*v, "function", m.function))
    return false;
  if (m.function.empty())
    return fail("function", "the name is empty");
  if (!(v = member(root, "", "chip", true)) || !getString(*v, "chip", m.chip))
    return false;
  {
    // sm_<digits>, optionally followed by one letter (sm_90a).
    size_t n = m.chip.size(), digits = 0;
    while (3 + digits < n && std::isdigit(static_cast<unsigned char>(m.chip[3 + digits])))
      ++digits;
    bool ok = m.chip.rfind("sm_", 0) == 0 && digits > 0 &&
              (3 + digits == n ||
               (3 + digits + 1 == n && std::islower(static_cast<unsigned char>(m.chip.back()))));
    if (!ok)
      return fail("chip", "expected a chip like \"sm_90\", found \"" + m.chip + "\"");
  }
  if (!(v = member(root, "", "ptx", true)) || !getFileName(*v, "ptx", m.ptxFile))
    return false;
  if ((v = member(root, "", "cubin", false)) && !getFileName(*v, "cubin", m.cubinFile))
    return false;

  const json *buffers = member(root, "", "buffers", true);
  if (!buffers)
    return false;
  if (!buffers->is_array())
    return fail("buffers", "expected an array, found " + describe(*buffers));
  for (size_t i = 0; i < buffers->size(); ++i) {
    m.buffers.emplace_back();
    if (!readBuffer((*buffers)[i], at("buffers", i), m.buffers.back()))
      return false;
  }
  if (!checkBuffers(m))
    return false;

  const json *launches = member(root, "", "launches", true);
  if (!launches)
    return false;
  if (!launches->is_array())
    return fail("launches", "expected an array, found " + describe(*launches));
  for (size_t i = 0; i < launches->size(); ++i) {
    m.launches.emplace_back();
    if (!readLaunch((*launches)[i], at("launches", i), m.buffers.size(), m.launches.back()))
      return false;
  }
  return true;
}

bool ManifestReader::readBuffer(const json &v, const std::string &path, BundleBuffer &b) {
  if (!v.is_object())
    return fail(path, "expected an object, found " + describe(v));
  if (!checkKeys(v, path, {"name", "role", "dtype", "shape", "fill", "alias"}))
    return false;
  const json *m;
  if (!(m = member(v, path, "name", true)) || !getString(*m, join(path, "name"), b.name))
    return false;
  // Names become file names (inputs/<name>.npy) and command-line keys.
  if (b.name.empty() || b.name == "." || b.name == ".." ||
      b.name.find_first_of(std::string("/=\0", 3)) != std::string::npos)
    return fail(join(path, "name"),
                "'" + b.name + "' is not a valid buffer name (non-empty, no '/' or '=')");

  std::string role;
  if (!(m = member(v, path, "role", true)) || !getString(*m, join(path, "role"), role))
    return false;
  if (role == "input")
    b.role = BundleBuffer::Role::Input;
  else if (role == "output")
    b.role = BundleBuffer::Role::Output;
  else if (role == "temp")
    b.role = BundleBuffer::Role::Temp;
  else
    return fail(join(path, "role"), "unknown role '" + role + "' (expected input, output or temp)");

  std::string dtype;
  if (!(m = member(v, path, "dtype", true)) || !getString(*m, join(path, "dtype"), dtype))
    return false;
  std::optional<BundleDType> d = parseBundleDType(dtype);
  if (!d)
    return fail(join(path, "dtype"),
                "unknown dtype '" + dtype + "' (expected f16, bf16, f32 or f64)");
  b.dtype = *d;

  const json *shape = member(v, path, "shape", true);
  if (!shape)
    return false;
  std::string shapePath = join(path, "shape");
  if (!shape->is_array())
    return fail(shapePath, "expected an array of non-negative integers, found " + describe(*shape));
  uint64_t bytes = getBundleDTypeSize(b.dtype);
  bool overflow = false;
  for (size_t i = 0; i < shape->size(); ++i) {
    int64_t dim;
    if (!getInteger((*shape)[i], at(shapePath, i), 0, INT64_MAX, dim))
      return false;
    b.shape.push_back(dim);
    overflow |= __builtin_mul_overflow(bytes, static_cast<uint64_t>(dim), &bytes);
  }
  if (overflow)
    return fail(shapePath, b.getTypeString() + " has too many elements (its size "
                                               "overflows 64 bits)");
  if (bytes > kMaxBundleBufferBytes)
    return fail(shapePath, b.getTypeString() + " is " + std::to_string(bytes) +
                               " bytes, more than the 2^40 a buffer may have");

  if ((m = member(v, path, "fill", false))) {
    double fill;
    if (!getReal(*m, join(path, "fill"), fill))
      return false;
    if (b.role == BundleBuffer::Role::Input)
      return fail(join(path, "fill"), "an input has no fill (its data is copied in)");
    uint64_t bits = encodeBundleElement(b.dtype, fill);
    if (std::isfinite(fill) && !std::isfinite(loadBundleElement(b.dtype, &bits, 0)))
      return fail(join(path, "fill"), m->dump() + " overflows " + dtype);
    b.fill = fill;
  }

  if ((m = member(v, path, "alias", false))) {
    std::string aliasPath = join(path, "alias");
    if (!m->is_object())
      return fail(aliasPath, "expected an object {\"buffer\": index, \"offset_bytes\": "
                             "n}, found " +
                                 describe(*m));
    if (!checkKeys(*m, aliasPath, {"buffer", "offset_bytes"}))
      return false;
    const json *target = member(*m, aliasPath, "buffer", true);
    int64_t index;
    if (!target || !getInteger(*target, join(aliasPath, "buffer"), 0, INT64_MAX, index))
      return false;
    b.aliasOf = static_cast<size_t>(index);
    int64_t offset = 0;
    if (const json *o = member(*m, aliasPath, "offset_bytes", false))
      if (!getInteger(*o, join(aliasPath, "offset_bytes"), 0, INT64_MAX, offset))
        return false;
    b.aliasOffsetBytes = static_cast<uint64_t>(offset);
  }
  return true;
}

/// Checks what involves several buffers: unique names, alias targets.
bool ManifestReader::checkBuffers(BundleManifest &m) {
  std::map<std::string, size_t> names;
  for (size_t i = 0; i < m.buffers.size(); ++i) {
    const BundleBuffer &b = m.buffers[i];
    auto [it, inserted] = names.emplace(b.name, i);
    if (!inserted)
      return fail(join(at("buffers", i), "name"), "'" + b.name + "' is also the name of buffers[" +
                                                      std::to_string(it->second) + "]");
  }
  for (size_t i = 0; i < m.buffers.size(); ++i) {
    const BundleBuffer &b = m.buffers[i];
    if (!b.aliasOf)
      continue;
    std::string path = join(at("buffers", i), "alias");
    size_t t = *b.aliasOf;
    if (t >= m.buffers.size())
      return fail(join(path, "buffer"), "index " + std::to_string(t) + " out of range (" +
                                            std::to_string(m.buffers.size()) + " buffers)");
    if (t == i)
      return fail(join(path, "buffer"), "a buffer cannot alias itself");
    const BundleBuffer &target = m.buffers[t];
    if (target.aliasOf)
      return fail(join(path, "buffer"), "buffers[" + std::to_string(t) + "] ('" + target.name +
                                            "') is itself an alias; alias the buffer it views");
    size_t size = getBundleDTypeSize(b.dtype);
    if (b.aliasOffsetBytes % size)
      return fail(join(path, "offset_bytes"),
                  std::to_string(b.aliasOffsetBytes) + " is not a multiple of the " +
                      std::to_string(size) + "-byte " + getBundleDTypeName(b.dtype) + " elements");
    uint64_t end;
    if (__builtin_add_overflow(b.aliasOffsetBytes, b.getNumBytes(), &end) ||
        end > target.getNumBytes())
      return fail(path, "bytes [" + std::to_string(b.aliasOffsetBytes) + ", " +
                            std::to_string(b.aliasOffsetBytes) + " + " +
                            std::to_string(b.getNumBytes()) + ") lie outside the " +
                            std::to_string(target.getNumBytes()) + " bytes of buffers[" +
                            std::to_string(t) + "] ('" + target.name + "')");
  }
  return true;
}

bool ManifestReader::readLaunch(const json &v, const std::string &path, size_t numBuffers,
                                BundleLaunch &l) {
  if (!v.is_object())
    return fail(path, "expected an object, found " + describe(v));
  if (!checkKeys(v, path, {"kernel", "grid", "block", "shared_bytes", "args"}))
    return false;
  const json *m;
  if (!(m = member(v, path, "kernel", true)) || !getString(*m, join(path, "kernel"), l.kernel))
    return false;
  if (l.kernel.empty())
    return fail(join(path, "kernel"), "the name is empty");
  if (!(m = member(v, path, "grid", true)) ||
      !getDims(*m, join(path, "grid"), /*isGrid=*/true, l.grid))
    return false;
  if (!(m = member(v, path, "block", true)) ||
      !getDims(*m, join(path, "block"), /*isGrid=*/false, l.block))
    return false;
  if ((m = member(v, path, "shared_bytes", false))) {
    int64_t shared;
    if (!getInteger(*m, join(path, "shared_bytes"), 0, UINT32_MAX, shared))
      return false;
    l.sharedBytes = static_cast<uint32_t>(shared);
  }
  const json *args = member(v, path, "args", true);
  if (!args)
    return false;
  if (!args->is_array())
    return fail(join(path, "args"), "expected an array, found " + describe(*args));
  for (size_t i = 0; i < args->size(); ++i) {
    l.args.emplace_back();
    if (!readArg((*args)[i], at(join(path, "args"), i), numBuffers, l.args.back()))
      return false;
  }
  return true;
}

bool ManifestReader::readArg(const json &v, const std::string &path, size_t numBuffers,
                             BundleArg &a) {
  const char *expected = "expected one of {\"buffer\": index}, {\"i32\": v}, "
                         "{\"i64\": v}, {\"f32\": v}, {\"f64\": v}";
  if (!v.is_object() || v.size() != 1)
    return fail(path, std::string(expected) + ", found " + describe(v) +
                          (v.is_object() ? " of " + std::to_string(v.size()) + " keys" : ""));
  auto only = v.begin();
  const std::string &kind = only.key();
  const json &value = only.value();
  std::string valuePath = join(path, kind);
  if (kind == "buffer") {
    a.kind = BundleArg::Kind::Buffer;
    int64_t index;
    if (!getInteger(value, valuePath, INT64_MIN, INT64_MAX, index))
      return false;
    if (index < 0 || static_cast<uint64_t>(index) >= numBuffers)
      return fail(valuePath, "index " + std::to_string(index) + " out of range (" +
                                 std::to_string(numBuffers) + " buffers)");
    a.buffer = static_cast<size_t>(index);
    return true;
  }
  if (kind == "i32" || kind == "i64") {
    bool is32 = kind == "i32";
    a.kind = is32 ? BundleArg::Kind::I32 : BundleArg::Kind::I64;
    return getInteger(value, valuePath, is32 ? INT32_MIN : INT64_MIN, is32 ? INT32_MAX : INT64_MAX,
                      a.integer);
  }
  if (kind == "f32" || kind == "f64") {
    bool is32 = kind == "f32";
    a.kind = is32 ? BundleArg::Kind::F32 : BundleArg::Kind::F64;
    if (!getReal(value, valuePath, a.real))
      return false;
    if (is32 && std::isfinite(a.real) && std::fabs(a.real) > FLT_MAX &&
        std::isinf(static_cast<float>(a.real)))
      return fail(valuePath, value.dump() + " overflows f32");
    return true;
  }
  return fail(path, "unknown argument kind '" + kind + "' (" + expected + ")");
}

//===----------------------------------------------------------------------===//
// PTX
//===----------------------------------------------------------------------===//

/// `ptx` with comments replaced by spaces (string literals kept), so that
/// commented-out code is not taken for kernels.
std::string stripPtxComments(const std::string &ptx) {
  std::string out = ptx;
  size_t i = 0, n = ptx.size();
  while (i < n) {
    char c = ptx[i];
    if (c == '"') {
      for (++i; i < n && ptx[i] != '"' && ptx[i] != '\n'; ++i)
        ;
      ++i;
    } else if (c == '/' && i + 1 < n && ptx[i + 1] == '/') {
      for (; i < n && ptx[i] != '\n'; ++i)
        out[i] = ' ';
    } else if (c == '/' && i + 1 < n && ptx[i + 1] == '*') {
      size_t end = ptx.find("*/", i + 2);
      end = end == std::string::npos ? n : end + 2;
      for (; i < end; ++i)
        if (out[i] != '\n')
          out[i] = ' ';
    } else {
      ++i;
    }
  }
  return out;
}

bool isPtxIdentifierChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '%' ||
         c == '.';
}

/// The byte size of one `.param` declaration ("\t.param .u64 .ptr .align 1 x"),
/// or 0 if it does not parse.
size_t parsePtxParamSize(const std::string &decl) {
  static const std::map<std::string, size_t> kTypeSizes = {
      {".b8", 1},    {".u8", 1},     {".s8", 1},  {".b16", 2}, {".u16", 2}, {".s16", 2},
      {".f16", 2},   {".bf16", 2},   {".b32", 4}, {".u32", 4}, {".s32", 4}, {".f32", 4},
      {".f16x2", 4}, {".bf16x2", 4}, {".b64", 8}, {".u64", 8}, {".s64", 8}, {".f64", 8}};
  std::vector<std::string> tokens;
  for (size_t i = 0; i < decl.size();) {
    while (i < decl.size() && std::isspace(static_cast<unsigned char>(decl[i])))
      ++i;
    size_t start = i;
    while (i < decl.size() && !std::isspace(static_cast<unsigned char>(decl[i])))
      ++i;
    if (i > start)
      tokens.push_back(decl.substr(start, i - start));
  }
  if (tokens.size() < 3 || tokens[0] != ".param")
    return 0;
  size_t typeSize = 0, count = 1;
  std::string name;
  for (size_t i = 1; i < tokens.size(); ++i) {
    const std::string &t = tokens[i];
    if (auto it = kTypeSizes.find(t); it != kTypeSizes.end()) {
      if (typeSize)
        return 0;
      typeSize = it->second;
    } else if (t == ".align") {
      ++i; // its value
    } else if (t == ".ptr" || t == ".global" || t == ".const" || t == ".local" || t == ".shared") {
      // Pointer attributes.
    } else if (t[0] == '.') {
      return 0;
    } else {
      if (!name.empty())
        return 0;
      name = t;
    }
  }
  if (!typeSize || name.empty())
    return 0;
  // An array: "x[16]".
  if (size_t open = name.find('['); open != std::string::npos) {
    size_t close = name.find(']', open);
    if (close == std::string::npos || close == open + 1)
      return 0;
    count = 0;
    for (size_t i = open + 1; i < close; ++i) {
      if (!std::isdigit(static_cast<unsigned char>(name[i])) || count > (1u << 20))
        return 0;
      count = count * 10 + (name[i] - '0');
    }
  }
  return typeSize * count;
}

} // namespace

std::vector<PtxKernel> mlir::neo::listPtxKernels(const std::string &source) {
  std::string ptx = stripPtxComments(source);
  std::vector<PtxKernel> kernels;
  const std::string keyword = ".entry";
  for (size_t pos = ptx.find(keyword); pos != std::string::npos;
       pos = ptx.find(keyword, pos + keyword.size())) {
    // A whole token: whitespace (or the start) before, whitespace after.
    size_t after = pos + keyword.size();
    if ((pos > 0 && !std::isspace(static_cast<unsigned char>(ptx[pos - 1]))) ||
        after >= ptx.size() || !std::isspace(static_cast<unsigned char>(ptx[after])))
      continue;
    size_t i = after;
    while (i < ptx.size() && std::isspace(static_cast<unsigned char>(ptx[i])))
      ++i;
    size_t start = i;
    while (i < ptx.size() && isPtxIdentifierChar(ptx[i]))
      ++i;
    if (i == start)
      continue;
    PtxKernel kernel;
    kernel.name = ptx.substr(start, i - start);
    while (i < ptx.size() && std::isspace(static_cast<unsigned char>(ptx[i])))
      ++i;
    if (i < ptx.size() && ptx[i] == '(') {
      size_t close = ptx.find(')', i);
      if (close != std::string::npos) {
        std::string list = ptx.substr(i + 1, close - i - 1);
        kernel.paramsKnown = true;
        bool empty = list.find_first_not_of(" \t\r\n") == std::string::npos;
        for (size_t s = 0; !empty && s <= list.size();) {
          size_t comma = std::min(list.find(',', s), list.size());
          size_t size = parsePtxParamSize(list.substr(s, comma - s));
          if (!size) {
            kernel.paramsKnown = false;
            kernel.paramSizes.clear();
            break;
          }
          kernel.paramSizes.push_back(size);
          s = comma + 1;
        }
      }
    } else {
      // No parameter list at all: a kernel without parameters.
      kernel.paramsKnown = true;
    }
    kernels.push_back(std::move(kernel));
  }
  return kernels;
}

//===----------------------------------------------------------------------===//
// Bundle
//===----------------------------------------------------------------------===//

/// Parses and checks the manifest text; messages start with `name`.
static Status parseManifest(const std::string &name, const std::string &text,
                            BundleManifest &manifest) {
  json root;
  DomBuilder builder(root);
  bool parsed = json::sax_parse(text, &builder);
  if (!parsed || !builder.error.empty())
    return Status::error(Status::Code::Invalid,
                         name + ": " + (builder.error.empty() ? "not valid JSON" : builder.error));
  ManifestReader reader(name);
  if (!reader.read(root, manifest))
    return Status::error(Status::Code::Invalid, reader.error);
  return Status::success();
}

Status Bundle::finish(const std::string &manifestName, const std::string &filePrefix,
                      BundleManifest manifest, std::string ptx, std::string cubin, Bundle &bundle) {
  auto invalid = [](const std::string &message) {
    return Status::error(Status::Code::Invalid, message);
  };
  // The images (named by their paths, when they are files).
  std::string ptxName = filePrefix + manifest.ptxFile;
  std::string cubinName = filePrefix + manifest.cubinFile;
  if (ptx.empty())
    return invalid(ptxName + ": the PTX is empty");
  if (size_t nul = ptx.find('\0'); nul != std::string::npos)
    return invalid(ptxName + ": a NUL byte at offset " + std::to_string(nul) + " (PTX is text)");
  if (!manifest.cubinFile.empty() && cubin.empty())
    return invalid(manifestName + ": cubin: names '" + manifest.cubinFile +
                   "' but no cubin was given");
  if (manifest.cubinFile.empty() && !cubin.empty())
    return invalid(manifestName + ": a cubin was given but the manifest names none");
  if (!cubin.empty() && cubin.compare(0, 4,
                                      "\x7f"
                                      "ELF") != 0)
    return invalid(cubinName + ": not a cubin (no ELF header)");

  // Every launched kernel is in the PTX, with matching parameters.
  std::vector<PtxKernel> kernels = listPtxKernels(ptx);
  for (size_t i = 0; i < manifest.launches.size(); ++i) {
    const BundleLaunch &l = manifest.launches[i];
    std::string path = manifestName + ": launches[" + std::to_string(i) + "]";
    auto it = std::find_if(kernels.begin(), kernels.end(),
                           [&](const PtxKernel &k) { return k.name == l.kernel; });
    if (it == kernels.end()) {
      std::string names;
      for (const PtxKernel &k : kernels)
        names += (names.empty() ? "" : ", ") + k.name;
      return invalid(path + ".kernel: '" + l.kernel + "' is not a kernel of " + manifest.ptxFile +
                     " (" + (names.empty() ? "it has no .entry" : "its kernels: " + names) + ")");
    }
    if (!it->paramsKnown)
      continue;
    if (it->paramSizes.size() != l.args.size())
      return invalid(path + ".args: " + std::to_string(l.args.size()) + " arguments, but kernel '" +
                     l.kernel + "' of " + manifest.ptxFile + " has " +
                     std::to_string(it->paramSizes.size()) + " parameters");
    for (size_t j = 0; j < l.args.size(); ++j)
      if (l.args[j].getParamSize() != it->paramSizes[j])
        return invalid(path + ".args[" + std::to_string(j) +
                       "]: " + withArticle(getArgKindName(l.args[j].kind)) + " (" +
                       std::to_string(l.args[j].getParamSize()) + " bytes), but parameter " +
                       std::to_string(j) + " of kernel '" + l.kernel + "' is " +
                       std::to_string(it->paramSizes[j]) + " bytes");
  }

  bundle.manifest = std::move(manifest);
  bundle.ptx = std::move(ptx);
  bundle.cubin = std::move(cubin);
  bundle.directory.clear();
  return Status::success();
}

Status Bundle::fromMemory(const std::string &manifestJson, std::string ptx, std::string cubin,
                          Bundle &bundle) {
  BundleManifest manifest;
  if (Status s = parseManifest("manifest.json", manifestJson, manifest); !s.ok())
    return s;
  return finish("manifest.json", "", std::move(manifest), std::move(ptx), std::move(cubin), bundle);
}

Status Bundle::loadDirectory(const std::string &directory, Bundle &bundle,
                             const BundleLimits &limits) {
  std::string dir = directory.empty() ? "." : directory;
  std::string prefix = dir.back() == '/' ? dir : dir + "/";
  std::string manifestPath = prefix + "manifest.json";
  std::string text, ptx, cubin;
  if (Status s = readWholeFile(manifestPath, text, limits.maxManifestBytes); !s.ok())
    return s;
  BundleManifest manifest;
  if (Status s = parseManifest(manifestPath, text, manifest); !s.ok())
    return s;
  if (Status s = readWholeFile(prefix + manifest.ptxFile, ptx, limits.maxImageBytes); !s.ok())
    return s;
  if (!manifest.cubinFile.empty())
    if (Status s = readWholeFile(prefix + manifest.cubinFile, cubin, limits.maxImageBytes); !s.ok())
      return s;
  if (Status s = finish(manifestPath, prefix, std::move(manifest), std::move(ptx), std::move(cubin),
                        bundle);
      !s.ok())
    return s;
  bundle.directory = dir;
  return Status::success();
}

//===----------------------------------------------------------------------===//
// BundleExecutor
//===----------------------------------------------------------------------===//

namespace {
/// Static plus dynamic shared memory a block may use without opting in.
constexpr int kDefaultSharedLimit = 48 * 1024;
} // namespace

Status BundleExecutor::create(const Bundle &bundle, std::shared_ptr<CudaDriver> driver,
                              std::unique_ptr<BundleExecutor> &result,
                              const BundleExecutorOptions &options) {
  if (!driver)
    return Status::error(Status::Code::Usage, "BundleExecutor::create: no driver");
  std::unique_ptr<BundleExecutor> exe(new BundleExecutor());
  exe->driver = std::move(driver);
  exe->manifest = bundle.getManifest();
  exe->syncEachLaunch = options.syncEachLaunch;
  if (Status s = exe->driver->makeCurrent(); !s.ok())
    return s;
  if (Status s = exe->loadImage(bundle, options); !s.ok())
    return s;
  if (Status s = exe->prepareKernels(); !s.ok())
    return s;
  if (Status s = exe->allocateBuffers(); !s.ok())
    return s;
  if (Status s = exe->prepareFills(); !s.ok())
    return s;
  if (Status s = exe->driver->createStream(exe->stream); !s.ok())
    return s;
  result = std::move(exe);
  return Status::success();
}

BundleExecutor::~BundleExecutor() {
  if (!driver)
    return;
  (void)driver->makeCurrent();
  if (stream) {
    (void)driver->synchronizeStream(stream);
    driver->destroyStream(stream);
  }
  for (CUdeviceptr p : allocations)
    driver->deallocate(p);
  driver->unloadModule(module);
}

Status BundleExecutor::loadImage(const Bundle &bundle, const BundleExecutorOptions &options) {
  using Image = BundleExecutorOptions::Image;
  const std::string &cubinName = manifest.cubinFile, &ptxName = manifest.ptxFile;
  if (options.image == Image::Cubin && !bundle.hasCubin())
    return Status::error(Status::Code::Usage, "the bundle has no cubin");
  if (options.image != Image::Ptx && bundle.hasCubin()) {
    Status s = driver->loadModule(bundle.getCubin(), module, &jitLog);
    if (s.ok()) {
      loadedCubin = true;
      return s;
    }
    if (options.image == Image::Cubin)
      return s.withPrefix(cubinName + " (" + manifest.chip + "): ");
    imageNote = cubinName + " (" + manifest.chip + ") did not load on " + driver->getChip() + " (" +
                s.message() + "); using " + ptxName;
  }
  return driver->loadModule(bundle.getPtx(), module, &jitLog).withPrefix(ptxName + ": ");
}

Status BundleExecutor::prepareKernels() {
  struct KernelInfo {
    CUfunction function;
    int maxThreads, staticShared, registers;
    uint32_t maxDynamicShared;
  };
  std::map<std::string, KernelInfo> kernels;
  for (size_t i = 0; i < manifest.launches.size(); ++i) {
    const BundleLaunch &l = manifest.launches[i];
    std::string path = "launches[" + std::to_string(i) + "] (kernel '" + l.kernel + "')";
    auto it = kernels.find(l.kernel);
    if (it == kernels.end()) {
      KernelInfo k{};
      if (Status s = driver->getFunction(module, l.kernel, k.function); !s.ok())
        return s.withPrefix(path + ": ");
      for (auto [attribute, value] :
           {std::pair{FunctionAttribute::MaxThreadsPerBlock, &k.maxThreads},
            std::pair{FunctionAttribute::StaticSharedBytes, &k.staticShared},
            std::pair{FunctionAttribute::NumRegisters, &k.registers}})
        if (Status s = driver->getFunctionAttribute(k.function, attribute, *value); !s.ok())
          return s.withPrefix(path + ": ");
      it = kernels.emplace(l.kernel, k).first;
    }
    KernelInfo &k = it->second;
    functions.push_back(k.function);

    uint64_t threads = uint64_t(l.block[0]) * l.block[1] * l.block[2];
    if (threads > static_cast<uint64_t>(k.maxThreads))
      return Status::error(Status::Code::Invalid,
                           path + ": a block of " + std::to_string(threads) +
                               " threads is more than the kernel's limit of " +
                               std::to_string(k.maxThreads) + " (it uses " +
                               std::to_string(k.registers) + " registers per thread)");
    uint64_t shared = uint64_t(k.staticShared) + l.sharedBytes;
    if (shared > static_cast<uint64_t>(driver->getMaxSharedMemoryPerBlockOptin()))
      return Status::error(Status::Code::Invalid,
                           path + ": " + std::to_string(k.staticShared) + " bytes of static and " +
                               std::to_string(l.sharedBytes) +
                               " bytes of dynamic shared memory are more than the " +
                               std::to_string(driver->getMaxSharedMemoryPerBlockOptin()) +
                               " bytes a block may have on " + driver->getDeviceName());
    k.maxDynamicShared = std::max(k.maxDynamicShared, l.sharedBytes);

    // The parameters, when the driver can tell them.
    if (driver->hasParamInfo()) {
      for (size_t j = 0; j <= l.args.size(); ++j) {
        bool exists;
        size_t offset = 0, size = 0;
        if (Status s = driver->getParamInfo(k.function, j, exists, offset, size); !s.ok())
          return s.withPrefix(path + ": ");
        if (j == l.args.size() ? exists : !exists) {
          size_t count = j;
          while (exists) // count the kernel's parameters
            if (Status s = driver->getParamInfo(k.function, ++count, exists, offset, size); !s.ok())
              return s.withPrefix(path + ": ");
          return Status::error(Status::Code::Invalid, path + ": " + std::to_string(l.args.size()) +
                                                          " arguments, but the kernel has " +
                                                          std::to_string(count) + " parameters");
        }
        if (j < l.args.size() && size != l.args[j].getParamSize())
          return Status::error(Status::Code::Invalid,
                               path + ": argument " + std::to_string(j) + " is " +
                                   withArticle(getArgKindName(l.args[j].kind)) + " (" +
                                   std::to_string(l.args[j].getParamSize()) +
                                   " bytes), but the parameter is " + std::to_string(size) +
                                   " bytes");
      }
    }
  }
  // Opt in to more dynamic shared memory where launches need it.
  for (auto &[name, k] : kernels)
    if (k.staticShared + static_cast<int64_t>(k.maxDynamicShared) > kDefaultSharedLimit)
      if (Status s =
              driver->setFunctionAttribute(k.function, FunctionAttribute::MaxDynamicSharedBytes,
                                           static_cast<int>(k.maxDynamicShared));
          !s.ok())
        return s.withPrefix("kernel '" + name + "': ");
  return Status::success();
}

Status BundleExecutor::allocateBuffers() {
  size_t n = manifest.buffers.size();
  allocations.assign(n, 0);
  pointers.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const BundleBuffer &b = manifest.buffers[i];
    if (b.aliasOf || b.getNumBytes() == 0)
      continue;
    std::string what = "buffer '" + b.name + "' (" + b.getTypeString() + "): ";
    if (Status s = driver->allocate(b.getNumBytes(), allocations[i]); !s.ok())
      return s.withPrefix(what);
    pointers[i] = allocations[i];
    // Zeroed, so that runs before any upload see defined data.
    if (Status s = driver->memsetD8(allocations[i], 0, b.getNumBytes()); !s.ok())
      return s.withPrefix(what);
  }
  for (size_t i = 0; i < n; ++i)
    if (const BundleBuffer &b = manifest.buffers[i]; b.aliasOf)
      pointers[i] = pointers[*b.aliasOf] ? pointers[*b.aliasOf] + b.aliasOffsetBytes : 0;

  // The argument values cuLaunchKernel reads: 4 or 8 bytes at the start of
  // each 8-byte slot.
  for (const BundleLaunch &l : manifest.launches) {
    std::vector<uint64_t> values(l.args.size(), 0);
    for (size_t j = 0; j < l.args.size(); ++j) {
      const BundleArg &a = l.args[j];
      void *slot = &values[j];
      switch (a.kind) {
      case BundleArg::Kind::Buffer: {
        CUdeviceptr p = pointers[a.buffer];
        std::memcpy(slot, &p, sizeof(p));
        break;
      }
      case BundleArg::Kind::I32: {
        int32_t v = static_cast<int32_t>(a.integer);
        std::memcpy(slot, &v, 4);
        break;
      }
      case BundleArg::Kind::I64: std::memcpy(slot, &a.integer, 8); break;
      case BundleArg::Kind::F32: {
        float v = static_cast<float>(a.real);
        std::memcpy(slot, &v, 4);
        break;
      }
      case BundleArg::Kind::F64: std::memcpy(slot, &a.real, 8); break;
      }
    }
    argStorage.push_back(std::move(values));
  }
  // Pointers into argStorage, taken once it no longer moves.
  for (std::vector<uint64_t> &values : argStorage) {
    argPointers.emplace_back();
    for (uint64_t &v : values)
      argPointers.back().push_back(&v);
  }
  return Status::success();
}

Status BundleExecutor::prepareFills() {
  const auto &buffers = manifest.buffers;
  const auto &launches = manifest.launches;
  fillsBefore.assign(std::max<size_t>(1, launches.size()), {});
  auto root = [&](size_t b) { return buffers[b].aliasOf ? *buffers[b].aliasOf : b; };
  for (size_t b = 0; b < buffers.size(); ++b) {
    if (!buffers[b].fill || buffers[b].getNumBytes() == 0)
      continue;
    // The first launch that touches the buffer's memory (through it or a view
    // of the same allocation); a buffer no launch uses is filled first.
    size_t first = 0;
    bool found = false;
    for (size_t i = 0; i < launches.size() && !found; ++i)
      for (const BundleArg &a : launches[i].args)
        if (a.kind == BundleArg::Kind::Buffer && root(a.buffer) == root(b)) {
          first = i;
          found = true;
          break;
        }
    fillsBefore[first].push_back(Fill{b,
                                      static_cast<unsigned>(getBundleDTypeSize(buffers[b].dtype)),
                                      encodeBundleElement(buffers[b].dtype, *buffers[b].fill)});
  }
  return Status::success();
}

Status BundleExecutor::enqueueFill(const Fill &fill) {
  const BundleBuffer &b = manifest.buffers[fill.buffer];
  CUdeviceptr p = pointers[fill.buffer];
  size_t count = b.getNumElements();
  Status s;
  if (fill.elementBytes == 2) {
    s = driver->memsetD16(p, static_cast<uint16_t>(fill.bits), count, stream);
  } else if (fill.elementBytes == 4) {
    s = driver->memsetD32(p, static_cast<uint32_t>(fill.bits), count, stream);
  } else {
    uint32_t lo = static_cast<uint32_t>(fill.bits);
    uint32_t hi = static_cast<uint32_t>(fill.bits >> 32);
    if (lo == hi) {
      s = driver->memsetD32(p, lo, 2 * count, stream);
    } else {
      // Two strided 4-byte fills: the low words, then the high words.
      s = driver->memsetD2D32(p, 8, lo, count, stream);
      if (s.ok())
        s = driver->memsetD2D32(p + 4, 8, hi, count, stream);
    }
  }
  return s.withPrefix("fill of buffer '" + b.name + "': ");
}

Status BundleExecutor::enqueueRun() {
  const auto &launches = manifest.launches;
  for (size_t i = 0; i < fillsBefore.size(); ++i) {
    for (const Fill &f : fillsBefore[i])
      if (Status s = enqueueFill(f); !s.ok())
        return s;
    if (i >= launches.size())
      break;
    const BundleLaunch &l = launches[i];
    std::string path = "launches[" + std::to_string(i) + "] (kernel '" + l.kernel + "')";
    if (Status s = driver->launchKernel(functions[i], l.grid, l.block, l.sharedBytes, stream,
                                        argPointers[i].data());
        !s.ok())
      return s.withPrefix(path + ": ");
    if (syncEachLaunch)
      if (Status s = driver->synchronizeStream(stream); !s.ok())
        return s.withPrefix(path + " failed: ");
  }
  return Status::success();
}

Status BundleExecutor::uploadInputs(const std::vector<const void *> &inputs) {
  std::vector<size_t> indices = manifest.getInputs();
  if (inputs.size() != indices.size())
    return Status::error(Status::Code::Usage, "'" + manifest.function + "' takes " +
                                                  std::to_string(indices.size()) + " inputs, got " +
                                                  std::to_string(inputs.size()));
  if (Status s = driver->makeCurrent(); !s.ok())
    return s;
  for (size_t i = 0; i < indices.size(); ++i) {
    const BundleBuffer &b = manifest.buffers[indices[i]];
    if (b.getNumBytes() == 0)
      continue;
    if (!inputs[i])
      return Status::error(Status::Code::Usage, "input '" + b.name + "' is null");
    if (Status s = driver->copyToDevice(pointers[indices[i]], inputs[i], b.getNumBytes(), stream);
        !s.ok())
      return s.withPrefix("input '" + b.name + "': ");
  }
  // Wait, so that callers may reuse their buffers (pinned ones are copied
  // asynchronously).
  return driver->synchronizeStream(stream).withPrefix("copying the inputs: ");
}

Status BundleExecutor::execute() {
  if (Status s = driver->makeCurrent(); !s.ok())
    return s;
  if (Status s = enqueueRun(); !s.ok())
    return s;
  return driver->synchronizeStream(stream).withPrefix("running '" + manifest.function + "': ");
}

Status BundleExecutor::downloadOutputs(const std::vector<void *> &outputs) {
  std::vector<size_t> indices = manifest.getOutputs();
  if (outputs.size() != indices.size())
    return Status::error(Status::Code::Usage,
                         "'" + manifest.function + "' has " + std::to_string(indices.size()) +
                             " outputs, got " + std::to_string(outputs.size()) + " output buffers");
  if (Status s = driver->makeCurrent(); !s.ok())
    return s;
  for (size_t i = 0; i < indices.size(); ++i) {
    const BundleBuffer &b = manifest.buffers[indices[i]];
    if (b.getNumBytes() == 0)
      continue;
    if (!outputs[i])
      return Status::error(Status::Code::Usage, "output '" + b.name + "' is null");
    if (Status s = driver->copyToHost(outputs[i], pointers[indices[i]], b.getNumBytes(), stream);
        !s.ok())
      return s.withPrefix("output '" + b.name + "': ");
  }
  return driver->synchronizeStream(stream).withPrefix("copying the outputs: ");
}

Status BundleExecutor::run(const std::vector<const void *> &inputs,
                           const std::vector<void *> &outputs) {
  // Check both counts before doing anything.
  if (outputs.size() != manifest.getOutputs().size())
    return downloadOutputs(outputs);
  if (Status s = uploadInputs(inputs); !s.ok())
    return s;
  if (Status s = execute(); !s.ok())
    return s;
  return downloadOutputs(outputs);
}

Status BundleExecutor::time(unsigned repeat, TimingResult &result) {
  if (repeat == 0)
    return Status::error(Status::Code::Usage, "time: repeat must be at least 1");
  if (Status s = execute(); !s.ok()) // warm-up (and makeCurrent)
    return s;
  std::vector<CUevent> events(repeat + 1, nullptr);
  auto destroyEvents = [&] {
    for (CUevent e : events)
      driver->destroyEvent(e);
  };
  Status s;
  for (CUevent &e : events)
    if (!(s = driver->createEvent(e)).ok())
      break;
  if (s.ok())
    s = driver->recordEvent(events[0], stream);
  for (unsigned r = 0; s.ok() && r < repeat; ++r) {
    s = enqueueRun();
    if (s.ok())
      s = driver->recordEvent(events[r + 1], stream);
  }
  if (s.ok())
    s = driver->synchronizeEvent(events[repeat])
            .withPrefix("running '" + manifest.function + "': ");
  std::vector<double> times;
  for (unsigned r = 0; s.ok() && r < repeat; ++r) {
    float ms = 0;
    s = driver->elapsedMilliseconds(events[r], events[r + 1], ms);
    times.push_back(ms);
  }
  destroyEvents();
  if (!s.ok())
    return s;
  std::sort(times.begin(), times.end());
  result.runs = repeat;
  result.minMs = times.front();
  result.maxMs = times.back();
  result.medianMs = times[times.size() / 2];
  double sum = 0;
  for (double t : times)
    sum += t;
  result.meanMs = sum / times.size();
  return Status::success();
}
