// Only a body that is exactly acc + x * y (x and y the two inputs, or their
// exact widening) is a GEMM. Upstream's contraction check
// (linalg::isaContractionOpInterface) looks through every side-effect-free
// unary op between the inputs and the product, and between the product and
// the sum: elementwise fusion's acc + (-a) * b (a triangular solve's
// subtraction, fused into its dot product) matched it, and the GEMM call
// dropped the sign (a Gaussian-process step trained to wrong losses). Such
// ops keep their loops; the plain ones, widened f16 operands among them,
// still become calls. Run as loops and through the CPU runtime: the same
// values.
// RUN: amp-opt %s --amp-lower-contractions-to-runtime | FileCheck %s --check-prefix=CALLS
// RUN: amp-opt %s --convert-linalg-to-loops --convert-scf-to-cf --expand-strided-metadata --finalize-memref-to-llvm --arith-expand --convert-math-to-llvm --convert-arith-to-llvm --convert-func-to-llvm --convert-cf-to-llvm --reconcile-unrealized-casts \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s
// RUN: amp-opt %s --amp-lower-contractions-to-runtime --convert-linalg-to-loops --convert-scf-to-cf --expand-strided-metadata --finalize-memref-to-llvm --arith-expand --convert-math-to-llvm --convert-arith-to-llvm --convert-func-to-llvm --convert-cf-to-llvm --reconcile-unrealized-casts \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%amp_runtime_dir/libamp_runtime_cpu.so,%mlir_c_runner_utils | FileCheck %s

// a = [[1, 2, 3], [4, 5, 6]], b = [[1, 0], [0, 1], [1, 1]], c starts at 0.5.
// plain a * b + 0.5:   [[4.5, 5.5], [10.5, 11.5]]
// (-a) * b + 0.5:      [[-3.5, -4.5], [-9.5, -10.5]]
// exp(a) * b + 0.5:    [[23.3038, 27.9746], [458.527, 552.342]] (rounded)
// -(a * b) + 0.5:      as (-a) * b
// CHECK: 4.5, 5.5, 10.5, 11.5,
// CHECK-NEXT: -3.5, -4.5, -9.5, -10.5,
// CHECK-NEXT: 23.3038, 27.9746, 458.527, 552.342,
// CHECK-NEXT: -3.5, -4.5, -9.5, -10.5,
// CHECK-NEXT: 4.5, 5.5, 10.5, 11.5,

#mA = affine_map<(m, n, k) -> (m, k)>
#mB = affine_map<(m, n, k) -> (k, n)>
#mC = affine_map<(m, n, k) -> (m, n)>

