// A contraction into a zero-filled f32 buffer that is only read through
// arith.truncf (amp-autocast's cast after a matmul, here fused with a relu)
// writes f16 directly: amp_rt_gemm_out (f32 accumulation, one rounding), the
// reader takes the f16 buffer with its truncf removed, the fill and the f32
// buffer go. Run once as linalg loops and once through the CPU runtime: the
// same bits (1.500732421875 and 5.24853515625 both round in f16).
// RUN: amp-opt %s --amp-lower-contractions-to-runtime | FileCheck %s --check-prefix=CALLS
// RUN: amp-opt %s --amp-lower-contractions-to-runtime="low-precision-store-views" | FileCheck %s --check-prefix=VIEWS
// RUN: amp-opt %s --convert-linalg-to-loops --convert-scf-to-cf --expand-strided-metadata --finalize-memref-to-llvm --arith-expand --convert-arith-to-llvm --convert-func-to-llvm --convert-cf-to-llvm --reconcile-unrealized-casts \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s
// RUN: amp-opt %s --amp-lower-contractions-to-runtime --convert-linalg-to-loops --convert-scf-to-cf --expand-strided-metadata --finalize-memref-to-llvm --arith-expand --convert-arith-to-llvm --convert-func-to-llvm --convert-cf-to-llvm --reconcile-unrealized-casts \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%amp_runtime_dir/libamp_runtime_cpu.so,%mlir_c_runner_utils | FileCheck %s
// RUN: amp-opt %s --amp-lower-contractions-to-runtime="low-precision-store-views" --convert-linalg-to-loops --convert-scf-to-cf --expand-strided-metadata --finalize-memref-to-llvm --arith-expand --convert-arith-to-llvm --convert-func-to-llvm --convert-cf-to-llvm --reconcile-unrealized-casts \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%amp_runtime_dir/libamp_runtime_cpu.so,%mlir_c_runner_utils | FileCheck %s

// CHECK: 1.50098, 0, 5.25, 13,
// CHECK-NEXT: 1.50098, 5.25, -0.5, 13,
// CHECK-NEXT: 1.50098, 0, 5.25, 13, 0.250488, 0, 3, 0.5,
// CHECK-NEXT: -1.50098, 0.5, -5.25, -13, -0.250488, 2.75, -3, -0.5,

// CALLS-LABEL: func.func @relu_of_matmul(
// CALLS-NOT: linalg.fill
// CALLS-NOT: memref<2x2xf32>
// CALLS: %[[D:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x2xf16>
// CALLS: call @amp_rt_gemm_out({{.*}}) {amp.contraction = {{[0-9]+}} : i64} :
// CALLS: linalg.generic {{.*}} ins(%[[D]] : memref<2x2xf16>) outs(%{{.*}} : memref<2x2xf16>)
// CALLS-NEXT: ^bb0(%[[IN:.*]]: f16, %{{.*}}: f16):
// CALLS-NEXT: arith.maximumf %[[IN]], %{{.*}} : f16
// CALLS: memref.dealloc %[[D]] : memref<2x2xf16>
func.func @relu_of_matmul(%a: memref<2x3xf16>, %b: memref<3x2xf16>, %out: memref<2x2xf16>) {
  %zero = arith.constant 0.0 : f32
  %zero16 = arith.constant 0.0 : f16
  %c = memref.alloc() {alignment = 64 : i64} : memref<2x2xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<2x2xf32>)
  linalg.matmul ins(%a, %b : memref<2x3xf16>, memref<3x2xf16>) outs(%c : memref<2x2xf32>)
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<2x2xf32>) outs(%out : memref<2x2xf16>) {
  ^bb0(%x: f32, %o: f16):
    %t = arith.truncf %x : f32 to f16
    %r = arith.maximumf %t, %zero16 : f16
    linalg.yield %r : f16
  }
  memref.dealloc %c : memref<2x2xf32>
  return
}

