#!/usr/bin/python3
"""Compiles Neo's GPU bundle set ahead of time (on a machine with LLVM/MLIR).

    scripts/gpu/make_bundles.py OUTDIR [--quick] [--jobs N] [--reference cpu] [--simulate]
                                [--filter REGEX] [--sm-count N]

OUTDIR/check/<name>/   every operator of test/Operators, forward and
                       forward+backward (<name>_fwdbwd), plus GEMM variants
                       (odd sizes, transposes, batches, tensor cores), each with
                       sample inputs and reference outputs from the interpreter
                       (--reference cpu: from the CPU pipeline, which the ASan
                       suite uses: the instrumented interpreter took 33 s for
                       gemm_splitk's reference, the CPU pipeline 1 s);
OUTDIR/bench/<name>/   the benchmark set of docs/benchmarks.md at full size
                       (forward+backward), without data: scripts/gpu/bench.py
                       makes inputs on the GPU machine and checks every output
                       against PyTorch there;
OUTDIR/index.json      what each bundle is (kind, function, tolerance, model, and the
                       SMs its kernels were planned for: --sm-count, 132 by default
                       for H100 SXM and H200; 114 for H100 PCIe).

The GPU machine then runs scripts/gpu/check.sh OUTDIR (no LLVM needed)."""
import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("NEO_BIN", os.path.join(ROOT, "build", "bin"))
sys.path.insert(0, os.path.join(ROOT, "bench"))


def sh(args, input=None):
    proc = subprocess.run(args, capture_output=True, text=True, input=input)
    if proc.returncode != 0:
        raise RuntimeError("%s failed:\n%s%s" % (" ".join(args), proc.stdout, proc.stderr))
    return proc.stdout


def import_neo(source):
    return sh([os.path.join(BIN, "neo-translate"), "--import-neo", "-"], input=source)


def autodiff(mlir, function=None, wrt=None):
    opts = []
    if function:
        opts.append("function=%s" % function)
    if wrt:
        opts.append("wrt=%s" % ",".join(map(str, wrt)))
    opt = "--neo-autodiff" + ("=" + " ".join(opts) if opts else "")
    return sh([os.path.join(BIN, "neo-opt"), opt], input=mlir)


# --simulate: (rtol, atol) of each check bundle's name, and the results.
SIMULATE = None
# --sm-count: the SMs of the GPU the bundles are for (neo-lower-to-ptx's
# sm-count, added to every bundle's options).
SM_COUNT = 132


def with_sm_count(gpu_options):
    return (gpu_options + " sm-count=%d" % SM_COUNT).strip()


def simulate(path, out, gpu_options, tolerance):
    """Runs the bundle's function in scripts/gpu/gpusim.py against its reference."""
    args = [sys.executable, os.path.join(ROOT, "scripts", "gpu", "gpusim.py"), "--source", path,
            "--bundle", out, "--neo-bin", BIN, "--gpu-pipeline-options", gpu_options]
    if tolerance:
        args += ["--rtol", str(tolerance[0]), "--atol", str(tolerance[1])]
    proc = subprocess.run(args, capture_output=True, text=True)
    with open(os.path.join(out, "gpusim.txt"), "w") as f:
        f.write(proc.stdout + proc.stderr)
    if proc.returncode != 0:
        raise RuntimeError("gpusim: %s\n%s%s" % (out, proc.stdout, proc.stderr))


def emit(mlir, function, out, reference, gpu_options="", seed=1):
    path = out + ".mlir"
    with open(path, "w") as f:
        f.write(mlir)
    args = [os.path.join(BIN, "neo-run"), path, "--function", function, "--emit-bundle", out,
            "--bundle-reference", reference, "--seed", str(seed),
            # Regenerating a bundle directory replaces it (only once complete).
            "--force"]
    gpu_options = with_sm_count(gpu_options)
    args += ["--gpu-pipeline-options", gpu_options]
    try:
        sh(args)
        # Every kernel within sm_90a's registers, shared memory and threads,
        # without spills (ptxas -v; the report: <bundle>/resources.txt).
        proc = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gpu",
                                                            "ptxas_resources.py"), out,
                               "--chip", "sm_90a"], capture_output=True, text=True)
        with open(os.path.join(out, "resources.txt"), "w") as f:
            f.write(proc.stdout + proc.stderr)
        if proc.returncode != 0:
            raise RuntimeError("ptxas_resources: %s\n%s%s" % (out, proc.stdout, proc.stderr))
        name = os.path.basename(out)
        if SIMULATE is not None and name in SIMULATE and reference != "none":
            simulate(path, out, gpu_options, SIMULATE[name])
    finally:
        os.remove(path)


