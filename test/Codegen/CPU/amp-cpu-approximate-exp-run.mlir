// amp-cpu-approximate-math (in amp-cpu-pipeline): math.exp on f32 becomes
// upstream's polynomial (populateMathPolynomialApproximationPatterns, exp
// only: 2^k * p(r) after a range reduction, clamped), checked against libm's
// expf (called directly, so it stays libm). Worst distance in ulp over 4M
// points of [-87, 89) (every result a normal float): at most 5; over 4M of
// [-1, 1): at most 1. inf, -inf, nan, overflow (exp(88.75) = inf) and
// underflow as libm gives them, except that a result below FLT_MIN (x below
// about -87.3, libm's subnormals) is 0: an absolute error under 1.2e-38.
// RUN: amp-opt %s --amp-cpu-pipeline="blas=false runtime-allocator=false parallel-min-work=0" --mlir-print-ir-after=amp-cpu-approximate-math -o /dev/null 2>&1 | FileCheck %s --check-prefix=IR
// RUN: amp-opt %s --amp-cpu-pipeline="blas=false runtime-allocator=false parallel-min-work=0" \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s

// IR-LABEL: func.func @exp_of(
// IR-NOT: math.exp
// IR: math.fma
// IR-LABEL: func.func @ulps(

// CHECK: {{^[0-5]$}}
// CHECK-NEXT: {{^[0-1]$}}
// CHECK-NEXT: {{^inf$}}
// CHECK-NEXT: {{^0$}}
// CHECK-NEXT: {{^nan$}}
// CHECK-NEXT: {{^inf$}}
// CHECK-NEXT: {{^0$}}
// CHECK-NEXT: {{^1$}}
// CHECK-NEXT: {{^3.32598e\+38$}}
// CHECK-NEXT: {{^inf$}}
// CHECK-NEXT: {{^0$}}

func.func private @expf(f32) -> f32
// (Not inlined or folded: the pipeline has no inliner.)
func.func @exp_of(%x: f32) -> f32 {
  %t = math.exp %x : f32
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
// start, step apart.
func.func @worst(%start: f32, %step: f32, %n: index) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0 : i32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%m = %zero) -> i32 {
    %ii = arith.index_cast %i : index to i32
    %fi = arith.sitofp %ii : i32 to f32
    %off = arith.mulf %fi, %step : f32
    %x = arith.addf %start, %off : f32
    %a = func.call @exp_of(%x) : (f32) -> f32
    %b = func.call @expf(%x) : (f32) -> f32
    %u = func.call @ulps(%a, %b) : (f32, f32) -> i32
    %m2 = arith.maxsi %m, %u : i32
    scf.yield %m2 : i32
  }
  return %r : i32
}

func.func @main() {
  // [-87, 89): every result a normal float.
  %n = arith.constant 4000000 : index
  %s1 = arith.constant -87.0 : f32
  %d1 = arith.constant 4.4e-5 : f32
  %w1 = func.call @worst(%s1, %d1, %n) : (f32, f32, index) -> i32
  vector.print %w1 : i32
  // [-1, 1).
  %s2 = arith.constant -1.0 : f32
  %d2 = arith.constant 5.0e-7 : f32
  %w2 = func.call @worst(%s2, %d2, %n) : (f32, f32, index) -> i32
  vector.print %w2 : i32
  %inf = arith.constant 0x7F800000 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %nan = arith.constant 0x7FC00000 : f32
  %big = arith.constant 100.0 : f32
  %nbig = arith.constant -1.0e30 : f32
  %nz = arith.constant -0.0 : f32
  %top = arith.constant 88.7 : f32
  %over = arith.constant 88.75 : f32
  %sub = arith.constant -88.0 : f32
  %x = vector.from_elements %inf, %ninf, %nan, %big, %nbig, %nz, %top, %over, %sub : vector<9xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c9 = arith.constant 9 : index
  scf.for %i = %c0 to %c9 step %c1 {
    %xi = vector.extract %x[%i] : f32 from vector<9xf32>
    %e = func.call @exp_of(%xi) : (f32) -> f32
    vector.print %e : f32
  }
  return
}
