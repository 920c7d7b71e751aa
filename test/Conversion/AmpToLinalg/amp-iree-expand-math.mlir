// amp-iree-expand-math: math.log10 and math.erfc, which IREE's llvm-cpu
// backend cannot compile (no libm: log10f undefined at iree-lld; no erfc
// lowering), as log(x) * (1 / ln 10) and upstream's f32 erfc approximation,
// f32 math.atan / math.atan2 (IREE's own are 40 ulp off) through Cephes'
// atanf, and f32 asinh / acosh / atanh / sinh (IREE's lose accuracy near 0
// or 1, asinh overflows) as fdlibm computes them; f32 sin / cos / tan as
// Cephes' sinf / cosf / tanf (IREE's reduce by pi/2 in one f32 step); f32
// cbrt as IREE's own plus one Newton step (IREE's is 11.9 ulp off); f32
// cosh as fdlibm's (IREE's overflows from 88.7); f32 powf in f64 with C's
// special cases (IREE's is 125 ulp off, NaN for negative bases) and f32 exp2
// in f64 (IREE's is 17 ulp off at 88.7); 16-bit types through f32 and
// rounded once.
// RUN: amp-opt %s --pass-pipeline='builtin.module(func.func(amp-iree-expand-math))' | FileCheck %s
// RUN: amp-opt %s --amp-tensor-input-pipeline | FileCheck %s --check-prefix=IREE

// CHECK-LABEL: func.func @log10
// CHECK-SAME: (%[[X:.*]]: f32, %[[H:.*]]: f16, %[[B:.*]]: bf16, %[[D:.*]]: f64)
// CHECK-NOT: math.log10
// CHECK-DAG: %[[C32:.*]] = arith.constant 0.434294492 : f32
// CHECK-DAG: %[[C64:.*]] = arith.constant 0.43429448190325176 : f64
// CHECK: %[[L:.*]] = math.log %[[X]] : f32
// CHECK: %[[R:.*]] = arith.mulf %[[L]], %[[C32]] : f32
// CHECK: %[[HX:.*]] = arith.extf %[[H]] : f16 to f32
// CHECK: %[[HL:.*]] = math.log %[[HX]] : f32
// CHECK: %[[HM:.*]] = arith.mulf %[[HL]], %[[C32]] : f32
// CHECK: %[[HR:.*]] = arith.truncf %[[HM]] : f32 to f16
// CHECK: %[[BX:.*]] = arith.extf %[[B]] : bf16 to f32
// CHECK: %[[BL:.*]] = math.log %[[BX]] : f32
// CHECK: %[[BM:.*]] = arith.mulf %[[BL]], %[[C32]] : f32
// CHECK: %[[BR:.*]] = arith.truncf %[[BM]] : f32 to bf16
// CHECK: %[[DL:.*]] = math.log %[[D]] : f64
// CHECK: %[[DR:.*]] = arith.mulf %[[DL]], %[[C64]] : f64
// CHECK: return %[[R]], %[[HR]], %[[BR]], %[[DR]]
func.func @log10(%x: f32, %h: f16, %b: bf16, %d: f64) -> (f32, f16, bf16, f64) {
  %0 = math.log10 %x : f32
  %1 = math.log10 %h : f16
  %2 = math.log10 %b : bf16
  %3 = math.log10 %d : f64
  return %0, %1, %2, %3 : f32, f16, bf16, f64
}

// CHECK-LABEL: func.func @erfc
// CHECK-SAME: (%[[X:.*]]: f32, %[[H:.*]]: f16)
// CHECK-NOT: math.erfc
// CHECK: math.exp
// CHECK: math.fma
// CHECK: %[[HX:.*]] = arith.extf %[[H]] : f16 to f32
// CHECK-NOT: math.erfc
// CHECK: math.exp
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: return
func.func @erfc(%x: f32, %h: f16) -> (f32, f16) {
  %0 = math.erfc %x : f32
  %1 = math.erfc %h : f16
  return %0, %1 : f32, f16
}