// The same with the zero fill as a linalg.generic without inputs (what
// elementwise fusion leaves of a fill): it goes too, and the GEMM writes f16.
// CALLS-LABEL: func.func @relu_of_matmul_generic_fill(
// CALLS-NOT: linalg.generic {{.*}} outs(%{{.*}} : memref<2x2xf32>)
// CALLS-NOT: memref<2x2xf32>
// CALLS: call @amp_rt_gemm_out(
func.func @relu_of_matmul_generic_fill(%a: memref<2x3xf16>, %b: memref<3x2xf16>, %out: memref<2x2xf16>) {
  %zero = arith.constant 0.0 : f32
  %zero16 = arith.constant 0.0 : f16
  %c = memref.alloc() {alignment = 64 : i64} : memref<2x2xf32>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%c : memref<2x2xf32>) {
  ^bb0(%o: f32):
    linalg.yield %zero : f32
  }
  linalg.matmul ins(%a, %b : memref<2x3xf16>, memref<3x2xf16>) outs(%c : memref<2x2xf32>)
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<2x2xf32>) outs(%out : memref<2x2xf16>) {
  ^bb0(%x: f32, %o: f16):
    %t = arith.truncf %x : f32 to f16
    %r = arith.maximumf %t, %zero16 : f16
    linalg.yield %r : f16
  }
  memref.dealloc %c : memref<2x2xf32>
  return
}

// C a reshaped view of the buffer (attention's [B, H, T, Dh] product into a
// [B*H, T, Dh] buffer), read back transposed: the same view of an f16
// buffer, the reader's map unchanged.
// CALLS-LABEL: func.func @view_read_transposed(
// CALLS-NOT: linalg.fill
// CALLS-NOT: xf32>
// CALLS: %[[D:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x2xf16>
// CALLS: %[[V:.*]] = memref.expand_shape %[[D]] {{\[\[}}0, 1], [2]] output_shape [1, 2, 2] : memref<2x2xf16> into memref<1x2x2xf16>
// CALLS: call @amp_rt_gemm_out({{.*}}) {amp.contraction = {{[0-9]+}} : i64} :
// CALLS: linalg.generic {{.*}} ins(%[[V]] : memref<1x2x2xf16>) outs(%{{.*}} : memref<1x2x2xf16>)
// CALLS-NEXT: ^bb0(%[[IN:.*]]: f16, %{{.*}}: f16):
// CALLS-NEXT: linalg.yield %[[IN]] : f16
// CALLS: memref.dealloc %[[D]] : memref<2x2xf16>
func.func @view_read_transposed(%a: memref<1x2x3xf16>, %b: memref<1x3x2xf16>, %out: memref<1x2x2xf16>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() {alignment = 64 : i64} : memref<2x2xf32>
  %v = memref.expand_shape %c [[0, 1], [2]] output_shape [1, 2, 2] : memref<2x2xf32> into memref<1x2x2xf32>
  linalg.fill ins(%zero : f32) outs(%v : memref<1x2x2xf32>)
  linalg.batch_matmul ins(%a, %b : memref<1x2x3xf16>, memref<1x3x2xf16>) outs(%v : memref<1x2x2xf32>)
  linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k, j)>, affine_map<(i, j, k) -> (i, j, k)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%v : memref<1x2x2xf32>) outs(%out : memref<1x2x2xf16>) {
  ^bb0(%x: f32, %o: f16):
    %t = arith.truncf %x : f32 to f16
    linalg.yield %t : f16
  }
  memref.dealloc %c : memref<2x2xf32>
  return
}

