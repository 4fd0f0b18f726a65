// Baselines of the benchmark harness, timed in this process:
//   baselines sgemm M N K REPS   -> "dnnl MS" and "openblas MS" (median ms)
//   baselines triad N REPS       -> "triad GBPS" (STREAM triad a = b + s*c)
// Threads follow OMP_NUM_THREADS / OPENBLAS_NUM_THREADS.
#include <cblas.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

template <typename F> static double medianMs(int reps, F f) {
  f();
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int main(int argc, char **argv) {
  if (argc >= 6 && !std::strcmp(argv[1], "sgemm")) {
    long m = std::atol(argv[2]), n = std::atol(argv[3]), k = std::atol(argv[4]);
    int reps = std::atoi(argv[5]);
    std::vector<float> a(m * k), b(k * n), c(m * n);
    for (size_t i = 0; i < a.size(); ++i) a[i] = float(i % 7) / 7.0f;
    for (size_t i = 0; i < b.size(); ++i) b[i] = float(i % 5) / 5.0f;
    double dnnl = medianMs(reps, [&] {
      dnnl_sgemm('N', 'N', m, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f, c.data(), n);
    });
    double blas = medianMs(reps, [&] {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a.data(), k,
                  b.data(), n, 0.0f, c.data(), n);
    });
    std::printf("dnnl %.6f\nopenblas %.6f\n", dnnl, blas);
    return 0;
  }
  if (argc >= 4 && !std::strcmp(argv[1], "triad")) {
    long n = std::atol(argv[2]);
    int reps = std::atoi(argv[3]);
    std::vector<double> a(n), b(n, 1.0), c(n, 2.0);
    double ms = medianMs(reps, [&] {
#pragma omp parallel for
      for (long i = 0; i < n; ++i)
        a[i] = b[i] + 3.0 * c[i];
    });
    std::printf("triad %.3f\n", 3.0 * 8.0 * n / (ms * 1e6));
    return 0;
  }
  std::fprintf(stderr, "usage: baselines sgemm M N K REPS | baselines triad N REPS\n");
  return 2;
}
