// The kernels of the `features` test bundle, which exercises what the
// runner must get right beyond a plain launch: every argument kind (buffer,
// i32, i64, f32, f64), dynamic shared memory beyond the default 48 KiB, a
// view (alias) into a temp at an offset, fills (a finite one, "-inf" in f64,
// and one on an output no launch touches), bf16 inputs and f16 outputs, two
// launches in order. make-bundles.py compiles it to kernels.ptx with nvcc.
#include <cuda_fp16.h>

// t[i] = x[i] * s for i < n, staged through dynamic shared memory (the
// manifest asks for 64 KiB, which needs cuFuncSetAttribute's opt-in).
extern "C" __global__ void scale(const float *x, float *t, float s, long long n) {
  extern __shared__ float stage[];
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    stage[threadIdx.x] = x[i] * s;
  __syncthreads();
  if (i < n)
    t[i] = stage[threadIdx.x];
}

// For each row r of tv (a view of rows 1.. of t): with m the row's maximum,
// y[r] = ((y[r] + m) + bias) + w[r]   (y is filled with 1.5 before),
// z[r] = max(z[r], m)                 (z is filled with -inf before),
// h[r] = y[r] as f16.
extern "C" __global__ void rows(const float *tv, const unsigned short *w, float *y,
                                double *z, __half *h, int numRows, int cols,
                                double bias) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= numRows)
    return;
  float m = -INFINITY;
  for (int c = 0; c < cols; ++c)
    m = fmaxf(m, tv[r * cols + c]);
  float wv = __uint_as_float((unsigned)w[r] << 16); // bf16 to f32
  y[r] = (float)((double)(y[r] + m) + bias) + wv;
  z[r] = fmax(z[r], (double)m);
  h[r] = __float2half_rn(y[r]);
}
