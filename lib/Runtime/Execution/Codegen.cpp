//===- Codegen.cpp - neo IR to a native object file -----------------------===//
#include "Codegen.h"
#include "MakeError.h"

#include "neo/Dialect/Neo/IR/NeoUtils.h"
#include "neo/Pipelines/Pipelines.h"
#include "neo/Registration.h"
#include "neo/Support/FileIO.h"
#include "neo/Tuning/Target.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/SmallVectorMemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/Transforms/Utils/SplitModule.h"

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

using namespace mlir;
using namespace mlir::neo;
using namespace mlir::neo::runtime;

void codegen::initializeNativeTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

const std::string &codegen::getHostDescription() {
  static const std::string description = [] {
    std::string s = "llvm-" LLVM_VERSION_STRING ";" + llvm::sys::getHostCPUName().str();
    for (const auto &feature : llvm::sys::getHostCPUFeatures())
      if (feature.second)
        s += "," + feature.first().str();
    return s;
  }();
  return description;
}

std::string runtime::getTuningRecordsPath(const EngineOptions &options) {
  CpuPipelineOptions pipeline;
  std::string ignored;
  llvm::raw_string_ostream os(ignored);
  if (succeeded(pipeline.parseFromString(options.pipelineOptions, os)) &&
      !pipeline.tuningRecords.empty())
    return pipeline.tuningRecords;
  return options.tuningRecords;
}

using mlir::neo::runtime::detail::makeError;

/// Adds `void __neo_packed_<f>(ptr args)` calling `f(args[0], args[1], ...)`.
static llvm::Error addPackedEntryPoints(llvm::Module &module,
                                        llvm::ArrayRef<FunctionSignature> signatures) {
  llvm::LLVMContext &ctx = module.getContext();
  auto *ptrTy = llvm::PointerType::getUnqual(ctx);
  auto *fnTy = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptrTy}, false);
  auto add = [&](const std::string &name, size_t expected) -> llvm::Error {
    llvm::Function *f = module.getFunction(name);
    if (!f || f->arg_size() != expected || !f->getReturnType()->isVoidTy() ||
        llvm::any_of(f->args(), [](llvm::Argument &a) { return !a.getType()->isPointerTy(); }))
      return makeError("internal error: the lowered function '" + name + "' does not take " +
                       llvm::Twine(expected) + " pointers and return nothing");
    auto *packed = llvm::Function::Create(fnTy, llvm::GlobalValue::ExternalLinkage,
                                          (codegen::kPackedPrefix + name).str(), module);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", packed));
    llvm::SmallVector<llvm::Value *> args;
    for (unsigned i = 0; i < expected; ++i) {
      llvm::Value *slot = b.CreateConstGEP1_64(ptrTy, packed->getArg(0), i);
      args.push_back(b.CreateLoad(ptrTy, slot));
    }
    b.CreateCall(f, args);
    b.CreateRetVoid();
    return llvm::Error::success();
  };
  for (const FunctionSignature &sig : signatures) {
    if (llvm::Error err = add(sig.name, sig.inputs.size() + sig.outputs.size()))
      return err;
    if (!sig.indexCheckFunction.empty())
      if (llvm::Error err =
              add(sig.indexCheckFunction, sig.inputs.size() + 2 * sig.indexChecks.size()))
        return err;
  }
  return llvm::Error::success();
}

