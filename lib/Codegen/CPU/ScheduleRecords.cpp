//===- ScheduleRecords.cpp - neo-tile's schedules as tuning records -------===//
#include "neo/Codegen/CPU/ScheduleRecords.h"
#include "neo/Codegen/CPU/Schedule.h"
#include "neo/Dialect/Neo/IR/NeoOps.h"
#include "neo/Tuning/Target.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::neo;

namespace {
/// Prints the structure of an op so that equal ops print equally wherever
/// they are: values are numbered locally, types of operands by shape and
/// element type only (not layout), and neo.* attributes are left out.
struct SignaturePrinter {
  explicit SignaturePrinter(llvm::raw_ostream &os) : os(os) {}
  llvm::raw_ostream &os;
  DenseMap<Value, unsigned> ids;

  void printShape(Type type) {
    if (auto shaped = dyn_cast<ShapedType>(type)) {
      os << (isa<MemRefType, RankedTensorType>(type) ? "[" : "?[");
      if (shaped.hasRank())
        llvm::interleave(shaped.getShape(), os, "x");
      os << "]" << shaped.getElementType();
      return;
    }
    os << type;
  }
  void printAttrs(Operation *op) {
    os << "{";
    for (NamedAttribute a : op->getAttrs()) {
      if (a.getName().strref().starts_with("neo."))
        continue;
      os << a.getName().strref() << "=" << a.getValue() << ",";
    }
    os << "}";
  }
  void printValue(Value v) {
    auto it = ids.find(v);
    if (it != ids.end()) {
      os << "%" << it->second;
      return;
    }
    os << "ext:";
    printShape(v.getType());
  }
  void define(Value v) { ids.try_emplace(v, ids.size()); }
  void printRegion(Region &region) {
    os << "(";
    for (Block &block : region) {
      os << "^";
      for (BlockArgument arg : block.getArguments()) {
        define(arg);
        printShape(arg.getType());
        os << ",";
      }
      os << ":";
      for (Operation &op : block)
        printOp(&op);
    }
    os << ")";
  }
  void printOp(Operation *op) {
    os << op->getName() << "(";
    for (Value v : op->getOperands()) {
      printValue(v);
      os << ",";
    }
    os << ")";
    printAttrs(op);
    for (Region &region : op->getRegions())
      printRegion(region);
    os << "->";
    for (Value r : op->getResults()) {
      define(r);
      printShape(r.getType());
      os << ",";
    }
    os << ";";
  }
};
} // namespace

std::string mlir::neo::genericKey(linalg::LinalgOp op) {
  std::string signature;
  {
    llvm::raw_string_ostream os(signature);
    SignaturePrinter printer(os);
    os << op->getName() << "(";
    for (Value v : op->getOperands()) {
      printer.printShape(v.getType());
      os << ",";
    }
    os << ")";
    printer.printAttrs(op);
    for (Region &region : op->getRegions())
      printer.printRegion(region);
  }
  std::array<uint8_t, 32> digest = llvm::SHA256::hash(llvm::ArrayRef<uint8_t>(
      reinterpret_cast<const uint8_t *>(signature.data()), signature.size()));
  std::string key;
  llvm::raw_string_ostream os(key);
  Type elem;
  if (op.getNumDpsInits() > 0)
    elem = getElementTypeOrSelf(op.getDpsInitOperand(0)->get().getType());
  os << "generic " << elem << " " << op->getName() << " loops=";
  llvm::interleave(op.getStaticLoopRanges(), os, "x");
  os << " iterators=";
  for (utils::IteratorType t : op.getIteratorTypesArray())
    os << (t == utils::IteratorType::parallel ? "p" : "r");
  os << " sig=" << llvm::toHex(llvm::ArrayRef<uint8_t>(digest).take_front(8), /*LowerCase=*/true);
  return key;
}