GEMM_VARIANTS = [
    # name, .neo source, neo-lower-to-ptx options, tolerance
    ("gemm_odd", "def g(a: f32[67, 45], b: f32[45, 131]) -> c {\n  c[i, j] = sum(k) a[i, k] * b[k, j]\n}\n", "", 1e-4),
    ("gemm_tn", "def g(a: f32[96, 130], b: f32[96, 200]) -> c {\n  c[i, j] = sum(k) a[k, i] * b[k, j]\n}\n", "", 1e-4),
    ("gemm_nt", "def g(a: f32[130, 64], b: f32[70, 64]) -> c {\n  c[i, j] = sum(k) a[i, k] * b[j, k]\n}\n", "", 1e-4),
    ("gemm_batched", "def g(a: f32[3, 40, 72], b: f32[3, 72, 36]) -> c {\n  c[z, i, j] = sum(k) a[z, i, k] * b[z, k, j]\n}\n", "", 1e-4),
    ("gemm_splitk", "def g(a: f32[64, 2050], b: f32[2050, 200]) -> c {\n  c[i, j] = sum(k) a[i, k] * b[k, j]\n}\n", "", 1e-4),
    ("gemm_splitk_tn", "def g(a: f32[1100, 48], b: f32[1100, 72]) -> c {\n  c[i, j] = sum(k) a[k, i] * b[k, j]\n}\n", "", 1e-4),
    ("gemm_f64", "def g(a: f64[65, 33], b: f64[33, 70]) -> c {\n  c[i, j] = sum(k) a[i, k] * b[k, j]\n}\n", "", 1e-9),
    ("gemm_tf32", "def g(a: f32[256, 128], b: f32[128, 256]) -> c {\n  c[i, j] = sum(k) a[i, k] * b[k, j]\n}\n", "tensor-cores=tf32", 5e-3),
    ("gemm_tf32_batched_nt", "def g(a: f32[2, 128, 64], b: f32[2, 256, 64]) -> c {\n  c[z, i, j] = sum(k) a[z, i, k] * b[z, j, k]\n}\n", "tensor-cores=tf32", 5e-3),
    # Warpgroup MMA (sm_90a): the default choice there, explicit tiles with
    # several warpgroups per block, and every operand layout.
    ("gemm_bf16_wgmma", "def g(a: bf16[256, 192], b: bf16[192, 256]) -> c {\n  c[i, j] = sum(k) a[i, k] * b[k, j]\n}\n", "chip=sm_90a", 2e-3),
    ("gemm_bf16_wgmma_128x256", "def g(a: bf16[256, 128], b: bf16[128, 256]) -> c {\n  c[i, j] = sum(k) a[i, k] * b[k, j]\n}\n", "chip=sm_90a tensor-cores=wgmma gemm-tile=128,256,64,8,8,64,256", 2e-3),
    ("gemm_f16_wgmma_tn", "def g(a: f16[192, 128], b: f16[256, 192]) -> c {\n  c[i, j] = sum(k) a[k, i] * b[j, k]\n}\n", "chip=sm_90a tensor-cores=wgmma gemm-tile=128,128,64,8,8,64,64", 2e-3),
    # An f32 GEMM with wgmma asked for by name: tf32 on the GEMM kernel, k
    # tiles of 32; B N-major, transposed to K-major by the threads (16-byte
    # loads along n, 16-byte stores of 4 k). A ragged n runs as an implicit
    # GEMM (each float copied K-major).
    ("gemm_tf32_wgmma", "def g(a: f32[256, 96], b: f32[96, 192]) -> c {\n  c[i, j] = sum(k) a[i, k] * b[k, j]\n}\n", "chip=sm_90a tensor-cores=wgmma", 1e-2),
    ("gemm_tf32_wgmma_ragged", "def g(a: f32[256, 96], b: f32[96, 200]) -> c {\n  c[i, j] = sum(k) a[i, k] * b[k, j]\n}\n", "chip=sm_90a tensor-cores=wgmma", 1e-2),
    # Both transposed (Aᵀ·B, a weight gradient) with four warpgroups of 64 x
    # 64 (the first 256 of 512 threads transpose A's and B's tiles), and a
    # batched B-transposed one of two warpgroups of 64 x 256 in two stages.
    ("gemm_tf32_wgmma_tn_4wg", "def g(a: f32[96, 128], b: f32[96, 256]) -> c {\n  c[i, j] = sum(k) a[k, i] * b[k, j]\n}\n", "chip=sm_90a tensor-cores=wgmma gemm-tile=128,128,32,8,8,64,64", 1e-2),
    ("gemm_tf32_wgmma_batched_128x256_s2", "def g(a: f32[2, 128, 64], b: f32[2, 64, 256]) -> c {\n  c[z, i, j] = sum(k) a[z, i, k] * b[z, k, j]\n}\n", "chip=sm_90a tensor-cores=wgmma gemm-tile=128,256,32,8,8,64,256 gemm-stages=2", 1e-2),
    # Both operands K-major (A·Bᵀ): 16-byte copies of 4 floats as they lie;
    # the default tiles (64 x 64 here) and 128 x 256 (two warpgroups of 64 x
    # 256).
    ("gemm_tf32_wgmma_nt", "def g(a: f32[256, 96], b: f32[192, 96]) -> c {\n  c[i, j] = sum(k) a[i, k] * b[j, k]\n}\n", "chip=sm_90a tensor-cores=wgmma", 1e-2),
    ("gemm_tf32_wgmma_nt_128x256", "def g(a: f32[128, 64], b: f32[256, 64]) -> c {\n  c[i, j] = sum(k) a[i, k] * b[j, k]\n}\n", "chip=sm_90a tensor-cores=wgmma gemm-tile=128,256,32,8,8,64,256", 1e-2),
    ("gemm_bf16_wgmma_batched_tn", "def g(a: bf16[3, 128, 64], b: bf16[3, 128, 128]) -> c {\n  c[z, i, j] = sum(k) a[z, k, i] * b[z, k, j]\n}\n", "chip=sm_90a", 2e-3),
]