/// LLVM's default module pipeline at `optLevel` for `machine`. Without
/// `loopTransforms`, the loop and SLP vectorizers and the loop unroller stay
/// off: neo-vectorize has already vectorized and unrolled Neo's kernels, and
/// LLVM's vectorized copies of the loops (with their runtime checks and
/// remainders) made the MLP training step's code 6x larger and its compile
/// about 3x slower for no speed (docs/performance.md, "Compile time").
/// With `loopVectorizer` alone, the loop vectorizer (and its interleaving)
/// runs without the unroller and the SLP vectorizer: for the scalar loops of
/// index reads, without the unrolled copies whose basic blocks of hundreds
/// of loads made the DLRM step's machine scheduling quadratic (3.9 s of
/// compile; 1.3 s with no loop transforms at all, but then the GCN step ran
/// 22% slower).
static void optimizeModule(llvm::Module &module, llvm::TargetMachine *machine, unsigned optLevel,
                           bool loopTransforms, bool loopVectorizer) {
  if (optLevel == 0)
    return;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = loopTransforms || loopVectorizer;
  tuning.SLPVectorization = loopTransforms;
  tuning.LoopUnrolling = loopTransforms || loopVectorizer;
  tuning.LoopInterleaving = loopTransforms || loopVectorizer;
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder builder(machine, tuning);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::OptimizationLevel level = optLevel == 1   ? llvm::OptimizationLevel::O1
                                  : optLevel == 2 ? llvm::OptimizationLevel::O2
                                                  : llvm::OptimizationLevel::O3;
  builder.buildPerModuleDefaultPipeline(level).run(module, mam);
}

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
codegen::compileToObject(llvm::StringRef source, llvm::ArrayRef<FunctionSignature> signatures,
                        const EngineOptions &options) {
  initializeNativeTarget();
  DialectRegistry registry;
  registerNeoCompilerDialects(registry);
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);

  std::string diagnostics;
  llvm::raw_string_ostream diagOS(diagnostics);
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
    diagOS << d.getLocation() << ": " << d.str() << "\n";
    for (Diagnostic &note : d.getNotes())
      diagOS << note.getLocation() << ": note: " << note.str() << "\n";
    return success();
  });

  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(source, &context);
  if (!module)
    return makeError("cannot parse the module:\n" + diagnostics);
  // The loop nests of reads through index values (CSR ranges, scatters) are
  // scalar: LLVM's loop vectorizer is what vectorizes their dense inner loops.
  bool indexReads = readsIndexValues(*module);

  CpuPipelineOptions pipelineOptions;
  if (std::string error =
          parsePipelineOptions(pipelineOptions, options.pipelineOptions, "neo-lower-to-cpu");
      !error.empty())
    return makeError(error);
  if (pipelineOptions.llvmVectorizeLimit < 0)
    return makeError("invalid neo-lower-to-cpu options: llvm-vectorize-limit must be >= 0, got " +
                     llvm::Twine(int64_t(pipelineOptions.llvmVectorizeLimit)));
  if (pipelineOptions.tuningRecords.empty())
    pipelineOptions.tuningRecords = getTuningRecordsPath(options);
  // The engine serves the allocations from its buffer pool (JitExecutable
  // maps the generic allocation functions to it) unless told otherwise.
  if (!pipelineOptions.pooledBuffers.getNumOccurrences())
    pipelineOptions.pooledBuffers = true;
  pipelineOptions.tuningRecordSet = options.tuningRecordSet;
  PassManager pm(&context);
  buildNeoLowerToCpuPipeline(pm, pipelineOptions);
  if (failed(pm.run(*module)))
    return makeError("lowering to the CPU failed:\n" + diagnostics);

  // Neo's argument attributes (neo.name) mean nothing to LLVM.
  module->walk([](LLVM::LLVMFuncOp f) {
    for (unsigned i = 0; i < f.getNumArguments(); ++i)
      f.removeArgAttr(i, StringAttr::get(f.getContext(), "neo.name"));
    for (unsigned i = 0; i < f.getNumResults(); ++i)
      f.removeResultAttr(i, StringAttr::get(f.getContext(), "neo.name"));
  });

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(*module, llvmContext, "neo");
  if (!llvmModule)
    return makeError("translation to LLVM IR failed:\n" + diagnostics);
  if (llvm::Error err = addPackedEntryPoints(*llvmModule, signatures))
    return std::move(err);

  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder)
    return builder.takeError();
  // A named CPU (cpu=x86-64-v3, ...): its instructions only, not the host's.
  std::string cpuError;
  std::optional<tuning::CpuTarget> cpu = tuning::parseCpuTarget(pipelineOptions.cpu, cpuError);
  if (!cpu)
    return makeError(cpuError);
  if (!cpu->llvmCpu.empty()) {
    std::vector<std::string> missing = tuning::missingHostFeatures(*cpu);
    if (!missing.empty())
      return makeError("cpu=" + cpu->name + ": this host (" + tuning::hostCpuTarget().isa +
                       ") cannot run its instructions (" + cpu->isa +
                       "; missing: " + llvm::join(missing, ", ") + ")");
    builder->setCPU(cpu->llvmCpu);
    builder->getFeatures() = llvm::SubtargetFeatures();
  }
  builder->setCodeGenOptLevel(options.optLevel >= 3   ? llvm::CodeGenOptLevel::Aggressive
                              : options.optLevel == 2 ? llvm::CodeGenOptLevel::Default
                              : options.optLevel == 1 ? llvm::CodeGenOptLevel::Less
                                                      : llvm::CodeGenOptLevel::None);
  builder->getOptions().ExceptionModel = llvm::ExceptionHandling::None;
  auto machine = builder->createTargetMachine();
  if (!machine)
    return machine.takeError();
  llvmModule->setDataLayout((*machine)->createDataLayout());
  llvmModule->setTargetTriple((*machine)->getTargetTriple());

  // LLVM's loop transforms: asked for, or a small module (their compile
  // time grows with the code; on a single GEMM they vectorize the packing
  // and edge loops for 12-15% of its time).
  size_t instructions = 0;
  for (const llvm::Function &f : *llvmModule)
    instructions += f.getInstructionCount();
  bool loopTransforms = pipelineOptions.llvmVectorize ||
                        (pipelineOptions.llvmVectorizeLimit > 0 &&
                         instructions <= static_cast<size_t>(pipelineOptions.llvmVectorizeLimit));
  optimizeModule(*llvmModule, machine->get(), options.optLevel, loopTransforms,
                 /*loopVectorizer=*/indexReads);

  // The optimized LLVM IR, for debugging code generation.
  if (!options.dumpLLVMPath.empty()) {
    std::string text;
    llvm::raw_string_ostream os(text);
    llvmModule->print(os, nullptr);
    if (Status s = writeFileAtomically(options.dumpLLVMPath, {std::string_view(text)}); !s.ok())
      return makeError("cannot write the LLVM IR: " + s.message());
  }

  // Instruction selection and scheduling, most of LLVM's time, in parallel
  // over partitions of the module where it is large and more than one core
  // is there: each partition in its own context and target machine (from
  // bitcode), one object each, in one object set.
  unsigned threads = options.codegenThreads
                         ? options.codegenThreads
                         : llvm::heavyweight_hardware_concurrency().compute_thread_count();
  unsigned functions = 0;
  for (const llvm::Function &f : *llvmModule)
    functions += !f.isDeclaration();
  unsigned parts =
      instructions >= options.parallelCodegenInstructions ? std::min(threads, functions) : 1;
  auto emit = [](llvm::Module &m, llvm::TargetMachine &tm,
                 llvm::SmallVectorImpl<char> &object) -> bool {
    llvm::raw_svector_ostream os(object);
    llvm::legacy::PassManager codegen;
    if (tm.addPassesToEmitFile(codegen, os, nullptr, llvm::CodeGenFileType::ObjectFile))
      return false;
    codegen.run(m);
    return true;
  };
  if (parts <= 1) {
    llvm::SmallVector<char, 0> object;
    if (!emit(*llvmModule, **machine, object))
      return makeError("the host target cannot emit object files");
    return std::make_unique<llvm::SmallVectorMemoryBuffer>(std::move(object), "neo.o",
                                                           /*RequiresNullTerminator=*/false);
  }
  std::vector<llvm::SmallVector<char, 0>> bitcodes;
  llvm::SplitModule(
      *llvmModule, parts,
      [&](std::unique_ptr<llvm::Module> part) {
        llvm::SmallVector<char, 0> bitcode;
        llvm::raw_svector_ostream os(bitcode);
        llvm::WriteBitcodeToFile(*part, os);
        bitcodes.push_back(std::move(bitcode));
      },
      /*PreserveLocals=*/false, /*RoundRobin=*/true);
  std::vector<std::unique_ptr<llvm::TargetMachine>> machines;
  for (size_t i = 0; i < bitcodes.size(); ++i) {
    auto tm = builder->createTargetMachine();
    if (!tm)
      return tm.takeError();
    machines.push_back(std::move(*tm));
  }
  std::vector<llvm::SmallVector<char, 0>> objects(bitcodes.size());
  std::vector<std::string> errors(bitcodes.size());
  std::vector<std::thread> workers;
  for (size_t i = 0; i < bitcodes.size(); ++i)
    workers.emplace_back([&, i] {
      llvm::LLVMContext context;
      auto part = llvm::parseBitcodeFile(
          llvm::MemoryBufferRef(llvm::StringRef(bitcodes[i].data(), bitcodes[i].size()),
                                "neo-part"),
          context);
      if (!part) {
        errors[i] = llvm::toString(part.takeError());
        return;
      }
      if (!emit(**part, *machines[i], objects[i]))
        errors[i] = "the host target cannot emit object files";
    });
  for (std::thread &w : workers)
    w.join();
  for (const std::string &error : errors)
    if (!error.empty())
      return makeError("code generation of a partition failed: " + error);
  return packObjects(objects);
}

