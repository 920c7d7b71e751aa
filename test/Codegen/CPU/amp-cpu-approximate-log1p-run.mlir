// amp-cpu-approximate-math (in amp-cpu-pipeline): math.log1p on f32 becomes
// upstream's x * log(u) / (u - 1) with u = 1 + x (x where u is 1 or inf)
// instead of MathToLLVM's log(1 + x), which cancels near 0 (log1p(1e-3) was
// 400 ulp off, log1p(7e-5) 3.5e-4 relative). Checked against libm's log1pf
// (called directly, so it stays libm): the worst distance in ulp over 4M
// points of [-0.9, 1) (values near 0 included), over 2M magnitudes from
// 1e-30 to 0.92 of each sign (each 1.0000345 times the one before), and over
// 4M points of [1, 1e6); inf, -1, -2, nan, -0, a tiny and a huge argument as
// libm gives them. Measured: 2 ulp in each range.
// RUN: amp-opt %s --amp-cpu-pipeline="blas=false runtime-allocator=false parallel-min-work=0" --mlir-print-ir-after=amp-cpu-approximate-math -o /dev/null 2>&1 | FileCheck %s --check-prefix=IR
// RUN: amp-opt %s --amp-cpu-pipeline="blas=false runtime-allocator=false parallel-min-work=0" \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s

// IR-LABEL: func.func @log1p_of(
// IR-NOT: math.log1p
// IR: math.log
// IR-LABEL: func.func @ulps(

// CHECK: {{^[0-2]$}}
// CHECK-NEXT: {{^[0-2]$}}
// CHECK-NEXT: {{^[0-2]$}}
// CHECK-NEXT: {{^[0-2]$}}
// CHECK-NEXT: {{^inf$}}
// CHECK-NEXT: {{^-inf$}}
// CHECK-NEXT: {{^-?nan$}}
// CHECK-NEXT: {{^-?nan$}}
// CHECK-NEXT: {{^-0$}}
// CHECK-NEXT: {{^1e-30$}}
// CHECK-NEXT: {{^69.0776$}}

func.func private @log1pf(f32) -> f32
// (Not inlined or folded: the pipeline has no inliner.)
func.func @log1p_of(%x: f32) -> f32 {
  %t = math.log1p %x : f32
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
    %a = func.call @log1p_of(%x) : (f32) -> f32
    %b = func.call @log1pf(%x) : (f32) -> f32
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
  // [-0.9, 1)
  %n = arith.constant 4000000 : index
  %s1 = arith.constant -0.9 : f32
  %d1 = arith.constant 4.75e-7 : f32
  %w1 = func.call @worst(%s1, %one, %d1, %n) : (f32, f32, f32, index) -> i32
  vector.print %w1 : i32
  // 1e-30 up to 0.92, and -1e-30 down to -0.92
  %m = arith.constant 2000000 : index
  %g = arith.constant 1.0000345 : f32
  %tiny = arith.constant 1.0e-30 : f32
  %ntiny = arith.constant -1.0e-30 : f32
  %w2 = func.call @worst(%tiny, %g, %zero, %m) : (f32, f32, f32, index) -> i32
  vector.print %w2 : i32
  %w3 = func.call @worst(%ntiny, %g, %zero, %m) : (f32, f32, f32, index) -> i32
  vector.print %w3 : i32
  // [1, 1e6)
  %s4 = arith.constant 1.0 : f32
  %d4 = arith.constant 0.25 : f32
  %w4 = func.call @worst(%s4, %one, %d4, %n) : (f32, f32, f32, index) -> i32
  vector.print %w4 : i32
  %inf = arith.constant 0x7F800000 : f32
  %mone = arith.constant -1.0 : f32
  %mtwo = arith.constant -2.0 : f32
  %nan = arith.constant 0x7FC00000 : f32
  %nz = arith.constant -0.0 : f32
  %small = arith.constant 1.0e-30 : f32
  %big = arith.constant 1.0e30 : f32
  %x = vector.from_elements %inf, %mone, %mtwo, %nan, %nz, %small, %big : vector<7xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  scf.for %i = %c0 to %c7 step %c1 {
    %xi = vector.extract %x[%i] : f32 from vector<7xf32>
    %e = func.call @log1p_of(%xi) : (f32) -> f32
    vector.print %e : f32
  }
  return
}