// CHECK-LABEL: func.func @atan
// CHECK-SAME: (%[[X:.*]]: f32, %[[B:.*]]: bf16, %[[D:.*]]: f64)
// CHECK-DAG: %[[PI2:.*]] = arith.constant 1.57079637 : f32
// CHECK-DAG: %[[PI4:.*]] = arith.constant 0.785398185 : f32
// CHECK-DAG: %[[T3:.*]] = arith.constant 2.41421366 : f32
// CHECK-DAG: %[[T1:.*]] = arith.constant 0.414213568 : f32
// CHECK: %[[A:.*]] = math.absf %[[X]] : f32
// CHECK: %[[BIG:.*]] = arith.cmpf ogt, %[[A]], %[[T3]] : f32
// CHECK: %[[MID:.*]] = arith.cmpf ogt, %[[A]], %[[T1]] : f32
// CHECK: %[[BASE1:.*]] = arith.select %[[MID]], %[[PI4]]
// CHECK: %[[BASE:.*]] = arith.select %[[BIG]], %[[PI2]], %[[BASE1]] : f32
// CHECK: %[[M:.*]] = arith.addf %[[BASE]], %{{.*}} : f32
// CHECK: %[[R:.*]] = math.copysign %[[M]], %[[X]] : f32
// CHECK: %[[BX:.*]] = arith.extf %[[B]] : bf16 to f32
// CHECK: math.copysign %{{.*}}, %[[BX]] : f32
// CHECK: %[[BR:.*]] = arith.truncf %{{.*}} : f32 to bf16
// CHECK: %[[DR:.*]] = math.atan %[[D]] : f64
// CHECK: return %[[R]], %[[BR]], %[[DR]]
func.func @atan(%x: f32, %b: bf16, %d: f64) -> (f32, bf16, f64) {
  %0 = math.atan %x : f32
  %1 = math.atan %b : bf16
  %2 = math.atan %d : f64
  return %0, %1, %2 : f32, bf16, f64
}

// atan2: the atan of min(|x|, |y|) / max(|x|, |y|), with both zero read as 0
// and both infinite as 1, then pi/2 - t, pi - t and y's sign.
// CHECK-LABEL: func.func @atan2
// CHECK-SAME: (%[[Y:.*]]: f32, %[[X:.*]]: f32)
// CHECK-NOT: math.atan
// CHECK-DAG: %[[PI:.*]] = arith.constant 3.14159274 : f32
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[AY:.*]] = math.absf %[[Y]] : f32
// CHECK: %[[AX:.*]] = math.absf %[[X]] : f32
// CHECK: %[[STEEP:.*]] = arith.cmpf ogt, %[[AY]], %[[AX]] : f32
// CHECK: %[[LOW:.*]] = arith.select %[[STEEP]], %[[AX]], %[[AY]] : f32
// CHECK: %[[HIGH:.*]] = arith.select %[[STEEP]], %[[AY]], %[[AX]] : f32
// CHECK: arith.divf %[[LOW]], %[[HIGH]] : f32
// CHECK: %[[SIGN:.*]] = math.copysign %[[ONE]], %[[X]] : f32
// CHECK: %[[NEG:.*]] = arith.cmpf olt, %[[SIGN]], %[[ZERO]] : f32
// CHECK: %[[FLIP:.*]] = arith.subf %[[PI]], %[[T:.*]] : f32
// CHECK: %[[Q:.*]] = arith.select %[[NEG]], %[[FLIP]], %[[T]] : f32
// CHECK: %[[R:.*]] = math.copysign %[[Q]], %[[Y]] : f32
// CHECK-NOT: math.atan
// CHECK: return %[[R]]
func.func @atan2(%y: f32, %x: f32) -> f32 {
  %0 = math.atan2 %y, %x : f32
  return %0 : f32
}

