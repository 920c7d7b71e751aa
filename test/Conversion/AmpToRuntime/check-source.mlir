// The non-finite check reads the tensor a gradient was computed from when
// that tensor has an inf or nan exactly where the gradient has one
// (findCheckSource): through reshapes, transposes and elementwise x * c
// (c a finite constant, |c| <= 1), -x and extf(x). The gradient (lr * g in
// an SGD step) is then read only by the unscale and fuses into the update
// instead of being stored for the check.
// RUN: amp-opt %s --amp-lower-to-runtime=fuse-unscale=true | FileCheck %s --check-prefix=RT
// RUN: amp-opt %s --amp-lower-to-linalg | FileCheck %s --check-prefix=INLINE
// The flags are those of checking the gradients themselves, inline (here)
// and through the CPU runtime's check-only entries (check-source-runtime.test,
// apart so that this file also runs under make check-asan, whose runtime
// library an uninstrumented mlir-runner cannot load):
// RUN: amp-opt %s --amp-cpu-pipeline | mlir-runner -e main -entry-point-result=void -shared-libs=%amp_runtime_dir/libamp_runtime_cpu.so,%mlir_c_runner_utils | FileCheck %s --check-prefix=NUM
// and with one flag reduction per gradient (check-in-update):
// RUN: amp-opt %s --amp-cpu-pipeline=check-in-update=true | mlir-runner -e main -entry-point-result=void -shared-libs=%amp_runtime_dir/libamp_runtime_cpu.so,%mlir_c_runner_utils | FileCheck %s --check-prefix=NUM

// Walked: 0.1 * transpose(x) is checked as x; -extf(h) as h (f16, dtype 1).
// RT-LABEL: func.func @walked(
// RT-SAME: %[[X:[^:]*]]: tensor<3x2xf32>, %[[H:[^:]*]]: tensor<6xf16>
// RT: %[[XB:.*]] = bufferization.to_buffer %[[X]] read_only : tensor<3x2xf32>
// RT: %[[XP:.*]] = memref.extract_aligned_pointer_as_index %[[XB]]
// RT: %[[XI:.*]] = arith.index_cast %[[XP]]
// RT: call @amp_rt_unscale_add(%[[XI]], %c0_i64{{(_[0-9]+)?}}, %c6_i64{{(_[0-9]+)?}}, %c0_i32{{(_[0-9]+)?}})
// RT: %[[HB:.*]] = bufferization.to_buffer %[[H]] read_only : tensor<6xf16>
// RT: %[[HP:.*]] = memref.extract_aligned_pointer_as_index %[[HB]]
// RT: %[[HI:.*]] = arith.index_cast %[[HP]]
// RT: call @amp_rt_unscale_add(%[[HI]], %c0_i64{{(_[0-9]+)?}}, %c6_i64{{(_[0-9]+)?}}, %c1_i32{{(_[0-9]+)?}})
// RT: call @amp_rt_unscale_launch(
// INLINE-LABEL: func.func @walked(
// INLINE-SAME: %[[X:[^:]*]]: tensor<3x2xf32>, %[[H:[^:]*]]: tensor<6xf16>
// INLINE: tensor.collapse_shape %[[X]] {{.*}} : tensor<3x2xf32> into tensor<6xf32>
// INLINE: linalg.generic {{.*}} ins(%[[H]] : tensor<6xf16>)
// INLINE: math.absf
func.func @walked(%x: tensor<3x2xf32>, %h: tensor<6xf16>, %s: tensor<f32>) -> (tensor<2x3xf32>, tensor<6xf32>, tensor<i1>) {
  %lr = arith.constant dense<0.1> : tensor<1x1xf32>
  %et = tensor.empty() : tensor<2x3xf32>
  %t = linalg.transpose ins(%x : tensor<3x2xf32>) outs(%et : tensor<2x3xf32>) permutation = [1, 0]
  %g0 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (0, 0)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%t, %lr : tensor<2x3xf32>, tensor<1x1xf32>) outs(%et : tensor<2x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x3xf32>
  %e6 = tensor.empty() : tensor<6xf32>
  %w = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%h : tensor<6xf16>) outs(%e6 : tensor<6xf32>) {
  ^bb0(%a: f16, %o: f32):
    %v = arith.extf %a : f16 to f32
    linalg.yield %v : f32
  } -> tensor<6xf32>
  %g1 = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%w : tensor<6xf32>) outs(%e6 : tensor<6xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<6xf32>
  %u:2, %f = amp.unscale_and_check %g0, %g1 by %s : tensor<2x3xf32>, tensor<6xf32>
  return %u#0, %u#1, %f : tensor<2x3xf32>, tensor<6xf32>, tensor<i1>
}

