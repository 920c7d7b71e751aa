// amp-cpu-round-emulated-floats: every emulated f16 / bf16 op is rounded to
// its type, also when several are in one loop. (2048 + 1) - 2048 in f16 is
// 0 (2049 rounds to 2048; bf16: (256 + 1) - 256, 257 rounds to 256); with the
// emulation's `contract` casts left in, the folding drops the rounding in
// between and the loop returns 1.
// RUN: amp-opt %s --pass-pipeline='builtin.module(func.func(arith-emulate-unsupported-floats{source-types=f16,bf16 target-type=f32},math-extend-to-supported-types{target-type=f32},amp-cpu-round-emulated-floats,canonicalize))' | FileCheck %s --check-prefix=IR
// RUN: amp-opt %s --amp-cpu-pipeline="blas=false runtime-allocator=false parallel-min-work=0" \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils,%mlir_runner_utils | FileCheck %s

// The sum is rounded before the subtraction reads it, and no cast is
// marked for folding.
// IR-LABEL: func.func @chain_f16(
// IR-NOT: contract
// IR: %[[S:.*]] = arith.addf %{{.*}}, %{{.*}} : f32
// IR-NEXT: %[[R:.*]] = arith.truncf %[[S]] : f32 to f16
// IR-NEXT: %[[W:.*]] = arith.extf %[[R]] : f16 to f32
// IR-NEXT: arith.subf %[[W]], %{{.*}} : f32
// IR-NOT: contract
// IR: math.exp %{{.*}} : f32
// IR-NEXT: arith.truncf %{{.*}} : f32 to f16
// IR-NOT: contract
// IR-LABEL: func.func @main(

// CHECK: [0,  0,  0.859375]
// CHECK: [0,  0]

#id = affine_map<(i) -> (i)>

func.func @chain_f16(%x: tensor<3xf16>) -> tensor<3xf32> {
  %one = arith.constant 1.0 : f16
  %e = tensor.empty() : tensor<3xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<3xf16>) outs(%e : tensor<3xf32>) {
  ^bb0(%a: f16, %o: f32):
    %s = arith.addf %a, %one : f16
    %d = arith.subf %s, %a : f16
    // (exp(d) - 1) / 2: 0 where d is 0; math ops are rounded too.
    %x1 = math.exp %d : f16
    %m = arith.subf %x1, %one : f16
    %half = arith.constant 0.5 : f16
    %h = arith.mulf %m, %half : f16
    %w = arith.extf %h : f16 to f32
    linalg.yield %w : f32
  } -> tensor<3xf32>
  return %r : tensor<3xf32>
}

func.func @chain_bf16(%x: tensor<2xbf16>) -> tensor<2xf32> {
  %one = arith.constant 1.0 : bf16
  %e = tensor.empty() : tensor<2xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<2xbf16>) outs(%e : tensor<2xf32>) {
  ^bb0(%a: bf16, %o: f32):
    %s = arith.addf %a, %one : bf16
    %d = arith.subf %s, %a : bf16
    %w = arith.extf %d : bf16 to f32
    linalg.yield %w : f32
  } -> tensor<2xf32>
  return %r : tensor<2xf32>
}

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  // 2048 and 4096: +1 rounds away. 0: d = 1, exp(1) = 2.71875 in f16,
  // (2.71875 - 1) / 2 = 0.859375.
  %x = arith.constant dense<[2048.0, 4096.0, 0.0]> : tensor<3xf16>
  %r = call @chain_f16(%x) : (tensor<3xf16>) -> tensor<3xf32>
  %u = tensor.cast %r : tensor<3xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  %y = arith.constant dense<[256.0, 512.0]> : tensor<2xbf16>
  %q = call @chain_bf16(%y) : (tensor<2xbf16>) -> tensor<2xf32>
  %v = tensor.cast %q : tensor<2xf32> to tensor<*xf32>
  call @printMemrefF32(%v) : (tensor<*xf32>) -> ()
  return
}