// The hyperbolic functions: log1p / expm1 forms without cancellation, and
// a log(|x|) + ln 2 branch where x^2 would overflow.
// CHECK-LABEL: func.func @hyperbolic
// CHECK-SAME: (%[[X:.*]]: f32, %[[B:.*]]: bf16)
// CHECK-NOT: math.asinh
// CHECK-DAG: %[[LN2:.*]] = arith.constant 0.693147182 : f32
// CHECK-DAG: %[[BIG:.*]] = arith.constant 4.096000e+03 : f32
// CHECK: %[[A:.*]] = math.absf %[[X]] : f32
// CHECK: math.log1p
// CHECK: %[[LOGA:.*]] = math.log %[[A]] : f32
// CHECK: %[[LARGE:.*]] = arith.addf %[[LOGA]], %[[LN2]] : f32
// CHECK: %[[ISBIG:.*]] = arith.cmpf ogt, %[[A]], %[[BIG]] : f32
// CHECK: %[[M:.*]] = arith.select %[[ISBIG]], %[[LARGE]], %{{.*}} : f32
// CHECK: %[[ASINH:.*]] = math.copysign %[[M]], %[[X]] : f32
// acosh
// CHECK: math.log1p
// CHECK: math.log
// CHECK: arith.cmpf ogt, %[[X]], %[[BIG]] : f32
// atanh
// CHECK: math.log1p
// CHECK: math.log1p
// CHECK: math.copysign
// sinh
// CHECK: math.expm1
// CHECK: math.exp
// CHECK: math.copysign
// CHECK: %[[BX:.*]] = arith.extf %[[B]] : bf16 to f32
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK-NOT: math.{{asinh|acosh|atanh|sinh}}
// CHECK: return %[[ASINH]]
func.func @hyperbolic(%x: f32, %b: bf16) -> (f32, f32, f32, f32, bf16) {
  %0 = math.asinh %x : f32
  %1 = math.acosh %x : f32
  %2 = math.atanh %x : f32
  %3 = math.sinh %x : f32
  %4 = math.asinh %b : bf16
  return %0, %1, %2, %3, %4 : f32, f32, f32, f32, bf16
}

