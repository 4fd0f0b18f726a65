//===- CostModels.cpp - Analytical cost models of the CPU schedules -------===//
#include "neo/Tuning/CostModels.h"
#include "neo/Codegen/Schedules/ScheduleRules.h"

#include <algorithm>
#include <cmath>

using namespace mlir::neo::tuning;
namespace schedules = mlir::neo::schedules;

static int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t roundUp(int64_t a, int64_t b) { return ceilDiv(a, b) * b; }

/// 1 when `used` fits in `capacity`, growing with the overflow (at most 1 + scale * 2).
static double overflowPenalty(double used, double capacity, double scale) {
  if (used <= capacity)
    return 1;
  return 1 + scale * std::min(used / capacity - 1, 2.0);
}

static std::vector<int64_t> threadValues(int64_t maxThreads) {
  std::vector<int64_t> values;
  for (int64_t t = 1; t <= std::max<int64_t>(maxThreads, 1); ++t)
    values.push_back(t);
  return values;
}

/// Nominal clock of the models (only the order of predictions matters).
static constexpr double kHz = 3e9;

//===----------------------------------------------------------------------===//
// GEMM
//===----------------------------------------------------------------------===//

// Parameter order.
enum { kMR, kNV, kMCTiles, kNCTiles, kKC, kThreads };

/// The rule library's view of schedule fields (a missing field reads 0).
static schedules::CpuGemmParams toParams(const ScheduleFields &s) {
  auto get = [&](const char *name) -> int64_t {
    auto it = s.find(name);
    return it == s.end() ? 0 : it->second;
  };
  schedules::CpuGemmParams p;
  p.mr = get("mr"), p.nr = get("nr"), p.mc = get("mc"), p.nc = get("nc"), p.kc = get("kc");
  p.threads = get("threads");
  return p;
}

GemmCostModel::GemmCostModel(GemmShape shape, HostCaches caches, int64_t maxThreads,
                             FieldsValidator validate)
    : shape(shape), caches(caches), maxThreads(std::max<int64_t>(maxThreads, 1)),
      validate(std::move(validate)) {
  params = {
      {"mr", {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 20, 24, 28}},
      {"nr/V", {1, 2, 3, 4, 5, 6, 8}},
      {"mc/mr", {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128}},
      {"nc/nr", {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128}},
      {"kc", {16, 32, 48, 64, 96, 128, 160, 192, 256, 320, 384, 512, 768, 1024, 1536, 2048}},
      {"threads", threadValues(this->maxThreads)},
  };
}

ScheduleFields GemmCostModel::toSchedule(const Point &p) const {
  int64_t nr = p[kNV] * shape.vectorWidth;
  return {{"mr", p[kMR]},           {"nr", nr},     {"mc", p[kMR] * p[kMCTiles]},
          {"nc", nr * p[kNCTiles]}, {"kc", p[kKC]}, {"threads", p[kThreads]}};
}

std::optional<Point> GemmCostModel::fromSchedule(const ScheduleFields &s) const {
  auto get = [&](const char *name) -> int64_t {
    auto it = s.find(name);
    return it == s.end() ? 0 : it->second;
  };
  int64_t mr = get("mr"), nr = get("nr"), mc = get("mc"), nc = get("nc"), kc = get("kc"),
          threads = get("threads");
  int64_t v = shape.vectorWidth;
  if (mr < 1 || nr < v || nr % v || mc < mr || mc % mr || nc < nr || nc % nr || kc < 1 ||
      threads < 1)
    return std::nullopt;
  return Point{mr, nr / v, mc / mr, nc / nr, kc, threads};
}

std::string GemmCostModel::check(const Point &p) const {
  if (p.size() != params.size())
    return "wrong number of parameters";
  if (p[kMR] < 1 || p[kNV] < 1 || p[kMCTiles] < 1 || p[kNCTiles] < 1 || p[kKC] < 1)
    return "parameters must be positive";
  if (p[kThreads] < 1 || p[kThreads] > maxThreads)
    return "threads must be between 1 and " + std::to_string(maxThreads);
  // Bounded before the products of toSchedule are formed.
  if (p[kMR] > 32 || p[kNV] > 8 || p[kMCTiles] > schedules::kMaxCacheBlockElements ||
      p[kNCTiles] > schedules::kMaxCacheBlockElements)
    return "the register tile must have 1 <= mr <= 32 and at most 8 vectors, and cache blocks "
           "at most " +
           std::to_string(schedules::kMaxCacheBlockElements) + " tiles";
  ScheduleFields s = toSchedule(p);
  if (std::string error = schedules::checkCpuGemm(toParams(s), shape.vectorWidth); !error.empty())
    return error;
  return validate ? validate(s) : "";
}