F16_GEMM = """module {
  func.func @g(%a: tensor<256x128xf16> {neo.name = "a"}, %b: tensor<128x128xf16> {neo.name = "b"}) -> (tensor<256x128xf32> {neo.name = "c"}) {
    %c = neo.compute ins(%a, %b : tensor<256x128xf16>, tensor<128x128xf16>) space [256, 128] sum [128]
        maps [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>] -> tensor<256x128xf32> {
    ^bb0(%x: f16, %y: f16):
      %xf = arith.extf %x : f16 to f32
      %yf = arith.extf %y : f16 to f32
      %p = arith.mulf %xf, %yf : f32
      neo.yield %p : f32
    }
    return %c : tensor<256x128xf32>
  }
}
"""

MLP_BF16 = """def mlp(x: bf16[128, 256], w: bf16[256, 128], bias: f32[128]) -> y {
  h[i, j] = bf16(sum(k) x[i, k] * w[k, j])
  y[i, j] = bf16(tanh(h[i, j] + bias[j]))
}
"""

MLP_F32 = """def mlp(x: f32[128, 256], w: f32[256, 128], bias: f32[128]) -> y {
  y[i, j] = tanh(sum(k) x[i, k] * w[k, j] + bias[j])
}
"""

CONV_BF16 = """def conv(x: bf16[2, 16, 12, 12], w: bf16[32, 16, 3, 3]) -> (y: bf16[2, 32, 12, 12]) {
  y[n, k, p, q] = bf16(sum(c, r, s) x[n, c, p + r - 1, q + s - 1] * w[k, c, r, s])
}
"""

CONV_WIDE_BF16 = """def conv(x: bf16[2, 8, 24, 24], w: bf16[16, 8, 3, 3]) -> (y: bf16[2, 16, 24, 24]) {
  y[n, k, p, q] = bf16(sum(c, r, s) x[n, c, p + r - 1, q + s - 1] * w[k, c, r, s])
}
"""

# A convolution with a bias and tanh after it: on tensor cores both run as
# the implicit GEMM kernel stores its sums (its epilogue: one launch) where
# nothing else reads the sums.
CONV_BIAS_TANH_BF16 = """def conv(x: bf16[2, 16, 12, 12], w: bf16[32, 16, 3, 3], b: f32[32]) -> y {
  a[n, k, p < 12, q < 12] = sum(c, r, s) x[n, c, p + r - 1, q + s - 1] * w[k, c, r, s]
  y[n, k, p, q] = tanh(a[n, k, p, q] + b[k])
}
"""
CONV_BIAS_TANH_F32 = CONV_BIAS_TANH_BF16.replace("bf16", "f32")

F16_GEMM_BENCH = F16_GEMM.replace("256x128xf16", "4096x4096xf16").replace(
    "128x128xf16", "4096x4096xf16").replace("256x128xf32", "4096x4096xf32").replace(
    "space [256, 128] sum [128]", "space [4096, 4096] sum [4096]")


def gemm_entry(function, m, n, k, dtype, opts, layout="nn"):
    """The index entry of a benchmark GEMM, with its tuning-record key and
    schedule fields (gemm_record). `layout` "nt": b is stored n by k."""
    key, fields = gemm_record(m, n, k, dtype, opts, layout)
    chip = ([o.split("=", 1)[1] for o in opts.split() if o.startswith("chip=")] or ["sm_90"])[0]
    return dict(kind="gemm", function=function, m=m, n=n, k=k, dtype=dtype, options=opts,
                record_key=key, schedule=fields, chip=chip, layout=layout)


def gemm_record(m, n, k, dtype, opts, layout="nn"):
    """The tuning-record key and schedule fields of a benchmark GEMM compiled
    with neo-lower-to-ptx options `opts` (neo-gpu-select-schedules' defaults,
    then gemm-tile's prefix, tensor-cores and gemm-stages), so that the device
    search can write records the pipeline reads back (tuning-records=)."""
    fields = dict(bm=128, bn=128, bk=8, tm=8, tn=8, wm=64, wn=32, mma=0, min_blocks=2 * SM_COUNT,
                  stages=0)
    for opt in opts.split():
        name, value = opt.split("=", 1)
        if name == "gemm-tile":
            for field, v in zip(("bm", "bn", "bk", "tm", "tn", "wm", "wn"), value.split(",")):
                fields[field] = int(v)
            fields["min_blocks"] = 0
        elif name == "tensor-cores":
            fields["mma"] = {"auto": 0, "none": 1, "tf32": 2, "wgmma": 3}[value]
        elif name == "gemm-stages":
            fields["stages"] = int(value)
    key = "gemm f32 batch=1 m=%d n=%d k=%d layout=%s%s" % (
        m, n, k, "mk,nk,mn" if layout == "nt" else "mk,kn,mn",
        " in=%s" % dtype if dtype in ("f16", "bf16") else "")
    return key, fields


