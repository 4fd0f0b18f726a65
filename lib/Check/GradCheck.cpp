//===- GradCheck.cpp - Check derived gradients numerically ----------------===//
#include "neo/Check/GradCheck.h"
#include "neo/Dialect/Neo/IR/NeoUtils.h"
#include "neo/Dialect/Neo/Transforms/Autodiff.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <cmath>
#include <random>

using namespace mlir;
using namespace mlir::neo;

bool GradCheckReport::ok() const {
  return llvm::all_of(inputs, [](const GradCheckInput &i) { return i.ok; });
}

static RefTensor randomLike(llvm::ArrayRef<int64_t> shape, std::mt19937_64 &rng,
                            double lo, double hi) {
  std::uniform_real_distribution<double> u(lo, hi);
  RefTensor t;
  t.shape.assign(shape.begin(), shape.end());
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  t.data.resize(n);
  for (double &v : t.data)
    v = u(rng);
  return t;
}

FailureOr<GradCheckReport> mlir::neo::gradCheck(ModuleOp module, llvm::StringRef function,
                                                std::vector<RefTensor> inputs,
                                                const GradCheckOptions &options) {
  GradCheckReport report;
  report.differentiated = cast<ModuleOp>(module->clone());
  auto func = report.differentiated->lookupSymbol<func::FuncOp>(function);
  if (!func)
    return module.emitError("gradcheck: no function named '") << function << "'",
           failure();
  FunctionType type = func.getFunctionType();
  std::mt19937_64 rng(options.seed);
  if (inputs.empty())
    for (auto [i, t] : llvm::enumerate(type.getInputs())) {
      auto tensor = cast<RankedTensorType>(t);
      if (isa<FloatType>(tensor.getElementType())) {
        inputs.push_back(randomLike(tensor.getShape(), rng, options.low, options.high));
        continue;
      }
      // Index values in range of the reads they index (see getIndexValueBound).
      std::optional<int64_t> bound = getIndexValueBound(func.getArgument(i));
      RefTensor index = randomLike(tensor.getShape(), rng, 0, bound ? *bound : 1);
      for (double &v : index.data)
        v = std::floor(v);
      inputs.push_back(std::move(index));
    }
  if (inputs.size() != type.getNumInputs())
    return func.emitError("gradcheck: expected ")
               << type.getNumInputs() << " inputs, got " << inputs.size(),
           failure();

  AutodiffOptions adOptions;
  adOptions.gradName = "__gradcheck_{f}_grad";
  adOptions.combinedName = "__gradcheck_{f}_fwdbwd";
  FailureOr<AutodiffResult> ad = differentiateFunction(func, adOptions);
  if (failed(ad))
    return failure();
  report.gradName = ad->grad.getName().str();

  for (Type t : type.getResults()) {
    report.outputAdjoints.push_back(
        randomLike(cast<RankedTensorType>(t).getShape(), rng, options.low, options.high));
    // Rounded to the result's type, as the compiled gradient receives them.
    auto floatType = dyn_cast<FloatType>(cast<RankedTensorType>(t).getElementType());
    if (!floatType)
      continue;
    const llvm::fltSemantics &sem = floatType.getFloatSemantics();
    for (double &v : report.outputAdjoints.back().data) {
      bool lost;
      llvm::APFloat f(v);
      f.convert(sem, llvm::APFloat::rmNearestTiesToEven, &lost);
      f.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven, &lost);
      v = f.convertToDouble();
    }
  }

  std::vector<RefTensor> gradInputs(inputs);
  gradInputs.insert(gradInputs.end(), report.outputAdjoints.begin(),
                    report.outputAdjoints.end());
  auto grads = interpret(*report.differentiated, report.gradName, gradInputs);
  if (failed(grads))
    return failure();
  report.gradients = *grads;

  // L(x) = sum_k <dy_k, f_k(x)>.
  auto objective = [&](const std::vector<RefTensor> &x) -> FailureOr<double> {
    auto ys = interpret(*report.differentiated, function, x);
    if (failed(ys))
      return failure();
    double l = 0;
    for (size_t k = 0; k < ys->size(); ++k)
      for (size_t e = 0; e < (*ys)[k].data.size(); ++e)
        l += report.outputAdjoints[k].data[e] * (*ys)[k].data[e];
    return l;
  };

  // The differentiated inputs are the float tensor arguments, in order.
  unsigned g = 0;
  for (unsigned i = 0; i < type.getNumInputs(); ++i) {
    auto t = cast<RankedTensorType>(type.getInput(i));
    if (!isa<FloatType>(t.getElementType()))
      continue;
    const RefTensor &grad = report.gradients[g++];
    GradCheckInput result;
    auto name = func.getArgAttrOfType<StringAttr>(i, "neo.name");
    result.name = name ? name.str() : "arg" + std::to_string(i);
    auto probe = [&](const RefTensor &direction) -> LogicalResult {
      std::vector<RefTensor> plus(inputs), minus(inputs);
      double analytic = 0;
      for (size_t e = 0; e < direction.data.size(); ++e) {
        plus[i].data[e] += options.step * direction.data[e];
        minus[i].data[e] -= options.step * direction.data[e];
        analytic += grad.data[e] * direction.data[e];
      }
      FailureOr<double> lp = objective(plus), lm = objective(minus);
      if (failed(lp) || failed(lm))
        return failure();
      double fd = (*lp - *lm) / (2 * options.step);
      double err = std::abs(fd - analytic);
      double scale = std::max(std::abs(fd), std::abs(analytic));
      ++result.probes;
      if (!std::isfinite(fd) || !std::isfinite(analytic)) {
        result.finite = false;
        result.ok = false;
        return success();
      }
      result.maxAbsError = std::max(result.maxAbsError, err);
      result.maxRelError = std::max(result.maxRelError, scale > 0 ? err / scale : 0.0);
      if (err > options.tolerance * scale + options.absTolerance)
        result.ok = false;
      return success();
    };
    if (failed(probe(randomLike(t.getShape(), rng, -1, 1))))
      return failure();
    int64_t n = inputs[i].data.size();
    std::uniform_int_distribution<int64_t> pick(0, n - 1);
    for (unsigned c = 0; c < options.coordinates && c < n; ++c) {
      RefTensor e;
      e.shape = inputs[i].shape;
      e.data.assign(n, 0.0);
      e.data[n <= options.coordinates ? c : pick(rng)] = 1.0;
      if (failed(probe(e)))
        return failure();
    }
    report.inputs.push_back(result);
  }
  report.inputValues = std::move(inputs);
  return report;
}
