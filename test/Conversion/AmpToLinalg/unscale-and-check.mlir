// Numeric check of amp.unscale_and_check's inline lowering (PyTorch's
// _amp_foreach_non_finite_check_and_unscale_): v * float32(1 / double(scale))
// computed in f32 and stored in the gradient's type, one flag for all
// tensors, nan and +-inf detected, denormals kept, and scale 1 leaving values
// untouched (nan included).
// RUN: amp-opt %s --amp-cpu-pipeline | mlir-runner -e main -entry-point-result=void -shared-libs=%amp_runtime_dir/libamp_runtime_cpu.so,%mlir_c_runner_utils | FileCheck %s

func.func private @printF32(f32)
func.func private @printI64(i64)
func.func private @printNewline()
func.func private @printComma()

func.func @unscale(%g0: tensor<4xf32>, %g1: tensor<2xf16>, %s: tensor<f32>) -> (tensor<4xf32>, tensor<2xf16>, tensor<i1>) {
  %u:2, %found = amp.unscale_and_check %g0, %g1 by %s : tensor<4xf32>, tensor<2xf16>
  return %u#0, %u#1, %found : tensor<4xf32>, tensor<2xf16>, tensor<i1>
}

func.func @show(%u0: tensor<4xf32>, %u1: tensor<2xf16>, %found: tensor<i1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %a = tensor.extract %u0[%c0] : tensor<4xf32>
  %b = tensor.extract %u0[%c1] : tensor<4xf32>
  %c = tensor.extract %u0[%c2] : tensor<4xf32>
  %d = tensor.extract %u0[%c3] : tensor<4xf32>
  %e16 = tensor.extract %u1[%c0] : tensor<2xf16>
  %f16 = tensor.extract %u1[%c1] : tensor<2xf16>
  %e = arith.extf %e16 : f16 to f32
  %f = arith.extf %f16 : f16 to f32
  %flag = tensor.extract %found[] : tensor<i1>
  %flag64 = arith.extui %flag : i1 to i64
  call @printF32(%a) : (f32) -> ()
  call @printComma() : () -> ()
  call @printF32(%b) : (f32) -> ()
  call @printComma() : () -> ()
  call @printF32(%c) : (f32) -> ()
  call @printComma() : () -> ()
  call @printF32(%d) : (f32) -> ()
  call @printComma() : () -> ()
  call @printF32(%e) : (f32) -> ()
  call @printComma() : () -> ()
  call @printF32(%f) : (f32) -> ()
  call @printComma() : () -> ()
  call @printI64(%flag64) : (i64) -> ()
  call @printNewline() : () -> ()
  return
}

// Large gradients are checked in stages (8192 = [256, 32]; 4099 is padded to
// [256, 17]): a bad value anywhere, the padded tensor's last element
// included, sets the flag.
func.func @flag_large(%g0: tensor<64x128xf16>, %g1: tensor<4099xf32>) {
  %s = arith.constant dense<1024.0> : tensor<f32>
  %u:2, %found = amp.unscale_and_check %g0, %g1 by %s : tensor<64x128xf16>, tensor<4099xf32>
  %flag = tensor.extract %found[] : tensor<i1>
  %flag64 = arith.extui %flag : i1 to i64
  call @printI64(%flag64) : (i64) -> ()
  call @printComma() : () -> ()
  return
}

func.func @large() {
  %c0 = arith.constant 0 : index
  %c37 = arith.constant 37 : index
  %c127 = arith.constant 127 : index
  %c4098 = arith.constant 4098 : index
  %c2049 = arith.constant 2049 : index
  %inf16 = arith.constant 0x7C00 : f16
  %nan16 = arith.constant 0x7E00 : f16
  %ninf = arith.constant 0xFF800000 : f32
  %nan = arith.constant 0x7FC00000 : f32
  %big = arith.constant 3.0e+38 : f32
  %a = arith.constant dense<-65504.0> : tensor<64x128xf16>
  %b = arith.constant dense<1.5> : tensor<4099xf32>
  // Finite everywhere (f16 max, f32 near max): 0.
  call @flag_large(%a, %b) : (tensor<64x128xf16>, tensor<4099xf32>) -> ()
  %bbig = tensor.insert %big into %b[%c4098] : tensor<4099xf32>
  call @flag_large(%a, %bbig) : (tensor<64x128xf16>, tensor<4099xf32>) -> ()
  // inf in the middle of the f16 tensor, nan in it, -inf / nan as the
  // padded tensor's last or a middle element: 1 each.
  %ainf = tensor.insert %inf16 into %a[%c37, %c127] : tensor<64x128xf16>
  call @flag_large(%ainf, %b) : (tensor<64x128xf16>, tensor<4099xf32>) -> ()
  %anan = tensor.insert %nan16 into %a[%c0, %c0] : tensor<64x128xf16>
  call @flag_large(%anan, %b) : (tensor<64x128xf16>, tensor<4099xf32>) -> ()
  %bninf = tensor.insert %ninf into %b[%c4098] : tensor<4099xf32>
  call @flag_large(%a, %bninf) : (tensor<64x128xf16>, tensor<4099xf32>) -> ()
  %bnan = tensor.insert %nan into %b[%c2049] : tensor<4099xf32>
  call @flag_large(%a, %bnan) : (tensor<64x128xf16>, tensor<4099xf32>) -> ()
  call @printNewline() : () -> ()
  return
}

