//===- Target.cpp - What tuning records are specific to -------------------===//
#include "neo/Tuning/Target.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/TargetParser/X86TargetParser.h"

#include <algorithm>
#include <fstream>
#include <thread>

using namespace mlir::neo;

std::string tuning::hostTarget(int64_t threads) {
  llvm::Triple triple(llvm::sys::getProcessTriple());
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  auto has = [&](const char *f) { return features.lookup(f); };
  std::string isa = "generic";
  if (triple.isX86()) {
    if (has("avx512f"))
      isa = "avx512";
    else if (has("avx2") && has("fma"))
      isa = "avx2";
    else if (has("avx"))
      isa = "avx";
    else if (has("sse4.2"))
      isa = "sse4";
  } else if (triple.isAArch64()) {
    isa = has("sve") ? "sve" : "neon";
  }
  return triple.getArchName().str() + "-" + isa + "-" + llvm::sys::getHostCPUName().str() + "/" +
         std::to_string(threads) + "threads";
}

/// A sysfs cache size such as "48K" or "2048K" in bytes (0 if unreadable).
static int64_t readCacheSize(const std::string &dir) {
  std::ifstream in(dir + "/size");
  std::string text;
  if (!(in >> text) || text.empty())
    return 0;
  int64_t scale = 1;
  char unit = text.back();
  if (unit == 'K' || unit == 'M' || unit == 'G') {
    scale = unit == 'K' ? 1 << 10 : unit == 'M' ? 1 << 20 : 1 << 30;
    text.pop_back();
  }
  int64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      return 0;
    value = value * 10 + (c - '0');
  }
  return value * scale;
}

tuning::HostCaches tuning::hostCaches() {
  HostCaches caches;
  caches.cores = std::max(1u, std::thread::hardware_concurrency());
  for (int index = 0; index < 8; ++index) {
    std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index);
    std::ifstream levelFile(dir + "/level"), typeFile(dir + "/type");
    int level = 0;
    std::string type;
    if (!(levelFile >> level) || !(typeFile >> type))
      break;
    if (type == "Instruction")
      continue;
    int64_t size = readCacheSize(dir);
    if (size <= 0)
      continue;
    if (level == 1)
      caches.l1 = size;
    else if (level == 2)
      caches.l2 = size;
    else if (level == 3)
      caches.l3 = size;
  }
  return caches;
}

/// The widest vector ISA of a feature set.
static void classify(tuning::CpuTarget &t, const llvm::StringMap<bool> &features, bool x86) {
  auto has = [&](const char *f) { return features.lookup(f); };
  t.fmaUnits = 2;
  if (x86) {
    if (has("avx512f")) {
      t.isa = "avx512", t.vectorBytes = 64, t.vectorRegisters = 32;
    } else if (has("avx2") && has("fma")) {
      t.isa = "avx2", t.vectorBytes = 32, t.vectorRegisters = 16;
    } else if (has("avx")) {
      t.isa = "avx", t.vectorBytes = 32, t.vectorRegisters = 16, t.fmaUnits = 0;
    } else if (has("sse4.2")) {
      t.isa = "sse4", t.vectorBytes = 16, t.vectorRegisters = 16, t.fmaUnits = 0;
    } else {
      t.isa = "generic", t.vectorBytes = 16, t.vectorRegisters = 16, t.fmaUnits = 0;
    }
  } else if (t.arch == "aarch64") {
    t.isa = has("sve") ? "sve" : "neon";
    t.vectorBytes = 16, t.vectorRegisters = 32;
  }
}

/// The features of an x86 CPU, with the ones they imply (LLVM lists
/// "avx512vl" for x86-64-v4, not "avx512f").
static llvm::StringMap<bool> cpuFeatures(llvm::StringRef cpu) {
  llvm::SmallVector<llvm::StringRef, 64> enabled;
  llvm::X86::getFeaturesForCPU(cpu, enabled, /*NeedPlus=*/false);
  llvm::StringMap<bool> features;
  for (llvm::StringRef f : enabled) {
    features[f] = true;
    llvm::X86::updateImpliedFeatures(f, /*Enabled=*/true, features);
  }
  return features;
}

