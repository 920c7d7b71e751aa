// amp-cpu-approximate-math (in amp-cpu-pipeline): math.expm1 on f32 becomes
// upstream's (u - 1) * x / log(u) with u = exp(x) instead of MathToLLVM's
// exp(x) - 1, which cancels near 0 (expm1(1e-3) was 200 ulp off, expm1(7e-5)
// 3.8e-4 relative). Checked
// against libm's expm1f (called directly, so it stays libm): the worst
// distance in ulp over 4M points of [-1, 1) (values near 0 included), over 2M
// magnitudes from 1e-30 to 1 of each sign (each 1.0000345 times the one
// before), and over 4M points of [-87, 88); inf, -inf, nan, -0, a tiny
// argument, overflow and the saturation at -1 as libm gives them. Measured:
// 2 ulp in each range.
// RUN: amp-opt %s --amp-cpu-pipeline="blas=false runtime-allocator=false parallel-min-work=0" --mlir-print-ir-after=amp-cpu-approximate-math -o /dev/null 2>&1 | FileCheck %s --check-prefix=IR
// RUN: amp-opt %s --amp-cpu-pipeline="blas=false runtime-allocator=false parallel-min-work=0" \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s

// IR-LABEL: func.func @expm1_of(
// IR-NOT: math.expm1
// IR: math.exp
// IR: math.log
// IR-LABEL: func.func @ulps(

// CHECK: {{^[0-2]$}}
// CHECK-NEXT: {{^[0-2]$}}
// CHECK-NEXT: {{^[0-2]$}}
// CHECK-NEXT: {{^[0-2]$}}
// CHECK-NEXT: {{^inf$}}
// CHECK-NEXT: {{^-1$}}
// CHECK-NEXT: {{^nan$}}
// CHECK-NEXT: {{^-0$}}
// CHECK-NEXT: {{^1e-30$}}
// CHECK-NEXT: {{^inf$}}
// CHECK-NEXT: {{^-1$}}

func.func private @expm1f(f32) -> f32
// (Not inlined or folded: the pipeline has no inliner.)
func.func @expm1_of(%x: f32) -> f32 {
  %t = math.expm1 %x : f32
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
// start, each `factor` times the one before plus `step`.
func.func @worst(%start: f32, %factor: f32, %step: f32, %n: index) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0 : i32
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%m = %zero, %x = %start) -> (i32, f32) {
    %a = func.call @expm1_of(%x) : (f32) -> f32
    %b = func.call @expm1f(%x) : (f32) -> f32
    %u = func.call @ulps(%a, %b) : (f32, f32) -> i32
    %m2 = arith.maxsi %m, %u : i32
    %scaled = arith.mulf %x, %factor : f32
    %next = arith.addf %scaled, %step : f32
    scf.yield %m2, %next : i32, f32
  }
  return %r#0 : i32
}

func.func @main() {
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  // [-1, 1)
  %n = arith.constant 4000000 : index
  %s1 = arith.constant -1.0 : f32
  %d1 = arith.constant 5.0e-7 : f32
  %w1 = func.call @worst(%s1, %one, %d1, %n) : (f32, f32, f32, index) -> i32
  vector.print %w1 : i32
  // 1e-30 up to 1, and -1e-30 down to -1
  %m = arith.constant 2000000 : index
  %g = arith.constant 1.0000345 : f32
  %tiny = arith.constant 1.0e-30 : f32
  %ntiny = arith.constant -1.0e-30 : f32
  %w2 = func.call @worst(%tiny, %g, %zero, %m) : (f32, f32, f32, index) -> i32
  vector.print %w2 : i32
  %w3 = func.call @worst(%ntiny, %g, %zero, %m) : (f32, f32, f32, index) -> i32
  vector.print %w3 : i32
  // [-87, 88)
  %s4 = arith.constant -87.0 : f32
  %d4 = arith.constant 4.375e-5 : f32
  %w4 = func.call @worst(%s4, %one, %d4, %n) : (f32, f32, f32, index) -> i32
  vector.print %w4 : i32
  %inf = arith.constant 0x7F800000 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %nan = arith.constant 0x7FC00000 : f32
  %nz = arith.constant -0.0 : f32
  %small = arith.constant 1.0e-30 : f32
  %big = arith.constant 100.0 : f32
  %nbig = arith.constant -100.0 : f32
  %x = vector.from_elements %inf, %ninf, %nan, %nz, %small, %big, %nbig : vector<7xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  scf.for %i = %c0 to %c7 step %c1 {
    %xi = vector.extract %x[%i] : f32 from vector<7xf32>
    %e = func.call @expm1_of(%xi) : (f32) -> f32
    vector.print %e : f32
  }
  return
}
