// The C++ baselines of the benchmark harness (bench/run.py), one library per
// process:
//   baselines sgemm dnnl|openblas M N K REPS [A.f32 B.f32 C.f32]
//       -> "ms MEDIAN", "cores CPU/WALL" of the timed loop; with the files,
//          reads A (MxK) and B (KxN) as raw row-major float32 and writes C
//   baselines triad N REPS     -> "triad GBPS" (STREAM triad a = b + s*c)
//   baselines version          -> the oneDNN version and OpenBLAS's config
// Threads follow OMP_NUM_THREADS / OPENBLAS_NUM_THREADS (and the affinity
// bench/run.py sets); "cores" shows whether the library obeyed.
#include <cblas.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

extern "C" char *openblas_get_config(void);

static double cpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

// Median ms of REPS timed calls after one warm-up; `cores` gets process CPU
// time / wall time over the timed loop.
template <typename F> static double medianMs(int reps, double &cores, F f) {
  f();
  std::vector<double> t;
  double cpu0 = cpuSeconds();
  auto w0 = std::chrono::steady_clock::now();
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
  cores = wall > 0 ? (cpuSeconds() - cpu0) / wall : 0;
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

static bool readFile(const char *path, std::vector<float> &v) {
  FILE *f = std::fopen(path, "rb");
  if (!f)
    return false;
  size_t n = std::fread(v.data(), sizeof(float), v.size(), f);
  std::fclose(f);
  return n == v.size();
}

int main(int argc, char **argv) {
  if (argc >= 7 && !std::strcmp(argv[1], "sgemm")) {
    bool dnnl = !std::strcmp(argv[2], "dnnl");
    if (!dnnl && std::strcmp(argv[2], "openblas")) {
      std::fprintf(stderr, "baselines: unknown library '%s'\n", argv[2]);
      return 2;
    }
    long m = std::atol(argv[3]), n = std::atol(argv[4]), k = std::atol(argv[5]);
    int reps = std::atoi(argv[6]);
    std::vector<float> a(m * k), b(k * n), c(m * n);
    if (argc >= 10) {
      if (!readFile(argv[7], a) || !readFile(argv[8], b)) {
        std::fprintf(stderr, "baselines: cannot read %s or %s\n", argv[7], argv[8]);
        return 1;
      }
    } else {
      for (size_t i = 0; i < a.size(); ++i)
        a[i] = float(i % 7) / 7.0f;
      for (size_t i = 0; i < b.size(); ++i)
        b[i] = float(i % 5) / 5.0f;
    }
    double cores = 0;
    double ms = medianMs(reps, cores, [&] {
      if (dnnl)
        dnnl_sgemm('N', 'N', m, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f, c.data(), n);
      else
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a.data(), k, b.data(),
                    n, 0.0f, c.data(), n);
    });
    if (argc >= 10) {
      FILE *f = std::fopen(argv[9], "wb");
      if (!f || std::fwrite(c.data(), sizeof(float), c.size(), f) != c.size()) {
        std::fprintf(stderr, "baselines: cannot write %s\n", argv[9]);
        return 1;
      }
      std::fclose(f);
    }
    std::printf("ms %.6f\ncores %.3f\n", ms, cores);
    return 0;
  }
  if (argc >= 4 && !std::strcmp(argv[1], "triad")) {
    long n = std::atol(argv[2]);
    int reps = std::atoi(argv[3]);
    std::vector<double> a(n), b(n, 1.0), c(n, 2.0);
    double cores = 0;
    double ms = medianMs(reps, cores, [&] {
#pragma omp parallel for
      for (long i = 0; i < n; ++i)
        a[i] = b[i] + 3.0 * c[i];
    });
    std::printf("triad %.3f\ncores %.3f\n", 3.0 * 8.0 * n / (ms * 1e6), cores);
    return 0;
  }
  if (argc >= 2 && !std::strcmp(argv[1], "version")) {
    const dnnl_version_t *v = dnnl_version();
    std::printf("onednn %d.%d.%d (cpu runtime %u)\n", v->major, v->minor, v->patch, v->cpu_runtime);
    std::printf("openblas %s\n", openblas_get_config());
    return 0;
  }
  std::fprintf(stderr, "usage: baselines sgemm dnnl|openblas M N K REPS [A B C] | "
                       "baselines triad N REPS | baselines version\n");
  return 2;
}
