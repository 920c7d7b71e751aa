// amp-cpu-approximate-math (in amp-cpu-pipeline): math.tanh and math.erf
// become upstream's polynomials, checked against libm's tanhf and erff
// (called directly, so they stay libm). Worst distance in ulp over 2M points
// of [-10, 10) (tanh) / [-5, 5) (erf: +-1 in f32 beyond 3.92), 2M points of
// [1e-6, 1) and 2M tiny values from 1e-30 (both return ~x / ~1.128x there):
// at most 5 ulp; inf, nan, large values as libm gives them; -0 as tanhf
// gives it (-0), erf(-0) = +0 (the one documented difference).
// RUN: amp-opt %s --amp-cpu-pipeline="blas=false runtime-allocator=false parallel-min-work=0" --mlir-print-ir-after=amp-cpu-approximate-math -o /dev/null 2>&1 | FileCheck %s --check-prefix=IR
// RUN: amp-opt %s --amp-cpu-pipeline="blas=false runtime-allocator=false parallel-min-work=0" \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s

// IR-LABEL: func.func @tanh_of(
// IR-NOT: math.tanh
// IR: math.fma
// IR-LABEL: func.func @erf_of(
// IR-NOT: math.erf
// IR: math.fma
// IR-LABEL: func.func @main(

// tanh:
// CHECK: {{^[0-5]$}}
// CHECK-NEXT: {{^[0-5]$}}
// CHECK-NEXT: {{^0$}}
// CHECK-NEXT: {{^1$}}
// CHECK-NEXT: {{^-1$}}
// CHECK-NEXT: {{^nan$}}
// CHECK-NEXT: {{^1$}}
// CHECK-NEXT: {{^-1$}}
// CHECK-NEXT: {{^-0$}}
// erf:
// CHECK-NEXT: {{^[0-5]$}}
// CHECK-NEXT: {{^[0-5]$}}
// CHECK-NEXT: {{^[0-1]$}}
// CHECK-NEXT: {{^1$}}
// CHECK-NEXT: {{^-1$}}
// CHECK-NEXT: {{^nan$}}
// CHECK-NEXT: {{^1$}}
// CHECK-NEXT: {{^-1$}}
// CHECK-NEXT: {{^0$}}

func.func private @tanhf(f32) -> f32
func.func private @erff(f32) -> f32

// (Not inlined or folded: the pipeline has no inliner.)
func.func @tanh_of(%x: f32) -> f32 {
  %t = math.tanh %x : f32
  return %t : f32
}

func.func @erf_of(%x: f32) -> f32 {
  %t = math.erf %x : f32
  return %t : f32
}

// |a - b| in ulp (a and b of one sign).
func.func @ulps(%a: f32, %b: f32) -> i32 {
  %zero = arith.constant 0 : i32
  %ai = arith.bitcast %a : f32 to i32
  %bi = arith.bitcast %b : f32 to i32
  %d = arith.subi %ai, %bi : i32
  %nd = arith.subi %zero, %d : i32
  %ad = arith.maxsi %d, %nd : i32
  return %ad : i32
}

// Worst ulp distance between the approximation and libm over n points from
// start: of tanh if %erf is false, of erf otherwise.
func.func @worst(%erf: i1, %start: f32, %step: f32, %n: index) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0 : i32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%m = %zero) -> i32 {
    %ii = arith.index_cast %i : index to i32
    %fi = arith.sitofp %ii : i32 to f32
    %off = arith.mulf %fi, %step : f32
    %x = arith.addf %start, %off : f32
    %ad = scf.if %erf -> i32 {
      %a = func.call @erf_of(%x) : (f32) -> f32
      %b = func.call @erff(%x) : (f32) -> f32
      %u = func.call @ulps(%a, %b) : (f32, f32) -> i32
      scf.yield %u : i32
    } else {
      %a = func.call @tanh_of(%x) : (f32) -> f32
      %b = func.call @tanhf(%x) : (f32) -> f32
      %u = func.call @ulps(%a, %b) : (f32, f32) -> i32
      scf.yield %u : i32
    }
    %m2 = arith.maxsi %m, %ad : i32
    scf.yield %m2 : i32
  }
  return %r : i32
}

func.func @check(%erf: i1, %wide: f32, %wstep: f32) {
  %n = arith.constant 2000000 : index
  %w1 = func.call @worst(%erf, %wide, %wstep, %n) : (i1, f32, f32, index) -> i32
  vector.print %w1 : i32
  %s2 = arith.constant 1.0e-6 : f32
  %d2 = arith.constant 5.0e-7 : f32
  %w2 = func.call @worst(%erf, %s2, %d2, %n) : (i1, f32, f32, index) -> i32
  vector.print %w2 : i32
  %s3 = arith.constant 1.0e-30 : f32
  %d3 = arith.constant 1.0e-36 : f32
  %w3 = func.call @worst(%erf, %s3, %d3, %n) : (i1, f32, f32, index) -> i32
  vector.print %w3 : i32
  %inf = arith.constant 0x7F800000 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %nan = arith.constant 0x7FC00000 : f32
  %big = arith.constant 100.0 : f32
  %nbig = arith.constant -1.0e30 : f32
  %nz = arith.constant -0.0 : f32
  %x = vector.from_elements %inf, %ninf, %nan, %big, %nbig, %nz : vector<6xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  scf.for %i = %c0 to %c6 step %c1 {
    %xi = vector.extract %x[%i] : f32 from vector<6xf32>
    %t = scf.if %erf -> f32 {
      %e = func.call @erf_of(%xi) : (f32) -> f32
      scf.yield %e : f32
    } else {
      %h = func.call @tanh_of(%xi) : (f32) -> f32
      scf.yield %h : f32
    }
    vector.print %t : f32
  }
  return
}

func.func @main() {
  %false = arith.constant false
  %true = arith.constant true
  %s1 = arith.constant -10.0 : f32
  %d1 = arith.constant 1.0e-5 : f32
  func.call @check(%false, %s1, %d1) : (i1, f32, f32) -> ()
  %e1 = arith.constant -5.0 : f32
  %f1 = arith.constant 5.0e-6 : f32
  func.call @check(%true, %e1, %f1) : (i1, f32, f32) -> ()
  return
}
