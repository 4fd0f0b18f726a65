# Prints a function @long with a chain of N elementwise neo.compute ops
# (exp/tanh alternating), followed by @tiny, a two-op chain.
import sys

n = int(sys.argv[1])
print("func.func @long(%x: tensor<16xf32>) -> tensor<16xf32> {")
prev = "%x"
for i in range(n):
    fn = "math.exp" if i % 2 == 0 else "math.tanh"
    print(f"  %v{i} = neo.compute ins({prev} : tensor<16xf32>) space [16] "
          "maps [affine_map<(i) -> (i)>] -> tensor<16xf32> {")
    print("  ^bb0(%a: f32):")
    print(f"    %r = {fn} %a : f32")
    print("    neo.yield %r : f32")
    print("  }")
    prev = f"%v{i}"
print(f"  return {prev} : tensor<16xf32>")
print("}")
print("""func.func @tiny(%x: tensor<16xf32>) -> tensor<16xf32> {
  %a = neo.compute ins(%x : tensor<16xf32>) space [16] maps [affine_map<(i) -> (i)>] -> tensor<16xf32> {
  ^bb0(%v: f32):
    %r = math.exp %v : f32
    neo.yield %r : f32
  }
  %b = neo.compute ins(%a : tensor<16xf32>) space [16] maps [affine_map<(i) -> (i)>] -> tensor<16xf32> {
  ^bb0(%v: f32):
    %r = math.tanh %v : f32
    neo.yield %r : f32
  }
  return %b : tensor<16xf32>
}""")