const tuning::CpuTarget &tuning::hostCpuTarget() {
  static const CpuTarget host = [] {
    CpuTarget t;
    llvm::Triple triple(llvm::sys::getProcessTriple());
    t.arch = triple.getArchName().str();
    classify(t, llvm::sys::getHostCPUFeatures(), triple.isX86());
    t.caches = hostCaches();
    return t;
  }();
  return host;
}

std::string tuning::CpuTarget::recordsTarget(int64_t threads) const {
  if (name == "host")
    return hostTarget(threads);
  return arch + "-" + isa + "-" + name + "/" + std::to_string(threads) + "threads";
}

std::optional<tuning::CpuTarget> tuning::parseCpuTarget(const std::string &name,
                                                        std::string &error) {
  if (name.empty() || name == "host" || name == "native")
    return hostCpuTarget();
  // x86 names are accepted on any host (schedules can be chosen for them
  // anywhere); only running their code needs an x86 host (hostCanRun).
  const CpuTarget &host = hostCpuTarget();
  CpuTarget t;
  t.name = name;
  t.arch = "x86_64";
  t.caches = host.caches;
  t.llvmCpu = name;
  llvm::StringMap<bool> features;
  // The x86-64 micro-architecture levels are CPUs to LLVM too.
  if (!llvm::X86::parseArchX86(name, /*Only64Bit=*/true)) {
    error = "cpu=" + name +
            ": unknown CPU (use host, x86-64-v2, x86-64-v3, x86-64-v4 or an x86 CPU name "
            "such as znver3 or sapphirerapids)";
    return std::nullopt;
  }
  features = cpuFeatures(name);
  classify(t, features, /*x86=*/true);
  return t;
}

std::vector<std::string> tuning::missingHostFeatures(const CpuTarget &target) {
  if (target.name == "host" || target.llvmCpu.empty())
    return {};
  if (target.arch != hostCpuTarget().arch)
    return {"arch " + target.arch};
  llvm::StringMap<bool> host = llvm::sys::getHostCPUFeatures();
  // Features the host does not report at all (an unknown key) are not held
  // against it.
  std::vector<std::string> missing;
  for (const auto &f : cpuFeatures(target.llvmCpu))
    if (f.second && host.count(f.first()) && !host.lookup(f.first()))
      missing.push_back(f.first().str());
  llvm::sort(missing);
  return missing;
}

bool tuning::hostCanRun(const CpuTarget &target) { return missingHostFeatures(target).empty(); }

tuning::GemmTile tuning::defaultGemmTile(const CpuTarget &target, int64_t elementBytes,
                                         int64_t generatorLanes) {
  int64_t lanes = target.lanes(elementBytes);
  int64_t V = std::max<int64_t>(1, generatorLanes);
  int64_t nr = std::max<int64_t>(V, 2 * lanes);
  nr = (nr + V - 1) / V * V;
  int64_t nativePerRow = std::max<int64_t>(1, nr / lanes);
  int64_t accumulators = std::max<int64_t>(1, target.vectorRegisters - 4);
  int64_t mr = std::clamp<int64_t>(accumulators / nativePerRow, 1, 8);
  GemmTile tile;
  tile.mr = mr;
  tile.nr = nr;
  // About 16 register tiles of rows per packed A block and 16 columns of B
  // (the A block in L2, a B micro-panel of kc rows in L1).
  tile.mc = mr * 16;
  tile.nc = std::max<int64_t>(512, nr * 16);
  // The depth block. With 64-byte vectors (AVX-512; measured on Zen 4) 512:
  // against 256 it halves the passes over C, which for large C come from L3
  // or memory (sgemm 1024^3 on one thread, 5 alternated rounds: 27.6 -> 25.4
  // ms median), although the B micro-panel (kc x nr, 64 KB) then lives in
  // L2. 256 elsewhere, as measured on Zen 3 with AVX2.
  tile.kc = target.vectorBytes >= 64 ? 512 : 256;
  return tile;
}