def check_jobs(out, quick, reference="interpreter"):
    """(name, thunk) pairs for the correctness set."""
    jobs = []
    ops = sorted(f[:-4] for f in os.listdir(os.path.join(ROOT, "test", "Operators"))
                 if f.endswith(".neo"))
    if quick:
        ops = [o for o in ops if o in ("matmul", "conv2d", "softmax", "layernorm", "lstm_cell")]
    index = {}
    for op in ops:
        src = open(os.path.join(ROOT, "test", "Operators", op + ".neo")).read()
        fn = re.search(r"def\s+(\w+)", src).group(1)
        dest = os.path.join(out, "check", op)
        index[op] = dict(kind="check", function=fn)
        jobs.append((op, lambda src=src, fn=fn, dest=dest: emit(import_neo(src), fn, dest,
                                                                 reference)))
        dest2 = dest + "_fwdbwd"
        index[op + "_fwdbwd"] = dict(kind="check", function=fn + "_fwdbwd")
        jobs.append((op + "_fwdbwd", lambda src=src, fn=fn, dest=dest2: emit(
            autodiff(import_neo(src), fn), fn + "_fwdbwd", dest, reference)))
        # The fused training graph (neo-eqsat-fuse with GPU costs: row-blocked
        # kernels as one launch of a block per row).
        dest3 = dest + "_fwdbwd_eqsat"
        index[op + "_fwdbwd_eqsat"] = dict(kind="check", function=fn + "_fwdbwd",
                                           options="eqsat=true")
        jobs.append((op + "_fwdbwd_eqsat", lambda src=src, fn=fn, dest=dest3: emit(
            autodiff(import_neo(src), fn), fn + "_fwdbwd", dest, reference, "eqsat=true")))
    # Mid-size convolutions (implicit GEMM with overhanging tiles), forward+backward.
    import models
    for name, (src, fn, _) in (("conv_mid_fwdbwd", models.conv2d(2, 16, 32, 20)),
                               ("capsule_mid_fwdbwd", models.capsule(2, 4, 4, 6))):
        dest = os.path.join(out, "check", name)
        index[name] = dict(kind="check", function=fn + "_fwdbwd", rtol=1e-4, atol=1e-4)
        jobs.append((name, lambda src=src, fn=fn, dest=dest: emit(
            autodiff(import_neo(src), fn), fn + "_fwdbwd", dest, reference)))
    # Convolutions on tensor cores (implicit GEMMs gathered into shared
    # memory): tf32 on request, and bf16 operands by default.
    conv_src = open(os.path.join(ROOT, "test", "Operators", "conv2d.neo")).read()
    mid_src, mid_fn, _ = models.conv2d(2, 16, 32, 20)
    for name, src, fn, opts, tol in (
            ("conv2d_fwdbwd_tf32", conv_src, "conv2d", "tensor-cores=tf32", 1e-2),
            ("conv_mid_fwdbwd_tf32", mid_src, mid_fn, "tensor-cores=tf32", 1e-2),
            ("conv_bf16_fwdbwd", CONV_BF16, "conv", "", 3e-2),
            # sm_90a: warpgroup MMA, and K split over blocks (a long
            # weight-gradient sum into 16 x 72 outputs).
            ("conv_bf16_fwdbwd_sm90a", CONV_BF16, "conv", "chip=sm_90a", 3e-2),
            ("conv_wide_bf16_fwdbwd_sm90a", CONV_WIDE_BF16, "conv", "chip=sm_90a", 3e-2),
            # f32 as tf32 on wgmma (K-major tiles of 32 k).
            ("conv2d_fwdbwd_tf32_sm90a", conv_src, "conv2d", "chip=sm_90a tensor-cores=tf32",
             1e-2),
            # A bias and tanh after the convolution (the training step keeps
            # the convolution's sums, which the backward reads).
            ("conv_bias_tanh_bf16_fwdbwd_sm90a", CONV_BIAS_TANH_BF16, "conv", "chip=sm_90a",
             3e-2)):
        dest = os.path.join(out, "check", name)
        index[name] = dict(kind="check", function=fn + "_fwdbwd", rtol=tol, atol=tol,
                           options=opts)
        jobs.append((name, lambda src=src, fn=fn, opts=opts, dest=dest: emit(
            autodiff(import_neo(src), fn), fn + "_fwdbwd", dest, reference, opts)))
    # The forward alone: the bias and tanh in the implicit-GEMM kernel's
    # epilogue (one launch) on the pipelined tensor-core kernel (bf16; f32 as
    # tf32) and on warpgroup MMA.
    for name, src, opts, tol in (
            ("conv_bias_tanh_bf16", CONV_BIAS_TANH_BF16, "", 3e-2),
            ("conv_bias_tanh_bf16_sm90a", CONV_BIAS_TANH_BF16, "chip=sm_90a", 3e-2),
            ("conv_bias_tanh_tf32", CONV_BIAS_TANH_F32, "tensor-cores=tf32", 1e-2)):
        dest = os.path.join(out, "check", name)
        index[name] = dict(kind="check", function="conv", rtol=tol, atol=tol, options=opts)
        jobs.append((name, lambda src=src, opts=opts, dest=dest: emit(
            import_neo(src), "conv", dest, reference, opts)))
    # Softmax attention forward as one fused kernel (online softmax over key
    # tiles), with and without eqsat.
    att_src, att_fn, _ = models.attention(256, 64)
    for name, opts in (("attention_fwd", ""), ("attention_fwd_eqsat", "eqsat=true")):
        dest = os.path.join(out, "check", name)
        index[name] = dict(kind="check", function=att_fn, options=opts)
        jobs.append((name, lambda opts=opts, dest=dest: emit(import_neo(att_src), att_fn, dest,
                                                             reference, opts)))
    # Softmax attention forward and backward: the fused forward and the two
    # score-tile kernels of the backward (split over grid z at this size),
    # plain and causal; with eqsat, the row-block kernels. (Not in the quick
    # set: test/Integration/GPU/sim/attention-backward.neo simulates smaller
    # ones.)
    for name, causal, opts in ([] if quick else (
            ("attention_l256_fwdbwd", False, ""),
            ("attention_l256_causal_fwdbwd", True, ""),
            ("attention_l256_fwdbwd_eqsat", False, "eqsat=true"))):
        src, fn, _ = models.attention(256, 64, causal=causal)
        dest = os.path.join(out, "check", name)
        index[name] = dict(kind="check", function=fn + "_fwdbwd", options=opts)
        jobs.append((name, lambda src=src, fn=fn, opts=opts, dest=dest: emit(
            autodiff(import_neo(src), fn), fn + "_fwdbwd", dest, reference, opts)))
    # bf16 attention on tensor cores (GpuAttentionMma.cpp: p rounded to bf16
    # before it multiplies v), forward and (not in the quick set) forward and
    # backward, with bf16's tolerance; the forward also on the SIMT kernel;
    # f32 on tensor cores in tf32, tf32's tolerance.
    for name, fwdbwd, opts in (("attention_fwd_bf16", False, ""),
                               ("attention_fwd_bf16_simt", False, "tensor-cores=none"),
                               ("attention_fwd_tf32", False, "tensor-cores=tf32")) + (
            () if quick else (("attention_l256_fwdbwd_bf16", True, ""),
                              ("attention_l256_causal_fwdbwd_bf16", True, ""),
                              ("attention_l256_fwdbwd_tf32", True, "tensor-cores=tf32"))):
        src, fn, _ = models.attention(256, 64, causal="causal" in name,
                                      dtype="f32" if "tf32" in name else "bf16")
        function = fn + "_fwdbwd" if fwdbwd else fn
        dest = os.path.join(out, "check", name)
        index[name] = dict(kind="check", function=function, rtol=3e-2, atol=3e-2, options=opts)
        jobs.append((name, lambda src=src, fn=fn, function=function, fwdbwd=fwdbwd, opts=opts,
                     dest=dest: emit(autodiff(import_neo(src), fn) if fwdbwd else import_neo(src),
                                     function, dest, reference, opts)))
    # Mixed precision: a bf16 training step (tensor cores forward, f32
    # accumulation of the bf16 gradients); bf16's tolerance for every output.
    name = "mlp_bf16_fwdbwd"
    dest = os.path.join(out, "check", name)
    index[name] = dict(kind="check", function="mlp_fwdbwd", rtol=3e-2, atol=3e-2)
    jobs.append((name, lambda dest=dest: emit(autodiff(import_neo(MLP_BF16), "mlp"),
                                              "mlp_fwdbwd", dest, reference)))
    # The same step on sm_90a: its three GEMMs on warpgroup MMA.
    name = "mlp_bf16_fwdbwd_sm90a"
    dest = os.path.join(out, "check", name)
    index[name] = dict(kind="check", function="mlp_fwdbwd", rtol=3e-2, atol=3e-2,
                       options="chip=sm_90a")
    jobs.append((name, lambda dest=dest: emit(autodiff(import_neo(MLP_BF16), "mlp"),
                                              "mlp_fwdbwd", dest, reference, "chip=sm_90a")))
    # An f32 step with wgmma asked for (tf32): its three GEMMs on the GEMM
    # kernel; the input gradient dy wᵀ copies both operands as they lie, the
    # forward (x w, its bias and tanh in the epilogue) transposes w's tiles
    # and the weight gradient xᵀ dy both operands'.
    name = "mlp_fwdbwd_tf32_wgmma"
    dest = os.path.join(out, "check", name)
    index[name] = dict(kind="check", function="mlp_fwdbwd", rtol=2e-2, atol=2e-2,
                       options="chip=sm_90a tensor-cores=wgmma")
    jobs.append((name, lambda dest=dest: emit(autodiff(import_neo(MLP_F32), "mlp"), "mlp_fwdbwd",
                                              dest, reference,
                                              "chip=sm_90a tensor-cores=wgmma")))
    for name, src, opts, tol in GEMM_VARIANTS + [("gemm_f16_tc", None, "", 2e-3)]:
        dest = os.path.join(out, "check", name)
        index[name] = dict(kind="check", function="g", rtol=tol, atol=tol, options=opts)
        if src is None:
            jobs.append((name, lambda dest=dest: emit(F16_GEMM, "g", dest, reference)))
        else:
            jobs.append((name, lambda src=src, opts=opts, dest=dest: emit(
                import_neo(src), "g", dest, reference, opts)))
    return jobs, index


