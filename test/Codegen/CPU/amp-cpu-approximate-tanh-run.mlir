// amp-cpu-approximate-tanh (in amp-cpu-pipeline): math.tanh becomes upstream's
// polynomial, checked against libm's tanhf (called directly, so it stays
// libm). Worst distance in ulp over 2M points of [-10, 10), 2M points of
// [1e-6, 1) and 2M tiny values from 1e-30 (the polynomial returns x there):
// at most 5 ulp; inf, nan, large values and -0 as tanhf gives them.
// RUN: amp-opt %s --amp-cpu-pipeline="blas=false runtime-allocator=false parallel-min-work=0" --mlir-print-ir-after=amp-cpu-approximate-tanh -o /dev/null 2>&1 | FileCheck %s --check-prefix=IR
// RUN: amp-opt %s --amp-cpu-pipeline="blas=false runtime-allocator=false parallel-min-work=0" \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s

// IR-LABEL: func.func @tanh_of(
// IR-NOT: math.tanh
// IR: math.fma
// IR-LABEL: func.func @main(

// CHECK: {{^[0-5]$}}
// CHECK-NEXT: {{^[0-5]$}}
// CHECK-NEXT: {{^0$}}
// CHECK-NEXT: {{^1$}}
// CHECK-NEXT: {{^-1$}}
// CHECK-NEXT: {{^nan$}}
// CHECK-NEXT: {{^1$}}
// CHECK-NEXT: {{^-1$}}
// CHECK-NEXT: {{^-0$}}

func.func private @tanhf(f32) -> f32

// (Not inlined or folded: the pipeline has no inliner.)
func.func @tanh_of(%x: f32) -> f32 {
  %t = math.tanh %x : f32
  return %t : f32
}

// Worst ulp distance between math.tanh and tanhf over n points from start.
func.func @worst(%start: f32, %step: f32, %n: index) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0 : i32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%m = %zero) -> i32 {
    %ii = arith.index_cast %i : index to i32
    %fi = arith.sitofp %ii : i32 to f32
    %off = arith.mulf %fi, %step : f32
    %x = arith.addf %start, %off : f32
    %a = func.call @tanh_of(%x) : (f32) -> f32
    %b = func.call @tanhf(%x) : (f32) -> f32
    %ai = arith.bitcast %a : f32 to i32
    %bi = arith.bitcast %b : f32 to i32
    %d = arith.subi %ai, %bi : i32
    %nd = arith.subi %zero, %d : i32
    %ad = arith.maxsi %d, %nd : i32
    %m2 = arith.maxsi %m, %ad : i32
    scf.yield %m2 : i32
  }
  return %r : i32
}

func.func @main() {
  %n = arith.constant 2000000 : index
  %s1 = arith.constant -10.0 : f32
  %d1 = arith.constant 1.0e-5 : f32
  %w1 = func.call @worst(%s1, %d1, %n) : (f32, f32, index) -> i32
  vector.print %w1 : i32
  %s2 = arith.constant 1.0e-6 : f32
  %d2 = arith.constant 5.0e-7 : f32
  %w2 = func.call @worst(%s2, %d2, %n) : (f32, f32, index) -> i32
  vector.print %w2 : i32
  %s3 = arith.constant 1.0e-30 : f32
  %d3 = arith.constant 1.0e-36 : f32
  %w3 = func.call @worst(%s3, %d3, %n) : (f32, f32, index) -> i32
  vector.print %w3 : i32
  %inf = arith.constant 0x7F800000 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %nan = arith.constant 0x7FC00000 : f32
  %big = arith.constant 100.0 : f32
  %nbig = arith.constant -1.0e30 : f32
  %nz = arith.constant -0.0 : f32
  %t1 = func.call @tanh_of(%inf) : (f32) -> f32
  %t2 = func.call @tanh_of(%ninf) : (f32) -> f32
  %t3 = func.call @tanh_of(%nan) : (f32) -> f32
  %t4 = func.call @tanh_of(%big) : (f32) -> f32
  %t5 = func.call @tanh_of(%nbig) : (f32) -> f32
  %t6 = func.call @tanh_of(%nz) : (f32) -> f32
  vector.print %t1 : f32
  vector.print %t2 : f32
  vector.print %t3 : f32
  vector.print %t4 : f32
  vector.print %t5 : f32
  vector.print %t6 : f32
  return
}