// sin, cos and tan: Cephes' reduction of |x| by pi/4 in three parts (j the
// octant rounded up to even, y = j) and polynomials in r; IREE's own op of |x|
// from |x| = 51,471 on (and for inf / NaN); sin and tan negated where x's sign
// bit is set. The op of |x| is not rewritten again.
// CHECK-LABEL: func.func @trig
// CHECK-SAME: (%[[X:.*]]: f32, %[[H:.*]]: f16)
// CHECK: %[[A:.*]] = math.absf %[[X]] : f32
// CHECK: %[[LIMIT:.*]] = arith.constant 5.147100e+04 : f32
// CHECK: %[[IN:.*]] = arith.cmpf olt, %[[A]], %[[LIMIT]] : f32
// CHECK: %[[RA:.*]] = arith.select %[[IN]], %[[A]], %{{.*}} : f32
// CHECK: %[[FOPI:.*]] = arith.constant 1.27323949 : f32
// CHECK: %[[Q:.*]] = arith.mulf %[[RA]], %[[FOPI]] : f32
// CHECK: %[[J0:.*]] = arith.fptosi %[[Q]] : f32 to i32
// CHECK: %[[LOW:.*]] = arith.andi %[[J0]], %{{.*}} : i32
// CHECK: %[[J:.*]] = arith.addi %[[J0]], %[[LOW]] : i32
// CHECK: %[[Y:.*]] = arith.sitofp %[[J]] : i32 to f32
// CHECK: %[[DP1:.*]] = arith.constant 0.78515625 : f32
// CHECK: %[[P1:.*]] = arith.mulf %[[Y]], %[[DP1]] : f32
// CHECK: %[[R1:.*]] = arith.subf %[[RA]], %[[P1]] : f32
// CHECK: %[[DP2:.*]] = arith.constant 2.41875648E-4 : f32
// CHECK: %[[P2:.*]] = arith.mulf %[[Y]], %[[DP2]] : f32
// CHECK: %[[R2:.*]] = arith.subf %[[R1]], %[[P2]] : f32
// CHECK: %[[DP3:.*]] = arith.constant 3.77489506E-8 : f32
// CHECK: %[[P3:.*]] = arith.mulf %[[Y]], %[[DP3]] : f32
// CHECK: %[[R:.*]] = arith.subf %[[R2]], %[[P3]] : f32
// CHECK: %[[B2:.*]] = arith.andi %[[J]], %{{.*}} : i32
// CHECK: %[[ODDQ:.*]] = arith.cmpi ne, %[[B2]], %{{.*}} : i32
// CHECK: %[[OWN:.*]] = math.sin %[[A]] : f32
// CHECK: %[[B4:.*]] = arith.andi %[[J]], %{{.*}} : i32
// CHECK: %[[HALF:.*]] = arith.cmpi ne, %[[B4]], %{{.*}} : i32
// CHECK: %[[SC:.*]] = arith.select %[[ODDQ]], %[[COSR:.*]], %[[SINR:.*]] : f32
// CHECK: %[[NSC:.*]] = arith.negf %[[SC]] : f32
// CHECK: %[[V:.*]] = arith.select %[[HALF]], %[[NSC]], %[[SC]] : f32
// CHECK: %[[MAG:.*]] = arith.select %[[IN]], %[[V]], %[[OWN]] : f32
// CHECK: math.copysign %{{.*}}, %[[X]] : f32
// CHECK: %[[NEG:.*]] = arith.cmpf olt
// CHECK: %[[NMAG:.*]] = arith.negf %[[MAG]] : f32
// CHECK: %[[SIN:.*]] = arith.select %[[NEG]], %[[NMAG]], %[[MAG]] : f32
// cos: sin r where the quadrant is odd, negated in quadrants 1 and 2; even.
// CHECK: %[[CA:.*]] = math.absf %[[X]] : f32
// CHECK: %[[COWN:.*]] = math.cos %[[CA]] : f32
// CHECK: %[[FLIP:.*]] = arith.xori %[[CODD:.*]], %[[CHALF:.*]] : i1
// CHECK: %[[CSC:.*]] = arith.select %[[CODD]], %{{.*}}, %{{.*}} : f32
// CHECK: %[[NCSC:.*]] = arith.negf %[[CSC]] : f32
// CHECK: %[[CV:.*]] = arith.select %[[FLIP]], %[[NCSC]], %[[CSC]] : f32
// CHECK: %[[COS:.*]] = arith.select %{{.*}}, %[[CV]], %[[COWN]] : f32
// CHECK-NOT: math.copysign
// tan: -1 / tan(r) where the quadrant is odd.
// CHECK: %[[TA:.*]] = math.absf %[[X]] : f32
// CHECK: %[[TOWN:.*]] = math.tan %[[TA]] : f32
// CHECK: %[[M1:.*]] = arith.constant -1.000000e+00 : f32
// CHECK-NEXT: %[[COT:.*]] = arith.divf %[[M1]], %[[T:.*]] : f32
// CHECK-NEXT: %[[TV:.*]] = arith.select %{{.*}}, %[[COT]], %[[T]] : f32
// CHECK: %[[TMAG:.*]] = arith.select %{{.*}}, %[[TV]], %[[TOWN]] : f32
// CHECK: math.copysign %{{.*}}, %[[X]] : f32
// CHECK: %[[TAN:.*]] = arith.select %{{.*}}, %{{.*}}, %[[TMAG]] : f32
// f16: through f32, rounded once.
// CHECK: %[[HX:.*]] = arith.extf %[[H]] : f16 to f32
// CHECK: math.absf %[[HX]] : f32
// CHECK: arith.fptosi
// CHECK: math.sin %{{.*}} : f32
// CHECK: %[[HS:.*]] = arith.truncf %{{.*}} : f32 to f16
// CHECK: return %[[SIN]], %[[COS]], %[[TAN]], %[[HS]]
func.func @trig(%x: f32, %h: f16) -> (f32, f32, f32, f16) {
  %0 = math.sin %x : f32
  %1 = math.cos %x : f32
  %2 = math.tan %x : f32
  %3 = math.sin %h : f16
  return %0, %1, %2, %3 : f32, f32, f32, f16
}