def bench_jobs(out, quick):
    import models
    from run import mlp_step, param_shapes
    jobs, index = [], {}
    for (m, n, k) in [(4096, 4096, 4096), (1024, 1024, 1024), (64, 4096, 1024)]:
        src = ("def mm(a: f32[%d, %d], b: f32[%d, %d]) -> c {\n"
               "  c[i, j] = sum(k) a[i, k] * b[k, j]\n}\n" % (m, k, k, n))
        for label, opts in (("f32", ""), ("tf32", "tensor-cores=tf32")):
            name = "sgemm_%dx%dx%d_%s" % (m, n, k, label)
            dest = os.path.join(out, "bench", name)
            index[name] = gemm_entry("mm", m, n, k, label, opts)
            jobs.append((name, lambda src=src, opts=opts, dest=dest: emit(
                import_neo(src), "mm", dest, "none", opts)))
    # Schedule variants of the big GEMM (the GPU side of schedule exploration).
    src4k = ("def mm(a: f32[4096, 4096], b: f32[4096, 4096]) -> c {\n"
             "  c[i, j] = sum(k) a[i, k] * b[k, j]\n}\n")
    for label, opts in (("f32_bk16", "gemm-tile=128,128,16,8,8"),
                        ("f32_64x64", "gemm-tile=64,64,8,4,4"),
                        ("f32_128x64", "gemm-tile=128,64,8,8,4"),
                        ("tf32_bk16", "tensor-cores=tf32 gemm-tile=128,128,16"),
                        ("tf32_s4", "tensor-cores=tf32 gemm-tile=128,128,16,8,8,64,32 "
                         "gemm-stages=4"),
                        ("tf32_wmma", "tensor-cores=tf32 gemm-stages=1"),
                        ("tf32_w32x32", "tensor-cores=tf32 gemm-tile=128,128,32,8,8,32,32"),
                        ("tf32_256x128", "tensor-cores=tf32 gemm-tile=256,128,16,8,8,64,64"),
                        # tf32 on wgmma (sm_90a): B transposed to K-major
                        # by the threads on the GEMM kernel; its default
                        # tiles (128 x 256), and 128 x 128 in two
                        # warpgroups (64 x 128 each) and in four (64 x 64).
                        ("tf32_wgmma", "chip=sm_90a tensor-cores=wgmma"),
                        ("tf32_wgmma_128x128", "chip=sm_90a tensor-cores=wgmma "
                         "gemm-tile=128,128,32,8,8,64,128"),
                        ("tf32_wgmma_128x128_4wg", "chip=sm_90a tensor-cores=wgmma "
                         "gemm-tile=128,128,32,8,8,64,64")):
        name = "sgemm_4096x4096x4096_%s" % label
        index[name] = gemm_entry("mm", 4096, 4096, 4096, label.split("_")[0], opts)
        dest = os.path.join(out, "bench", name)
        jobs.append((name, lambda opts=opts, dest=dest: emit(import_neo(src4k), "mm", dest,
                                                             "none", opts)))
    # tf32 on wgmma with B stored n by k (A·Bᵀ, both K-major): the GEMM
    # kernel's 16-byte copies; against cuBLAS's TF32 a @ b.t().
    src4k_nt = ("def mm(a: f32[4096, 4096], b: f32[4096, 4096]) -> c {\n"
                "  c[i, j] = sum(k) a[i, k] * b[j, k]\n}\n")
    for label, opts in (("tf32_wgmma_nt", "chip=sm_90a tensor-cores=wgmma "
                         "gemm-tile=128,256,32,8,8,64,256"),
                        ("tf32_wgmma_nt_128x128", "chip=sm_90a tensor-cores=wgmma "
                         "gemm-tile=128,128,32,8,8,64,128")):
        name = "sgemm_4096x4096x4096_%s" % label
        index[name] = gemm_entry("mm", 4096, 4096, 4096, "tf32", opts, layout="nt")
        dest = os.path.join(out, "bench", name)
        jobs.append((name, lambda opts=opts, dest=dest: emit(import_neo(src4k_nt), "mm", dest,
                                                             "none", opts)))
    # The pipelined tensor-core kernel (cp.async stages, ldmatrix, mma.sync):
    # the default schedule and the variants the device run searches over
    # (block tile, warp tile, depth, stages).
    for dtype in ("f16", "bf16"):
        src = F16_GEMM_BENCH.replace("f16", dtype)
        variants = [("", "")]
        if not quick:
            variants += [("_w64x64", "gemm-tile=128,128,32,8,8,64,64"),
                         ("_128x256", "gemm-tile=128,256,32,8,8,64,64"),
                         ("_256x128", "gemm-tile=256,128,32,8,8,64,64"),
                         ("_bk64", "gemm-tile=128,128,64,8,8,64,64"),
                         ("_s4", "gemm-tile=128,128,32,8,8,64,64 gemm-stages=4"),
                         ("_wmma", "gemm-stages=1")]
        if dtype == "bf16":
            variants = [v for v in variants if v[0] != "_wmma"]  # WMMA has no bf16 here
        # Warpgroup MMA (sm_90a): 128x256 as cuBLAS's Hopper kernels, then
        # the search's other tiles and depths.
        wg = "chip=sm_90a tensor-cores=wgmma gemm-tile="
        variants += [("_wgmma", wg + "128,256,64,8,8,64,256")]
        if not quick:
            variants += [("_wgmma_128x128", wg + "128,128,64,8,8,64,128"),
                         ("_wgmma_256x128", wg + "256,128,64,8,8,64,128"),
                         ("_wgmma_s3", wg + "128,256,64,8,8,64,256 gemm-stages=3")]
        for label, opts in variants:
            name = "%sgemm_4096x4096x4096_%s%s" % ("h" if dtype == "f16" else "b", dtype, label)
            index[name] = gemm_entry("g", 4096, 4096, 4096, dtype, opts)
            dest = os.path.join(out, "bench", name)
            jobs.append((name, lambda src=src, opts=opts, dest=dest: emit(src, "g", dest, "none",
                                                                          opts)))
    cases = models.TRAINING[:3] if quick else models.TRAINING + models.GPU_TRAINING
    # Each training step also as the fused graph (eqsat=true: row-blocked
    # kernels, a launch per row group), which the device run compares.
    # Convolutions also on tensor cores in tf32 (implicit GEMMs gathered into
    # shared memory), against cuDNN with TF32 allowed (bench.py).
    # bf16 convolutions (and f32 ones in tf32) also on sm_90a (warpgroup
    # MMA), against cuDNN's bf16 (TF32) kernels.
    variants = {"": ("", ""), "eqsat=true": ("_eqsat", " (eqsat)"),
                "tensor-cores=tf32": ("_tf32", " (tf32)"),
                "chip=sm_90a": ("_sm90a", " (sm_90a)"),
                "chip=sm_90a tensor-cores=tf32": ("_tf32_sm90a", " (tf32, sm_90a)"),
                "eqsat=true reuse-contractions=false": ("_eqsat_noreuse",
                                                        " (eqsat, no reuse-contractions)"),
                "fused-score-tiles=false": ("_noscoretiles", " (no score tiles)"),
                "tensor-cores=none": ("_simt", " (SIMT)"),
                "attention-key-split=false": ("_nosplit", " (no key split)")}

    def case_options(label):
        # Attention's backward with its row term summed over keys again
        # (L * L * E, fewer launches) against rowsum(dO * O) (the default);
        # without eqsat, the GEMMs and L x L temporaries of before against
        # the score-tile kernels (the default).
        if label.startswith("attention"):
            # (f32 also with its forward on tensor cores in tf32; bf16 also
            # on the SIMT kernels, forward and score tiles.)
            return ("eqsat=true reuse-contractions=false", "fused-score-tiles=false") + (
                ("tensor-cores=none",) if label.endswith("bf16") else ("tensor-cores=tf32",))
        if not label.startswith("conv2d"):
            return ()
        if label.endswith("bf16"):
            return ("chip=sm_90a",)
        return ("tensor-cores=tf32", "chip=sm_90a tensor-cores=tf32")
    cases = [(label, group, build, opts) for label, group, build in cases
             for opts in ("", "eqsat=true") + case_options(label)]
    for label, group, build, opts in cases:
        src, fn, _ = build()
        suffix, label_suffix = variants[opts]
        name = re.sub(r"[^A-Za-z0-9]+", "_", label).strip("_").lower() + suffix
        shapes = param_shapes(src, fn)
        function = fn + "_fwdbwd"
        index[name] = dict(kind="train", label=label + label_suffix, model_label=label,
                           group=group, function=function, model=fn, shapes=shapes,
                           options=opts, tf32="tensor-cores=tf32" in opts)
        dest = os.path.join(out, "bench", name)

        def job(src=src, fn=fn, dest=dest, shapes=shapes, function=function, opts=opts):
            # The MLP step differentiates the weights only (arguments 2..).
            mlir = autodiff(import_neo(src), fn,
                            list(range(2, len(shapes))) if fn == "mlp" else None)
            if fn == "mlp":
                mlir = mlp_step(mlir, len(shapes))
                function = "step"
            emit(mlir, function, dest, "none", opts)
        if fn == "mlp":
            index[name]["function"] = "step"
        jobs.append((name, job))
    # Forward-only graphs (inference), plain and with eqsat: softmax
    # attention as one fused kernel either way.
    # bf16 attention also on the exact SIMT kernel (tensor-cores=none), f32
    # also on tensor cores in tf32 (against PyTorch with TF32 allowed).
    # The forwards whose blocks of rows are few (one head of 1024, decoding)
    # also without the key split over blocks.
    for label, group, build in ([] if quick else models.GPU_FORWARD):
        src, fn, _ = build()
        few = label == "attention forward L1024 D64" or "decode" in label
        for opts in ("", "eqsat=true") + (("tensor-cores=none",) if label.endswith("bf16")
                                           else ("tensor-cores=tf32",)) + (
                                               ("attention-key-split=false",) if few else ()):
            suffix, label_suffix = variants[opts]
            name = re.sub(r"[^A-Za-z0-9]+", "_", label).strip("_").lower() + suffix
            index[name] = dict(kind="train", forward=True, label=label + label_suffix,
                               model_label=label, group=group, function=fn, model=fn,
                               shapes=param_shapes(src, fn), options=opts,
                               tf32="tensor-cores=tf32" in opts)
            dest = os.path.join(out, "bench", name)
            jobs.append((name, lambda src=src, fn=fn, dest=dest, opts=opts: emit(
                import_neo(src), fn, dest, "none", opts)))
    return jobs, index


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--reference", choices=["interpreter", "cpu"], default="interpreter",
                        help="what computes the check bundles' reference outputs")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--only", choices=["check", "bench"], default=None)
    parser.add_argument("--simulate", nargs="?", const="all", choices=["all", "quick"],
                        default=None,
                        help="also run the check bundles (all, or those of the quick set) on "
                        "the CPU with scripts/gpu/gpusim.py (the kernels at the gpu-dialect "
                        "level against the reference outputs; its report: "
                        "<bundle>/gpusim.txt)")
    parser.add_argument("--filter", default=None, help="only bundles whose name matches this "
                        "regular expression")
    parser.add_argument("--sm-count", type=int, default=132,
                        help="SMs of the GPU the bundles are for (H100 SXM, H200: 132; H100 "
                        "PCIe: 114): the kernels' splits and warps are planned for them; "
                        "scripts/gpu/bench.py warns when the device has another count")
    args = parser.parse_args()
    if not 1 <= args.sm_count <= 65536:
        parser.error("--sm-count must be between 1 and 65536")
    global SM_COUNT
    SM_COUNT = args.sm_count
    out = os.path.abspath(args.out)
    os.makedirs(os.path.join(out, "check"), exist_ok=True)
    os.makedirs(os.path.join(out, "bench"), exist_ok=True)
    jobs, index = [], {}
    if args.only in (None, "check"):
        j, i = check_jobs(out, args.quick, args.reference)
        jobs += j
        index.update(i)
    if args.only in (None, "bench"):
        j, i = bench_jobs(out, args.quick)
        jobs += j
        index.update(i)
    for entry in index.values():
        entry["sm_count"] = SM_COUNT
    if args.filter:
        jobs = [(n, t) for n, t in jobs if re.search(args.filter, n)]
        index = {k: v for k, v in index.items() if any(n == k for n, _ in jobs)}
    if args.simulate:
        global SIMULATE
        chosen = index
        if args.simulate == "quick":
            chosen = check_jobs(out, True, args.reference)[1]
        # name: (rtol, atol), or None for the simulator's defaults.
        SIMULATE = {k: (v["rtol"], v["atol"]) if "rtol" in v else None
                    for k, v in index.items() if k in chosen}
    failed = []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = {pool.submit(thunk): name for name, thunk in jobs}
        for f in concurrent.futures.as_completed(futures):
            name = futures[f]
            try:
                f.result()
                print("bundle %-40s ok" % name, flush=True)
            except Exception as e:  # noqa: BLE001 - report every failure, then exit 1
                failed.append(name)
                print("bundle %-40s FAILED\n%s" % (name, e), flush=True)
    old = {}
    index_path = os.path.join(out, "index.json")
    if os.path.exists(index_path):
        old = json.load(open(index_path))
    old.update({k: v for k, v in index.items() if k not in failed})
    with open(index_path + ".tmp", "w") as f:
        json.dump(old, f, indent=1, sort_keys=True)
    os.replace(index_path + ".tmp", index_path)
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(out) for f in fs)
    print("%d bundles in %s (%.1f MB)%s" % (len(jobs) - len(failed), out, size / 1e6,
                                             "; FAILED: " + ", ".join(failed) if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