// Kept: 2 * x can overflow where x is finite, x * y has no constant, and
// truncf(x) to f16 overflows too; each gradient is checked itself.
// RT-LABEL: func.func @kept_scaled(
// RT: %[[G:.*]] = linalg.generic
// RT: bufferization.to_buffer %[[G]] read_only
// RT-LABEL: func.func @kept_product(
// RT: %[[G:.*]] = linalg.generic
// RT: bufferization.to_buffer %[[G]] read_only
// RT-LABEL: func.func @kept_narrowed(
// RT: %[[G:.*]] = linalg.generic
// RT: bufferization.to_buffer %[[G]] read_only
// INLINE-LABEL: func.func @kept_scaled(
// INLINE: %[[G:.*]] = linalg.generic
// INLINE: linalg.generic {{.*}} ins(%[[G]] :
// INLINE-LABEL: func.func @kept_product(
// INLINE: %[[G:.*]] = linalg.generic
// INLINE: linalg.generic {{.*}} ins(%[[G]] :
// INLINE-LABEL: func.func @kept_narrowed(
// INLINE: %[[G:.*]] = linalg.generic
// INLINE: linalg.generic {{.*}} ins(%[[G]] :
func.func @kept_scaled(%x: tensor<6xf32>, %y: tensor<6xf32>, %s: tensor<f32>) -> (tensor<6xf32>, tensor<i1>) {
  %two = arith.constant dense<2.0> : tensor<6xf32>
  %e = tensor.empty() : tensor<6xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%x, %two : tensor<6xf32>, tensor<6xf32>) outs(%e : tensor<6xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %b, %a : f32
    linalg.yield %m : f32
  } -> tensor<6xf32>
  %u, %f = amp.unscale_and_check %g by %s : tensor<6xf32>
  return %u, %f : tensor<6xf32>, tensor<i1>
}

func.func @kept_product(%x: tensor<6xf32>, %y: tensor<6xf32>, %s: tensor<f32>) -> (tensor<6xf32>, tensor<i1>) {
  %e = tensor.empty() : tensor<6xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%x, %y : tensor<6xf32>, tensor<6xf32>) outs(%e : tensor<6xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<6xf32>
  %u, %f = amp.unscale_and_check %g by %s : tensor<6xf32>
  return %u, %f : tensor<6xf32>, tensor<i1>
}

func.func @kept_narrowed(%x: tensor<6xf32>, %y: tensor<6xf32>, %s: tensor<f32>) -> (tensor<6xf16>, tensor<i1>) {
  %e16 = tensor.empty() : tensor<6xf16>
  %g = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%x : tensor<6xf32>) outs(%e16 : tensor<6xf16>) {
  ^bb0(%a: f32, %o: f16):
    %v = arith.truncf %a : f32 to f16
    linalg.yield %v : f16
  } -> tensor<6xf16>
  %u, %f = amp.unscale_and_check %g by %s : tensor<6xf16>
  return %u, %f : tensor<6xf16>, tensor<i1>
}

func.func private @printI64(i64)
func.func private @printNewline()
func.func private @printComma()

func.func @flag(%f: tensor<i1>) {
  %b = tensor.extract %f[] : tensor<i1>
  %i = arith.extui %b : i1 to i64
  call @printI64(%i) : (i64) -> ()
  call @printComma() : () -> ()
  return
}

