"""Renders scripts/gpu/bench.py's report of made-up device results (the
report side of the device check, runnable without a GPU)."""
import os
import sys

sys.path.insert(0, os.path.join(sys.argv[1], "scripts", "gpu"))
import bench  # noqa: E402

g = dict(kind="gemm", ok=True, dtype="bf16", shape=(4096, 4096, 4096), torch_tflops=600.0,
         record_key="gemm f32 batch=1 m=4096 n=4096 k=4096 layout=mk,kn,mn in=bf16")
results = dict(
    device="NVIDIA H100 PCIe", driver="580", date="2026-12-05", torch="2.x", command="check.sh",
    sm_count=114, bundle_sm_count=132,
    check=[dict(name="softmax_fwdbwd_eqsat", ok=True), dict(name="gemm_odd", ok=False)],
    sanitize=[dict(name="gemm_odd", ok=True)],
    bench=[dict(g, name="bgemm_a", options="", neo_ms=0.5, torch_ms=0.25, ratio=0.5,
                neo_tflops=275.0, schedule=dict(bm=128, bn=128, bk=8, tm=8, tn=8, wm=64, wn=32,
                                                mma=0, min_blocks=264, stages=0)),
           dict(g, name="bgemm_b", options="gemm-tile=128,256,32,8,8,64,64", neo_ms=0.4,
                torch_ms=0.25, ratio=0.625, neo_tflops=343.6,
                schedule=dict(bm=128, bn=256, bk=32, tm=8, tn=8, wm=64, wn=64, mma=0,
                              min_blocks=0, stages=0)),
           dict(g, name="bgemm_c", chip="sm_90a", neo_ms=0.3, torch_ms=0.25, ratio=0.833,
                options="chip=sm_90a tensor-cores=wgmma gemm-tile=128,256,64,8,8,64,256",
                neo_tflops=458.1,
                schedule=dict(bm=128, bn=256, bk=64, tm=8, tn=8, wm=64, wn=256, mma=3,
                              min_blocks=0, stages=0)),
           dict(name="lstm", kind="train", label="LSTM cell", group="cell", ok=True,
                neo_ms=0.3, torch_ms=1.2, ratio=4.0, compile_ms=0.6, compile_ratio=2.0,
                graph_ms=0.1, graph_compile_ms=0.25),
           dict(name="lstm_eqsat", kind="train", label="LSTM cell (eqsat)", group="cell",
                ok=True, neo_ms=0.2, torch_ms=1.2, ratio=6.0, compile_ms=0.6, compile_ratio=3.0,
                graph_ms=0.05, graph_compile_ms=0.25),
           dict(name="gru", kind="train", label="GRU cell", group="cell", ok=True,
                neo_ms=0.3, torch_ms=0.6, ratio=2.0, compile_ms=0.6, compile_ratio=2.0,
                graph_error="cuGraphLaunch failed: CUDA_ERROR_X",
                graph_compile_error="not compiled: past --compile-budget 300 s"),
           dict(name="softmax", kind="train", label="softmax 64x1024", group="norm", ok=True,
                neo_ms=0.07, torch_ms=0.18, ratio=2.57,
                compile_error="not compiled: past --compile-budget 300 s"),
           dict(name="broken", ok=False, log="x")])
print("\n".join(bench.render(results)))
if len(sys.argv) > 2:
    import json
    with open(sys.argv[2], "w") as f:
        json.dump(bench.tuning_records(results, "sm_90"), f, indent=1)