func.func @main() {
  %s65536 = arith.constant dense<65536.0> : tensor<f32>
  %s1 = arith.constant dense<1.0> : tensor<f32>
  // Finite values, a denormal (1e-40) and f16 values: flag 0.
  // CHECK: 1, -2, 0, 1.4013e-45, 0.03125, -7.62939e-06, 0
  %g0 = arith.constant dense<[65536.0, -131072.0, 0.0, 1.0e-40]> : tensor<4xf32>
  %g1 = arith.constant dense<[2048.0, -0.5]> : tensor<2xf16>
  %r:3 = call @unscale(%g0, %g1, %s65536) : (tensor<4xf32>, tensor<2xf16>, tensor<f32>) -> (tensor<4xf32>, tensor<2xf16>, tensor<i1>)
  call @show(%r#0, %r#1, %r#2) : (tensor<4xf32>, tensor<2xf16>, tensor<i1>) -> ()
  // +inf in the f32 tensor: flag 1.
  // CHECK-NEXT: 1, inf, 0, 0, 0.03125, -7.62939e-06, 1
  %g0i = arith.constant dense<[65536.0, 0x7F800000, 0.0, 0.0]> : tensor<4xf32>
  %r2:3 = call @unscale(%g0i, %g1, %s65536) : (tensor<4xf32>, tensor<2xf16>, tensor<f32>) -> (tensor<4xf32>, tensor<2xf16>, tensor<i1>)
  call @show(%r2#0, %r2#1, %r2#2) : (tensor<4xf32>, tensor<2xf16>, tensor<i1>) -> ()
  // nan in the f32 tensor: flag 1.
  // CHECK-NEXT: 1, nan, 0, 0, 0.03125, -7.62939e-06, 1
  %g0n = arith.constant dense<[65536.0, 0x7FC00000, 0.0, 0.0]> : tensor<4xf32>
  %r3:3 = call @unscale(%g0n, %g1, %s65536) : (tensor<4xf32>, tensor<2xf16>, tensor<f32>) -> (tensor<4xf32>, tensor<2xf16>, tensor<i1>)
  call @show(%r3#0, %r3#1, %r3#2) : (tensor<4xf32>, tensor<2xf16>, tensor<i1>) -> ()
  // -inf in the f16 tensor only: the one flag covers every tensor.
  // CHECK-NEXT: 1, -2, 0, 1.4013e-45, -inf, -7.62939e-06, 1
  %g1i = arith.constant dense<[0xFC00, -0.5]> : tensor<2xf16>
  %r4:3 = call @unscale(%g0, %g1i, %s65536) : (tensor<4xf32>, tensor<2xf16>, tensor<f32>) -> (tensor<4xf32>, tensor<2xf16>, tensor<i1>)
  call @show(%r4#0, %r4#1, %r4#2) : (tensor<4xf32>, tensor<2xf16>, tensor<i1>) -> ()
  // scale 1: values unchanged, nan included; still flagged.
  // CHECK-NEXT: 65536, nan, 0, 0, 2048, -0.5, 1
  %r5:3 = call @unscale(%g0n, %g1, %s1) : (tensor<4xf32>, tensor<2xf16>, tensor<f32>) -> (tensor<4xf32>, tensor<2xf16>, tensor<i1>)
  call @show(%r5#0, %r5#1, %r5#2) : (tensor<4xf32>, tensor<2xf16>, tensor<i1>) -> ()
  // CHECK-NEXT: 0, 0, 1, 1, 1, 1,
  call @large() : () -> ()
  return
}