func.func @run_walked(%x: tensor<3x2xf32>, %h: tensor<6xf16>) {
  %s = arith.constant dense<65536.0> : tensor<f32>
  %r:3 = call @walked(%x, %h, %s) : (tensor<3x2xf32>, tensor<6xf16>, tensor<f32>) -> (tensor<2x3xf32>, tensor<6xf32>, tensor<i1>)
  call @flag(%r#2) : (tensor<i1>) -> ()
  return
}

func.func @run_kept(%x: tensor<6xf32>, %y: tensor<6xf32>) {
  %s = arith.constant dense<65536.0> : tensor<f32>
  %a:2 = call @kept_scaled(%x, %y, %s) : (tensor<6xf32>, tensor<6xf32>, tensor<f32>) -> (tensor<6xf32>, tensor<i1>)
  call @flag(%a#1) : (tensor<i1>) -> ()
  %b:2 = call @kept_product(%x, %y, %s) : (tensor<6xf32>, tensor<6xf32>, tensor<f32>) -> (tensor<6xf32>, tensor<i1>)
  call @flag(%b#1) : (tensor<i1>) -> ()
  %c:2 = call @kept_narrowed(%x, %y, %s) : (tensor<6xf32>, tensor<6xf32>, tensor<f32>) -> (tensor<6xf16>, tensor<i1>)
  call @flag(%c#1) : (tensor<i1>) -> ()
  return
}

// Each call prints its flags: @walked one, @kept_* three (scaled, product,
// narrowed).
// NUM: 0, 1, 1, 1, 0, 0, 0, 1, 0, 1, 0, 1, 1, 0, 0, 1,
func.func @main() {
  %big = arith.constant dense<[[3.0e+38, -3.0e+38], [1.0, 0.0], [-2.0, 5.0]]> : tensor<3x2xf32>
  %inf = arith.constant dense<[[1.0, 2.0], [0x7F800000, 0.0], [-2.0, 5.0]]> : tensor<3x2xf32>
  %h = arith.constant dense<[65504.0, -65504.0, 1.0, 0.0, -1.0, 2.0]> : tensor<6xf16>
  %hnan = arith.constant dense<[1.0, 0x7E00, 1.0, 0.0, -1.0, 2.0]> : tensor<6xf16>
  // f32 near its max, times 0.1: finite (0); inf in x (1); nan in h (1);
  // -inf in h (1).
  call @run_walked(%big, %h) : (tensor<3x2xf32>, tensor<6xf16>) -> ()
  call @run_walked(%inf, %h) : (tensor<3x2xf32>, tensor<6xf16>) -> ()
  call @run_walked(%big, %hnan) : (tensor<3x2xf32>, tensor<6xf16>) -> ()
  %hninf = arith.constant dense<[1.0, 0xFC00, 1.0, 0.0, -1.0, 2.0]> : tensor<6xf16>
  call @run_walked(%big, %hninf) : (tensor<3x2xf32>, tensor<6xf16>) -> ()
  // Finite small values: 0, 0, 0. 2 * 3e38 = inf where x is finite (and
  // 3e38 does not fit f16): 1, 0, 1. 1e19 * 1e20 = inf (1e19 does not fit f16 either): 0, 1, 1. 1e5
  // does not fit f16: 0, 0, 1.
  %small = arith.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]> : tensor<6xf32>
  %large = arith.constant dense<[1.0, 3.0e+38, 3.0, 4.0, 5.0, 6.0]> : tensor<6xf32>
  %one = arith.constant dense<1.0> : tensor<6xf32>
  %e19 = arith.constant dense<[1.0, 2.0, 1.0e+19, 4.0, 5.0, 6.0]> : tensor<6xf32>
  %e20 = arith.constant dense<[1.0, 2.0, 1.0e+20, 4.0, 5.0, 6.0]> : tensor<6xf32>
  %wide = arith.constant dense<[1.0, 2.0, 3.0, 1.0e+5, 5.0, 6.0]> : tensor<6xf32>
  call @run_kept(%small, %small) : (tensor<6xf32>, tensor<6xf32>) -> ()
  call @run_kept(%large, %one) : (tensor<6xf32>, tensor<6xf32>) -> ()
  call @run_kept(%e19, %e20) : (tensor<6xf32>, tensor<6xf32>) -> ()
  call @run_kept(%wide, %one) : (tensor<6xf32>, tensor<6xf32>) -> ()
  call @printNewline() : () -> ()
  return
}
