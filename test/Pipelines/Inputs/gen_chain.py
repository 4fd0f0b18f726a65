# Prints a .neo def of about N statements (argv[1]): a chain of matmuls,
# tanh, row max and residual adds on 16x32 tensors.
import sys
n = int(sys.argv[1])
print("def chain(x: f32[16, 32], w: f32[32, 32]) -> out {")
prev = "x"; k = 0; i = 0
while k < n - 1:
    print(f"  m{i}[a, b] = sum(c) {prev}[a, c] * w[c, b]"); k += 1
    print(f"  t{i}[a, b] = tanh(m{i}[a, b])"); k += 1
    print(f"  r{i}[a] = max(b) t{i}[a, b]"); k += 1
    print(f"  h{i}[a, b] = t{i}[a, b] - r{i}[a] + {prev}[a, b]"); k += 1
    prev = f"h{i}"; i += 1
print(f"  out = sum(a, b) {prev}[a, b]")
print("}")