// CALLS-LABEL: func.func @plain(
// CALLS: call @amp_rt_gemm(
// CALLS-NOT: linalg.generic
// CALLS: return
func.func @plain(%a: memref<2x3xf32>, %b: memref<3x2xf32>, %c: memref<2x2xf32>) {
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<2x3xf32>, memref<3x2xf32>) outs(%c : memref<2x2xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// CALLS-LABEL: func.func @negated_input(
// CALLS-NOT: call @amp_rt_gemm
// CALLS: linalg.generic
// CALLS: arith.negf
func.func @negated_input(%a: memref<2x3xf32>, %b: memref<3x2xf32>, %c: memref<2x2xf32>) {
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<2x3xf32>, memref<3x2xf32>) outs(%c : memref<2x2xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %n = arith.negf %x : f32
    %p = arith.mulf %n, %y : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// CALLS-LABEL: func.func @exp_input(
// CALLS-NOT: call @amp_rt_gemm
// CALLS: linalg.generic
// CALLS: math.exp
func.func @exp_input(%a: memref<2x3xf32>, %b: memref<3x2xf32>, %c: memref<2x2xf32>) {
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<2x3xf32>, memref<3x2xf32>) outs(%c : memref<2x2xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %e = math.exp %x : f32
    %p = arith.mulf %e, %y : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// CALLS-LABEL: func.func @negated_product(
// CALLS-NOT: call @amp_rt_gemm
// CALLS: linalg.generic
// CALLS: arith.negf
func.func @negated_product(%a: memref<2x3xf32>, %b: memref<3x2xf32>, %c: memref<2x2xf32>) {
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<2x3xf32>, memref<3x2xf32>) outs(%c : memref<2x2xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %n = arith.negf %p : f32
    %s = arith.addf %acc, %n : f32
    linalg.yield %s : f32
  }
  return
}

// f16 inputs widened in the body (a named matmul's generalization): a call.
// CALLS-LABEL: func.func @widened(
// CALLS: call @amp_rt_gemm(
// CALLS-NOT: linalg.generic
// CALLS: return
func.func @widened(%a: memref<2x3xf16>, %b: memref<3x2xf16>, %c: memref<2x2xf32>) {
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<2x3xf16>, memref<3x2xf16>) outs(%c : memref<2x2xf32>) {
  ^bb0(%x: f16, %y: f16, %acc: f32):
    %xw = arith.extf %x : f16 to f32
    %yw = arith.extf %y : f16 to f32
    %p = arith.mulf %xw, %yw : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

memref.global "private" constant @a : memref<2x3xf32> = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]>
memref.global "private" constant @b : memref<3x2xf32> = dense<[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]>
memref.global "private" constant @a16 : memref<2x3xf16> = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]>
memref.global "private" constant @b16 : memref<3x2xf16> = dense<[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]>

func.func private @printF32(f32)
func.func private @printComma()
func.func private @printNewline()

// C filled with 0.5 before the product and printed after it.
func.func @fresh() -> memref<2x2xf32> {
  %c = memref.alloc() : memref<2x2xf32>
  %half = arith.constant 0.5 : f32
  linalg.fill ins(%half : f32) outs(%c : memref<2x2xf32>)
  return %c : memref<2x2xf32>
}
func.func @show(%c: memref<2x2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  scf.for %i = %c0 to %c2 step %c1 {
    scf.for %j = %c0 to %c2 step %c1 {
      %v = memref.load %c[%i, %j] : memref<2x2xf32>
      func.call @printF32(%v) : (f32) -> ()
      func.call @printComma() : () -> ()
    }
  }
  func.call @printNewline() : () -> ()
  memref.dealloc %c : memref<2x2xf32>
  return
}

func.func @main() {
  %a = memref.get_global @a : memref<2x3xf32>
  %b = memref.get_global @b : memref<3x2xf32>
  %a16 = memref.get_global @a16 : memref<2x3xf16>
  %b16 = memref.get_global @b16 : memref<3x2xf16>
  %c1 = call @fresh() : () -> memref<2x2xf32>
  call @plain(%a, %b, %c1) : (memref<2x3xf32>, memref<3x2xf32>, memref<2x2xf32>) -> ()
  call @show(%c1) : (memref<2x2xf32>) -> ()
  %c2 = call @fresh() : () -> memref<2x2xf32>
  call @negated_input(%a, %b, %c2) : (memref<2x3xf32>, memref<3x2xf32>, memref<2x2xf32>) -> ()
  call @show(%c2) : (memref<2x2xf32>) -> ()
  %c3 = call @fresh() : () -> memref<2x2xf32>
  call @exp_input(%a, %b, %c3) : (memref<2x3xf32>, memref<3x2xf32>, memref<2x2xf32>) -> ()
  call @show(%c3) : (memref<2x2xf32>) -> ()
  %c4 = call @fresh() : () -> memref<2x2xf32>
  call @negated_product(%a, %b, %c4) : (memref<2x3xf32>, memref<3x2xf32>, memref<2x2xf32>) -> ()
  call @show(%c4) : (memref<2x2xf32>) -> ()
  %c5 = call @fresh() : () -> memref<2x2xf32>
  call @widened(%a16, %b16, %c5) : (memref<2x3xf16>, memref<3x2xf16>, memref<2x2xf32>) -> ()
  call @show(%c5) : (memref<2x2xf32>) -> ()
  return
}