// A linear layer's product (TOSA's 1 x M x N, M = B * T) read through views
// of its own: as B x T x N by one reader, as M x N by another. With
// low-precision-store-views (the GPU pipeline's choice) those views are made
// of the f16 buffer and the GEMM writes f16; without, C stays f32 (the CPU
// runtime would round it in a pass of its own).
// CALLS-LABEL: func.func @reader_views(
// CALLS: linalg.fill
// CALLS: call @amp_rt_gemm(
// VIEWS-LABEL: func.func @reader_views(
// VIEWS-NOT: linalg.fill
// VIEWS-NOT: xf32>
// VIEWS: %[[D:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x4x2xf16>
// VIEWS: call @amp_rt_gemm_out({{.*}}) {amp.contraction = {{[0-9]+}} : i64} :
// VIEWS: %[[M:.*]] = memref.collapse_shape %[[D]] {{\[\[}}0, 1], [2]] : memref<1x4x2xf16> into memref<4x2xf16>
// VIEWS: %[[BT:.*]] = memref.expand_shape %[[M]] {{\[\[}}0, 1], [2]] output_shape [2, 2, 2] : memref<4x2xf16> into memref<2x2x2xf16>
// VIEWS: linalg.generic {{.*}} ins(%[[BT]] : memref<2x2x2xf16>)
// VIEWS-NEXT: ^bb0(%[[IN:.*]]: f16, %{{.*}}: f16):
// VIEWS-NEXT: arith.maximumf %[[IN]], %{{.*}} : f16
// VIEWS: linalg.generic {{.*}} ins(%[[M]] : memref<4x2xf16>)
// VIEWS-NEXT: ^bb0(%[[IN2:.*]]: f16, %{{.*}}: f16):
// VIEWS-NEXT: arith.negf %[[IN2]] : f16
// VIEWS: memref.dealloc %[[D]] : memref<1x4x2xf16>
func.func @reader_views(%a: memref<1x4x3xf16>, %b: memref<1x3x2xf16>, %relu: memref<2x2x2xf16>, %neg: memref<4x2xf16>) {
  %zero = arith.constant 0.0 : f32
  %zero16 = arith.constant 0.0 : f16
  %c = memref.alloc() {alignment = 64 : i64} : memref<1x4x2xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<1x4x2xf32>)
  linalg.batch_matmul ins(%a, %b : memref<1x4x3xf16>, memref<1x3x2xf16>) outs(%c : memref<1x4x2xf32>)
  %m = memref.collapse_shape %c [[0, 1], [2]] : memref<1x4x2xf32> into memref<4x2xf32>
  %bt = memref.expand_shape %m [[0, 1], [2]] output_shape [2, 2, 2] : memref<4x2xf32> into memref<2x2x2xf32>
  linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, j, k)>, affine_map<(i, j, k) -> (i, j, k)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%bt : memref<2x2x2xf32>) outs(%relu : memref<2x2x2xf16>) {
  ^bb0(%x: f32, %o: f16):
    %t = arith.truncf %x : f32 to f16
    %r = arith.maximumf %t, %zero16 : f16
    linalg.yield %r : f16
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%m : memref<4x2xf32>) outs(%neg : memref<4x2xf16>) {
  ^bb0(%x: f32, %o: f16):
    %t = arith.truncf %x : f32 to f16
    %n = arith.negf %t : f16
    linalg.yield %n : f16
  }
  memref.dealloc %c : memref<1x4x2xf32>
  return
}

// Kept f32: the f32 result is also copied out (the loss, a gradient).
// CALLS-LABEL: func.func @f32_also_read(
// CALLS: linalg.fill
// CALLS: call @amp_rt_gemm(
func.func @f32_also_read(%a: memref<2x3xf16>, %b: memref<3x2xf16>, %out: memref<2x2xf16>, %out32: memref<2x2xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<2x2xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<2x2xf32>)
  linalg.matmul ins(%a, %b : memref<2x3xf16>, memref<3x2xf16>) outs(%c : memref<2x2xf32>)
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<2x2xf32>) outs(%out : memref<2x2xf16>) {
  ^bb0(%x: f32, %o: f16):
    %t = arith.truncf %x : f32 to f16
    linalg.yield %t : f16
  }
  memref.copy %c, %out32 : memref<2x2xf32> to memref<2x2xf32>
  return
}