// cbrt: IREE's own y, then y - (y - x / y^2) / 3 where x is a finite normal
// nonzero; x itself for +-0, +-inf and NaN, y for a subnormal x; 16-bit cbrt
// is left to IREE.
// CHECK-LABEL: func.func @cbrt
// CHECK-SAME: (%[[X:.*]]: f32, %[[H:.*]]: f16)
// CHECK: %[[Y:.*]] = math.cbrt %[[X]] : f32
// CHECK: %[[Y2:.*]] = arith.mulf %[[Y]], %[[Y]] : f32
// CHECK: %[[Q:.*]] = arith.divf %[[X]], %[[Y2]] : f32
// CHECK: %[[D:.*]] = arith.subf %[[Y]], %[[Q]] : f32
// CHECK: %[[THIRD:.*]] = arith.constant 0.333333343 : f32
// CHECK: %[[C:.*]] = arith.mulf %[[D]], %[[THIRD]] : f32
// CHECK: %[[STEP:.*]] = arith.subf %[[Y]], %[[C]] : f32
// CHECK: %[[A:.*]] = math.absf %[[X]] : f32
// CHECK: %[[INF:.*]] = arith.constant 0x7F800000 : f32
// CHECK: %[[FIN:.*]] = arith.cmpf olt, %[[A]], %[[INF]] : f32
// CHECK: %[[TINY:.*]] = arith.constant 1.17549435E-38 : f32
// CHECK: %[[NORM:.*]] = arith.cmpf oge, %[[A]], %[[TINY]] : f32
// CHECK: %[[OK:.*]] = arith.andi %[[FIN]], %[[NORM]] : i1
// CHECK: %[[POS:.*]] = arith.cmpf ogt, %[[A]], %{{.*}} : f32
// CHECK: %[[BELOW:.*]] = arith.cmpf olt, %[[A]], %{{.*}} : f32
// CHECK: %[[SUB:.*]] = arith.andi %[[POS]], %[[BELOW]] : i1
// CHECK: %[[SPECIAL:.*]] = arith.select %[[SUB]], %[[Y]], %[[X]] : f32
// CHECK: %[[R:.*]] = arith.select %[[OK]], %[[STEP]], %[[SPECIAL]] : f32
// CHECK-NOT: math.cbrt %[[X]]
// CHECK: %[[HC:.*]] = math.cbrt %[[H]] : f16
// CHECK: return %[[R]], %[[HC]]
func.func @cbrt(%x: f32, %h: f16) -> (f32, f16) {
  %0 = math.cbrt %x : f32
  %1 = math.cbrt %h : f16
  return %0, %1 : f32, f16
}

// cosh as fdlibm's e_cosh.c: expm1 below ln 2 / 2, (e + 1 / e) / 2 up to 88,
// (0.5 w) w with w = exp(|x| / 2) above (IREE's own is inf from 88.7 on).
// CHECK-LABEL: func.func @cosh
// CHECK-SAME: (%[[X:.*]]: f32, %[[H:.*]]: f16)
// CHECK-DAG: %[[HALFLN2:.*]] = arith.constant 0.346573591 : f32
// CHECK-DAG: %[[BIG:.*]] = arith.constant 8.800000e+01 : f32
// CHECK: %[[A:.*]] = math.absf %[[X]] : f32
// CHECK: %[[T:.*]] = math.expm1 %[[A]] : f32
// CHECK: %[[E:.*]] = math.exp %[[A]] : f32
// CHECK: %[[W:.*]] = math.exp %{{.*}} : f32
// CHECK: %[[HUGE:.*]] = arith.mulf %{{.*}}, %[[W]] : f32
// CHECK: %[[ISBIG:.*]] = arith.cmpf ogt, %[[A]], %[[BIG]] : f32
// CHECK: %[[ISSMALL:.*]] = arith.cmpf olt, %[[A]], %[[HALFLN2]] : f32
// CHECK: %[[M:.*]] = arith.select %[[ISSMALL]], %{{.*}}, %{{.*}} : f32
// CHECK: %[[R:.*]] = arith.select %[[ISBIG]], %[[HUGE]], %[[M]] : f32
// CHECK: arith.extf %[[H]] : f16 to f32
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK-NOT: math.cosh
// CHECK: return %[[R]]
func.func @cosh(%x: f32, %h: f16) -> (f32, f16) {
  %0 = math.cosh %x : f32
  %1 = math.cosh %h : f16
  return %0, %1 : f32, f16
}