std::optional<TunableOp> mlir::neo::analyzeTunable(linalg::LinalgOp op, bool implicitGemm) {
  if (!op.hasPureBufferSemantics())
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ranges.empty() || llvm::any_of(ranges, ShapedType::isDynamic))
    return std::nullopt;
  TunableOp tunable;
  FailureOr<GemmProblem> gemm = analyzeGemm(op);
  if (succeeded(gemm) && (gemm->elementType == "f32" || gemm->elementType == "f64") &&
      (gemm->inputType.empty() || gemm->inputType == gemm->elementType)) {
    tunable.kind = TunableOp::Kind::Gemm;
    tunable.gemm = *gemm;
    tunable.key = gemm->key();
    return tunable;
  }
  std::string generic = genericKey(op);
  // A convolution (or another bilinear generic) runs as an implicit GEMM
  // with a cpu_gemm schedule: tuned and recorded as one. (Recorded as a
  // generic, its tuned "schedule" was the generic loop nest, 6-8x slower
  // than the implicit GEMM that runs without a record.)
  if (implicitGemm && op.getNumDpsInits() == 1) {
    Type elem = getElementTypeOrSelf(op.getDpsInitOperand(0)->get().getType());
    FailureOr<GemmProblem> implicit = failure();
    if (elem.isF32() || elem.isF64())
      implicit = analyzeCpuImplicitGemm(op);
    if (succeeded(implicit)) {
      tunable.kind = TunableOp::Kind::Gemm;
      tunable.gemm = *implicit;
      tunable.key = implicit->key() + generic.substr(generic.rfind(" sig="));
      return tunable;
    }
  }
  tunable.kind = TunableOp::Kind::Generic;
  tunable.key = generic;
  tuning::GenericShape &shape = tunable.generic;
  shape.ranges.assign(ranges.begin(), ranges.end());
  for (utils::IteratorType t : op.getIteratorTypesArray())
    shape.parallel.push_back(t == utils::IteratorType::parallel);
  Type elem = op.getNumDpsInits() > 0
                  ? getElementTypeOrSelf(op.getDpsInitOperand(0)->get().getType())
                  : Type();
  int64_t bits = elem && elem.isIntOrFloat() ? elem.getIntOrFloatBitWidth() : 32;
  shape.elementBytes = std::max<int64_t>(1, bits / 8);
  // The host's (neo-tune sets the target's when given another cpu).
  shape.nativeLanes = tuning::hostCpuTarget().lanes(shape.elementBytes);
  shape.vectorizable = succeeded(linalg::vectorizeOpPrecondition(op));
  return tunable;
}

tuning::ScheduleFields mlir::neo::toFields(const GemmSchedule &s) {
  return {{"mr", s.mr}, {"nr", s.nr}, {"mc", s.mc},
          {"nc", s.nc}, {"kc", s.kc}, {"threads", s.threads}};
}

tuning::ScheduleFields mlir::neo::toFields(const GenericSchedule &s) {
  return {{"vector", s.vectorSize}, {"threads", s.threads}};
}

/// Copies each of `names` from `fields` into `out`; every one must be there
/// and no other.
static bool readFields(const tuning::ScheduleFields &fields,
                       ArrayRef<std::pair<const char *, int64_t *>> names, std::string &error) {
  for (auto [name, out] : names) {
    auto it = fields.find(name);
    if (it == fields.end()) {
      error = std::string("missing schedule field '") + name + "'";
      return false;
    }
    *out = it->second;
  }
  for (const auto &field : fields) {
    if (!llvm::any_of(names, [&](auto n) { return field.first == n.first; })) {
      error = "unknown schedule field '" + field.first + "'";
      return false;
    }
  }
  return true;
}

FailureOr<GemmSchedule> mlir::neo::gemmScheduleFromFields(const tuning::ScheduleFields &fields,
                                                          int64_t vectorWidth, std::string &error) {
  GemmSchedule s;
  if (!readFields(fields,
                  {{"mr", &s.mr},
                   {"nr", &s.nr},
                   {"mc", &s.mc},
                   {"nc", &s.nc},
                   {"kc", &s.kc},
                   {"threads", &s.threads}},
                  error))
    return failure();
  error = schedules::checkCpuGemm(s, vectorWidth);
  if (!error.empty())
    return failure();
  return s;
}

FailureOr<GenericSchedule>
mlir::neo::genericScheduleFromFields(const tuning::ScheduleFields &fields, std::string &error) {
  GenericSchedule s;
  if (!readFields(fields, {{"vector", &s.vectorSize}, {"threads", &s.threads}}, error))
    return failure();
  error = schedules::checkCpuGeneric({s.vectorSize, s.threads});
  if (!error.empty())
    return failure();
  return s;
}

Attribute mlir::neo::scheduleAttr(MLIRContext *ctx, const GemmSchedule &schedule) {
  return CpuGemmScheduleAttr::get(ctx, schedule);
}

Attribute mlir::neo::scheduleAttr(MLIRContext *ctx, const GenericSchedule &schedule) {
  return CpuGenericScheduleAttr::get(ctx, schedule.vectorSize, schedule.threads);
}

std::string mlir::neo::validateScheduleRecord(const tuning::Record &record) {
  StringRef key = record.key;
  std::string error;
  if (key.starts_with("gemm ")) {
    // "gemm <type> ...": the generator's vectors hold 16 f32 or 8 f64.
    StringRef type = key.drop_front(5).split(' ').first;
    if (type != "f32" && type != "f64")
      return "the CPU GEMM generator has no schedule for element type '" + type.str() + "'";
    if (failed(gemmScheduleFromFields(record.schedule, type == "f32" ? 16 : 8, error)))
      return error;
    return "";
  }
  if (key.starts_with("generic ")) {
    if (failed(genericScheduleFromFields(record.schedule, error)))
      return error;
    return "";
  }
  return "the key is neither a 'gemm' nor a 'generic' signature";
}
