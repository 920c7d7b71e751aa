#!/usr/bin/env python3
"""An amp.unscale_and_check over N rank-1 gradients, and a @main that runs it
once clean and once per poisoned position (inf, -inf or nan written into one
element of one gradient), printing the found flag of each run on its own line
(0 clean, 1 poisoned).

    many_gradients.py N POS[,POS...]

The inline lowering checks gradients in runs of 16 sharing one running max,
and combines the runs' maxima 16 at a time: N = 300 gives 19 runs, so the
combination has two levels; poisoning the first, a middle, a run's last and
the very last gradient covers every path a gradient's flag takes.
"""
import sys

n = int(sys.argv[1])
positions = [int(p) for p in sys.argv[2].split(",")]
poisons = ["0x7F800000", "0xFF800000", "0x7FC00000"]  # inf, -inf, nan
ty = "tensor<3xf32>"
out = []
w = out.append
args = ", ".join(f"%g{i}: {ty}" for i in range(n))
w("func.func private @printI64(i64)")
w("func.func private @printNewline()")
w("")
w(f"func.func @check({args}, %s: tensor<f32>) -> tensor<i1> {{")
grads = ", ".join(f"%g{i}" for i in range(n))
types = ", ".join([ty] * n)
w(f"  %u:{n}, %found = amp.unscale_and_check {grads} by %s : {types}")
w("  return %found : tensor<i1>")
w("}")
w("")
w("func.func @run(%poison: index, %value: f32) {")
w("  %c1 = arith.constant 1 : index")
w("  %s = arith.constant dense<1024.0> : tensor<f32>")
for i in range(n):
    w(f"  %i{i} = arith.constant {i} : index")
    w(f"  %base{i} = arith.constant dense<[{i}.5, -2.0e4, 3.0e-3]> : {ty}")
    w(f"  %hit{i} = arith.cmpi eq, %poison, %i{i} : index")
    w(f"  %put{i} = tensor.insert %value into %base{i}[%c1] : {ty}")
    w(f"  %g{i} = arith.select %hit{i}, %put{i}, %base{i} : {ty}")
w(f"  %found = func.call @check({grads}, %s) : ({types}, tensor<f32>) -> tensor<i1>")
w("  %flag = tensor.extract %found[] : tensor<i1>")
w("  %flag64 = arith.extui %flag : i1 to i64")
w("  func.call @printI64(%flag64) : (i64) -> ()")
w("  func.call @printNewline() : () -> ()")
w("  return")
w("}")
w("")
w("func.func @main() {")
w("  %none = arith.constant -1 : index")
w("  %zero = arith.constant 0.0 : f32")
w("  func.call @run(%none, %zero) : (index, f32) -> ()")
for k, p in enumerate(positions):
    w(f"  %p{k} = arith.constant {p} : index")
    w(f"  %v{k} = arith.constant {poisons[k % 3]} : f32")
    w(f"  func.call @run(%p{k}, %v{k}) : (index, f32) -> ()")
w("  return")
w("}")
print("\n".join(out))