// powf: IREE's own in f64 of |x| (f32's exp(y log x) is 125 ulp off), then
// C's special cases IREE's gives NaN for: a negative base (negated for an odd
// integer y, NaN for a non-integer y), |x| = 1 with y = +-inf, x = 1, y = 0.
// An exponent PyTorch's pow kernel special-cases becomes what it computes.
// CHECK-LABEL: func.func @powf
// CHECK-SAME: (%[[X:.*]]: f32, %[[Y:.*]]: f32, %[[H:.*]]: f16, %[[T:.*]]: tensor<4xf32>)
// CHECK-DAG: %[[NAN:.*]] = arith.constant 0x7FF8000000000000 : f64
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f64
// CHECK: %[[X64:.*]] = arith.extf %[[X]] : f32 to f64
// CHECK: %[[Y64:.*]] = arith.extf %[[Y]] : f32 to f64
// CHECK: %[[A:.*]] = math.absf %[[X64]] : f64
// CHECK: %[[P:.*]] = math.powf %[[A]], %[[Y64]] : f64
// CHECK: %[[TR:.*]] = math.trunc %[[Y64]] : f64
// CHECK: %[[INT:.*]] = arith.cmpf oeq, %[[TR]], %[[Y64]] : f64
// CHECK: %[[ODD:.*]] = arith.andi %[[INT]], %{{.*}} : i1
// CHECK: %[[NEG:.*]] = arith.negf %[[P]] : f64
// CHECK: %[[S1:.*]] = arith.select %{{.*}}, %[[NEG]], %[[P]] : f64
// CHECK: %[[S2:.*]] = arith.select %{{.*}}, %[[NAN]], %[[S1]] : f64
// CHECK: %[[S3:.*]] = arith.select %{{.*}}, %[[ONE]], %[[S2]] : f64
// CHECK: %[[S4:.*]] = arith.select %{{.*}}, %[[ONE]], %[[S3]] : f64
// CHECK: %[[R:.*]] = arith.truncf %[[S4]] : f64 to f32
// CHECK: %[[HX:.*]] = arith.extf %[[H]] : f16 to f32
// CHECK: arith.extf %[[HX]] : f32 to f64
// CHECK: math.powf %{{.*}}, %{{.*}} : f64
// CHECK: arith.truncf %{{.*}} : f64 to f32
// CHECK: %[[HR:.*]] = arith.truncf %{{.*}} : f32 to f16
// CHECK: %[[SQ:.*]] = arith.mulf %[[X]], %[[X]] : f32
// CHECK: %[[SQT:.*]] = arith.mulf %[[T]], %[[T]] : tensor<4xf32>
// CHECK-NOT: math.powf %{{.*}} : f32
// CHECK: return %[[R]], %[[HR]], %[[SQ]], %[[SQT]]
func.func @powf(%x: f32, %y: f32, %h: f16, %t: tensor<4xf32>) -> (f32, f16, f32, tensor<4xf32>) {
  %0 = math.powf %x, %y : f32
  %1 = math.powf %h, %h : f16
  %two = arith.constant 2.0 : f32
  %2 = math.powf %x, %two : f32
  %twos = arith.constant dense<2.0> : tensor<4xf32>
  %3 = math.powf %t, %twos : tensor<4xf32>
  return %0, %1, %2, %3 : f32, f16, f32, tensor<4xf32>
}

// exp2: IREE's own in f64 (f32's, exp(x ln 2), is 17 ulp off at 88.7).
// CHECK-LABEL: func.func @exp2
// CHECK-SAME: (%[[X:.*]]: f32, %[[B:.*]]: bf16)
// CHECK: %[[X64:.*]] = arith.extf %[[X]] : f32 to f64
// CHECK: %[[E:.*]] = math.exp2 %[[X64]] : f64
// CHECK: %[[R:.*]] = arith.truncf %[[E]] : f64 to f32
// CHECK: %[[BX:.*]] = arith.extf %[[B]] : bf16 to f32
// CHECK: arith.extf %[[BX]] : f32 to f64
// CHECK-NOT: math.exp2 %{{.*}} : {{f32|bf16}}
// CHECK: return %[[R]]
func.func @exp2(%x: f32, %b: bf16) -> (f32, bf16) {
  %0 = math.exp2 %x : f32
  %1 = math.exp2 %b : bf16
  return %0, %1 : f32, bf16
}

// Through the IREE input pipeline, inside a linalg body: neither op is left.
// IREE-LABEL: func.func @body
// IREE-NOT: math.log10
// IREE-NOT: math.erfc
// IREE: linalg.generic
// IREE: math.log
// IREE: math.exp
// IREE-NOT: math.log10
// IREE-NOT: math.erfc
// IREE: return
func.func @body(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = tosa.log %x : (tensor<4xf32>) -> tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %1:2 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%0 : tensor<4xf32>) outs(%e, %e : tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%in: f32, %o0: f32, %o1: f32):
    %l = math.log10 %in : f32
    %c = math.erfc %in : f32
    linalg.yield %l, %c : f32, f32
  } -> (tensor<4xf32>, tensor<4xf32>)
  return %1#0, %1#1 : tensor<4xf32>, tensor<4xf32>
}