GemmCostModel::Blocks GemmCostModel::effectiveBlocks(const Point &p) const {
  // As the generators clamp them (the one rule of NeoScheduleRules).
  Blocks b;
  schedules::CpuGemmParams params = toParams(toSchedule(p));
  b.mr = params.mr;
  b.nr = params.nr;
  schedules::CpuGemmBlocks blocks =
      schedules::clampCpuGemmBlocks(params, shape.batch, shape.m, shape.n, shape.k);
  b.mc = blocks.mc;
  b.kc = blocks.kc;
  b.nc = blocks.nc;
  int64_t threads = p[kThreads];
  int64_t tasks = shape.batch * blocks.numJc;
  b.parallel = threads > 1 && tasks > 1;
  b.workers = b.parallel ? std::min({threads, caches.cores, tasks}) : 1;
  return b;
}

Point GemmCostModel::canonicalize(const Point &p) const {
  Blocks b = effectiveBlocks(p);
  return {b.mr, b.nr, b.mc, b.nc, b.kc, b.parallel ? 1 : 0};
}

double GemmCostModel::predict(const Point &p) const {
  Blocks b = effectiveBlocks(p);
  double E = double(shape.elementBytes), V = double(shape.vectorWidth);
  double B = double(shape.batch), M = double(shape.m), N = double(shape.n), K = double(shape.k);
  double nv = double(p[kNV]), mr = double(b.mr), nr = double(b.nr);
  double Mp = double(roundUp(shape.m, b.mr)), Np = double(roundUp(shape.n, b.nr));

  // Micro-kernel, per k step: mr*nv FMAs (each generator vector is
  // V/nativeLanes native ones) on the FMA ports, nv + mr loads on two ports,
  // and each accumulator's chain of FMAs (latency 4).
  double split = std::max(1.0, V / double(std::max<int64_t>(1, shape.nativeLanes)));
  double fmas = mr * nv;
  double nativeFmas = fmas * split, nativeB = nv * split;
  double ports = double(std::max<int64_t>(1, shape.fmaUnits));
  double perK = std::max({nativeFmas / ports, (nativeB + mr) / 2, 4.0}) + 0.5;
  // Accumulators, B vectors and the A broadcast beyond the registers spill
  // (measured on AVX2: an 8x16 f32 tile, 16 ymm accumulators, runs 2.8x
  // slower than 6x16).
  if (nativeFmas + nativeB + 1 > double(shape.vectorRegisters))
    perK *= 2.5;
  // Cache fit: B and A micro-panels in L1, the packed A block in L2, the
  // packed B block (one per worker) in L3.
  double kc = double(b.kc);
  perK *= overflowPenalty(kc * (nr + mr) * E, 0.8 * double(caches.l1), 0.3);
  perK *= overflowPenalty((double(b.mc) + nr) * kc * E, 0.7 * double(caches.l2), 0.4);
  perK *= overflowPenalty(kc * double(b.nc) * E * double(b.workers), 0.5 * double(caches.l3), 0.3);
  double tiles = B * (Mp / mr) * (Np / nr);
  double kBlocks = std::ceil(K / kc);
  double kernel = tiles * K * perK;
  // Accumulators loaded and stored once per tile and k block, call overhead.
  double calls = tiles * kBlocks * (2 * fmas + 15);
  // Packing: B once per (batch, k block) with vectors (or element by
  // element), A once per N block.
  double numJc = std::ceil(N / double(b.nc));
  double packB = B * K * N * (shape.bRowsContiguous ? 2 / V : 1.5);
  double packA = B * numJc * M * K * 1.0;
  // Partial tiles go through a scratch tile.
  double edgeRows = shape.m % b.mr ? 1 : 0, edgeCols = shape.n % b.nr ? 1 : 0;
  double edgeTiles = B * kBlocks * (edgeRows * (Np / nr) + edgeCols * (Mp / mr));
  double edges = edgeTiles * 3 * mr * nr * 0.5;

  double serial = kernel + calls + packB + packA + edges;
  double cycles = serial;
  if (b.parallel) {
    double tasks = B * numJc;
    double rounds = std::ceil(tasks / double(b.workers));
    cycles = serial / tasks * rounds + 5e4; // fork and join
    if (p[kThreads] > caches.cores)
      cycles *= 1.2;
  }
  return cycles / kHz;
}