// Kept f32: C starts at 0.5 (C += A B), not at 0.
// CALLS-LABEL: func.func @nonzero_init(
// CALLS: linalg.fill
// CALLS: call @amp_rt_gemm(
func.func @nonzero_init(%a: memref<2x3xf16>, %b: memref<3x2xf16>, %out: memref<2x2xf16>) {
  %half = arith.constant 0.5 : f32
  %c = memref.alloc() : memref<2x2xf32>
  linalg.fill ins(%half : f32) outs(%c : memref<2x2xf32>)
  linalg.matmul ins(%a, %b : memref<2x3xf16>, memref<3x2xf16>) outs(%c : memref<2x2xf32>)
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<2x2xf32>) outs(%out : memref<2x2xf16>) {
  ^bb0(%x: f32, %o: f16):
    %t = arith.truncf %x : f32 to f16
    linalg.yield %t : f16
  }
  return
}

memref.global "private" constant @a : memref<2x3xf16> = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, -6.0]]>
memref.global "private" constant @b : memref<3x2xf16> = dense<[[1.0, 0.5], [0.25, 1.0], [0.000244140625, -1.0]]>
memref.global "private" constant @a4 : memref<1x4x3xf16> = dense<[[[1.0, 2.0, 3.0], [4.0, 5.0, -6.0], [0.5, -1.0, 2.0], [3.0, 0.0, 1.0]]]>

func.func private @printF32(f32)
func.func private @printComma()
func.func private @printNewline()

func.func @main() {
  %a = memref.get_global @a : memref<2x3xf16>
  %b = memref.get_global @b : memref<3x2xf16>
  %d = memref.alloc() : memref<2x2xf16>
  call @relu_of_matmul(%a, %b, %d) : (memref<2x3xf16>, memref<3x2xf16>, memref<2x2xf16>) -> ()
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  scf.for %i = %c0 to %c2 step %c1 {
    scf.for %j = %c0 to %c2 step %c1 {
      %v = memref.load %d[%i, %j] : memref<2x2xf16>
      %w = arith.extf %v : f16 to f32
      func.call @printF32(%w) : (f32) -> ()
      func.call @printComma() : () -> ()
    }
  }
  func.call @printNewline() : () -> ()
  %a3 = memref.expand_shape %a [[0, 1], [2]] output_shape [1, 2, 3] : memref<2x3xf16> into memref<1x2x3xf16>
  %b3 = memref.expand_shape %b [[0, 1], [2]] output_shape [1, 3, 2] : memref<3x2xf16> into memref<1x3x2xf16>
  %e = memref.alloc() : memref<1x2x2xf16>
  call @view_read_transposed(%a3, %b3, %e) : (memref<1x2x3xf16>, memref<1x3x2xf16>, memref<1x2x2xf16>) -> ()
  scf.for %i = %c0 to %c2 step %c1 {
    scf.for %j = %c0 to %c2 step %c1 {
      %v = memref.load %e[%c0, %i, %j] : memref<1x2x2xf16>
      %w = arith.extf %v : f16 to f32
      func.call @printF32(%w) : (f32) -> ()
      func.call @printComma() : () -> ()
    }
  }
  func.call @printNewline() : () -> ()
  %a4 = memref.get_global @a4 : memref<1x4x3xf16>
  %relu = memref.alloc() : memref<2x2x2xf16>
  %neg = memref.alloc() : memref<4x2xf16>
  call @reader_views(%a4, %b3, %relu, %neg) : (memref<1x4x3xf16>, memref<1x3x2xf16>, memref<2x2x2xf16>, memref<4x2xf16>) -> ()
  %relu8 = memref.collapse_shape %relu [[0, 1, 2]] : memref<2x2x2xf16> into memref<8xf16>
  %neg8 = memref.collapse_shape %neg [[0, 1]] : memref<4x2xf16> into memref<8xf16>
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %relu8[%i] : memref<8xf16>
    %w = arith.extf %v : f16 to f32
    func.call @printF32(%w) : (f32) -> ()
    func.call @printComma() : () -> ()
  }
  func.call @printNewline() : () -> ()
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %neg8[%i] : memref<8xf16>
    %w = arith.extf %v : f16 to f32
    func.call @printF32(%w) : (f32) -> ()
    func.call @printComma() : () -> ()
  }
  func.call @printNewline() : () -> ()
  return
}