std::unique_ptr<llvm::MemoryBuffer>
codegen::packObjects(llvm::ArrayRef<llvm::SmallVector<char, 0>> objects) {
  llvm::SmallVector<char, 0> out(kObjectSetMagic.begin(), kObjectSetMagic.end());
  auto put = [&](uint64_t v) {
    char bytes[8];
    std::memcpy(bytes, &v, 8);
    out.append(bytes, bytes + 8);
  };
  put(objects.size());
  for (const auto &object : objects)
    put(object.size());
  for (const auto &object : objects)
    out.append(object.begin(), object.end());
  return std::make_unique<llvm::SmallVectorMemoryBuffer>(std::move(out), "neo-objects",
                                                         /*RequiresNullTerminator=*/false);
}

llvm::Expected<std::vector<llvm::MemoryBufferRef>>
codegen::unpackObjects(llvm::MemoryBufferRef buffer) {
  llvm::StringRef data = buffer.getBuffer();
  if (!data.starts_with(kObjectSetMagic))
    return std::vector<llvm::MemoryBufferRef>{buffer};
  size_t at = kObjectSetMagic.size();
  auto get = [&](uint64_t &v) {
    if (data.size() - at < 8)
      return false;
    std::memcpy(&v, data.data() + at, 8);
    at += 8;
    return true;
  };
  uint64_t count = 0;
  if (!get(count) || count == 0 || count > (data.size() - at) / 8)
    return makeError("a truncated object set");
  std::vector<uint64_t> sizes(count);
  for (uint64_t &size : sizes)
    if (!get(size))
      return makeError("a truncated object set");
  std::vector<llvm::MemoryBufferRef> objects;
  for (uint64_t size : sizes) {
    if (size > data.size() - at)
      return makeError("a truncated object set");
    objects.emplace_back(data.substr(at, size), "neo-part.o");
    at += size;
  }
  if (at != data.size())
    return makeError("trailing bytes after an object set");
  return objects;
}