//===----------------------------------------------------------------------===//
// Generic
//===----------------------------------------------------------------------===//

enum { kVector, kGenericThreads };

GenericCostModel::GenericCostModel(GenericShape shape, HostCaches caches, int64_t maxThreads,
                                   FieldsValidator validate)
    : shape(std::move(shape)), caches(caches), maxThreads(std::max<int64_t>(maxThreads, 1)),
      validate(std::move(validate)) {
  params = {{"vector", {1, 2, 4, 8, 16, 32, 64}}, {"threads", threadValues(this->maxThreads)}};
  if (!this->shape.vectorizable)
    params[kVector].values = {16};
}

ScheduleFields GenericCostModel::toSchedule(const Point &p) const {
  return {{"vector", p[kVector]}, {"threads", p[kGenericThreads]}};
}

std::optional<Point> GenericCostModel::fromSchedule(const ScheduleFields &s) const {
  auto v = s.find("vector"), t = s.find("threads");
  if (v == s.end() || t == s.end())
    return std::nullopt;
  return Point{v->second, t->second};
}

std::string GenericCostModel::check(const Point &p) const {
  if (p.size() != params.size())
    return "wrong number of parameters";
  if (std::string error = schedules::checkCpuGeneric({p[kVector], p[kGenericThreads]});
      !error.empty())
    return error;
  if (p[kGenericThreads] > maxThreads)
    return "threads must be between 1 and " + std::to_string(maxThreads);
  return validate ? validate(toSchedule(p)) : "";
}

/// The extent of the first parallel loop (1 if none).
static int64_t firstParallelExtent(const GenericShape &shape) {
  for (size_t i = 0; i < shape.ranges.size(); ++i)
    if (shape.parallel[i])
      return shape.ranges[i];
  return 1;
}

Point GenericCostModel::canonicalize(const Point &p) const {
  int64_t inner = shape.ranges.empty() ? 1 : shape.ranges.back();
  int64_t vector = shape.vectorizable ? std::min(p[kVector], inner) : 0;
  int64_t threads = firstParallelExtent(shape) >= 2 ? p[kGenericThreads] : 1;
  return {vector, threads};
}

double GenericCostModel::predict(const Point &p) const {
  double points = 1;
  for (int64_t r : shape.ranges)
    points *= double(r);
  double inner = shape.ranges.empty() ? 1 : double(shape.ranges.back());
  double rows = points / inner;
  double cycles;
  if (shape.vectorizable) {
    double v = double(std::min<int64_t>(p[kVector], int64_t(inner)));
    double lanes = double(shape.nativeLanes);
    double chunks = std::ceil(inner / v);
    // Vectors wider than the hardware's are split; narrower ones waste lanes.
    double perChunk = std::ceil(v / lanes) * (v > 2 * lanes ? 1.1 : 1.0) + 2;
    double tail = std::fmod(inner, v) != 0 ? 4 : 0;
    cycles = rows * (chunks * perChunk + tail);
  } else {
    cycles = points * 2;
  }
  // Bytes moved bound it from below (a rough 8 bytes per cycle).
  cycles = std::max(cycles, points * double(shape.elementBytes) * 2 / 8);
  int64_t extent = firstParallelExtent(shape);
  int64_t threads = p[kGenericThreads];
  if (threads > 1 && extent >= 2) {
    double pieces = double(std::min<int64_t>(threads, extent));
    double workers = std::min<double>(pieces, double(caches.cores));
    double perPiece = std::ceil(double(extent) / double(threads)) / double(extent);
    cycles = cycles * perPiece * std::ceil(pieces / workers) + 5e4; // fork and join
  }
  return cycles / kHz;
}
