"""Prints a GEMM with TYPE operands accumulated in f32: gemm.py TYPE M N K."""
import sys

t, m, n, k = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
print("""func.func @g(%a: tensor<{m}x{k}x{t}> {{neo.name = "a"}}, %b: tensor<{k}x{n}x{t}> {{neo.name = "b"}}) -> (tensor<{m}x{n}xf32> {{neo.name = "c"}}) {{
  %c = neo.compute ins(%a, %b : tensor<{m}x{k}x{t}>, tensor<{k}x{n}x{t}>) space [{m}, {n}] sum [{k}]
      maps [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>] -> tensor<{m}x{n}xf32> {{
  ^bb0(%x: {t}, %y: {t}):
    %xf = arith.extf %x : {t} to f32
    %yf = arith.extf %y : {t} to f32
    %p = arith.mulf %xf, %yf : f32
    neo.yield %p : f32
  }}
  return %c : tensor<{m}x{n}xf32>
}}""".format(t=t, m=m, n=n, k=k))
