// amp-cpu-expand-math: fpowi, isinf and isnormal as ops the CPU lowering
// has (powf, absf, cmpf), in the op's own element type, scalar and vector.
// RUN: amp-opt %s --amp-cpu-expand-math | FileCheck %s
// The whole CPU pipeline then lowers them (amp-check-lowered passes).
// RUN: amp-opt %s --amp-cpu-pipeline -o /dev/null

// CHECK-LABEL: func.func @fpowi
// CHECK-SAME: (%[[X:.*]]: vector<8xf32>, %[[N:.*]]: vector<8xi32>)
// CHECK: %[[F:.*]] = arith.sitofp %[[N]] : vector<8xi32> to vector<8xf32>
// CHECK: math.powf %[[X]], %[[F]] : vector<8xf32>
// CHECK-NOT: math.fpowi
func.func @fpowi(%x: vector<8xf32>, %n: vector<8xi32>) -> vector<8xf32> {
  %0 = math.fpowi %x, %n : vector<8xf32>, vector<8xi32>
  return %0 : vector<8xf32>
}

// The f16 thresholds are f16's: smallest normal 2^-14 (6.1035e-05).
// CHECK-LABEL: func.func @classify_f16
// CHECK: %[[A:.*]] = math.absf %{{.*}} : f16
// CHECK: %[[INF:.*]] = arith.constant 0x7C00 : f16
// CHECK: arith.cmpf oeq, %[[A]], %[[INF]] : f16
// CHECK: %[[B:.*]] = math.absf %{{.*}} : f16
// CHECK: %[[MIN:.*]] = arith.constant 6.103520e-05 : f16
// CHECK: %[[INF2:.*]] = arith.constant 0x7C00 : f16
// CHECK: %[[GE:.*]] = arith.cmpf oge, %[[B]], %[[MIN]] : f16
// CHECK: %[[LT:.*]] = arith.cmpf olt, %[[B]], %[[INF2]] : f16
// CHECK: arith.andi %[[GE]], %[[LT]] : i1
func.func @classify_f16(%x: f16) -> (i1, i1) {
  %0 = math.isinf %x : f16
  %1 = math.isnormal %x : f16
  return %0, %1 : i1, i1
}

// CHECK-LABEL: func.func @classify_vector
// CHECK: arith.constant dense<0x7F800000> : vector<4xf32>
// CHECK: arith.cmpf oeq, %{{.*}}, %{{.*}} : vector<4xf32>
func.func @classify_vector(%x: vector<4xf32>) -> vector<4xi1> {
  %0 = math.isinf %x : vector<4xf32>
  return %0 : vector<4xi1>
}

// powf with an exponent PyTorch's pow kernel special-cases: what that kernel
// computes, scalar and splat vector exponents alike.
// CHECK-LABEL: func.func @powf_special_cases
// CHECK-SAME: (%[[X:.*]]: vector<8xf32>, %[[S:.*]]: f64)
// CHECK-NOT: math.powf
// CHECK: %[[SQ:.*]] = arith.mulf %[[X]], %[[X]] : vector<8xf32>
// CHECK: %[[SQ2:.*]] = arith.mulf %[[X]], %[[X]] : vector<8xf32>
// CHECK: %[[CUBE:.*]] = arith.mulf %[[SQ2]], %[[X]] : vector<8xf32>
// CHECK: %[[ROOT:.*]] = math.sqrt %[[X]] : vector<8xf32>
// CHECK: %[[ROOT2:.*]] = math.sqrt %[[X]] : vector<8xf32>
// CHECK: %[[ONE:.*]] = arith.constant dense<1.000000e+00> : vector<8xf32>
// CHECK: %[[RSQRT:.*]] = arith.divf %[[ONE]], %[[ROOT2]] : vector<8xf32>
// CHECK: %[[ONE2:.*]] = arith.constant 1.000000e+00 : f64
// CHECK: %[[RECIP:.*]] = arith.divf %[[ONE2]], %[[S]] : f64
// CHECK: %[[SQS:.*]] = arith.mulf %[[S]], %[[S]] : f64
// CHECK: %[[ONE3:.*]] = arith.constant 1.000000e+00 : f64
// CHECK: %[[INVSQ:.*]] = arith.divf %[[ONE3]], %[[SQS]] : f64
// CHECK: return %[[SQ]], %[[CUBE]], %[[ROOT]], %[[RSQRT]], %[[RECIP]], %[[INVSQ]]
func.func @powf_special_cases(%x: vector<8xf32>, %s: f64)
    -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, f64, f64) {
  %two = arith.constant dense<2.0> : vector<8xf32>
  %three = arith.constant dense<3.0> : vector<8xf32>
  %half = arith.constant dense<0.5> : vector<8xf32>
  %mhalf = arith.constant dense<-0.5> : vector<8xf32>
  %mone = arith.constant -1.0 : f64
  %mtwo = arith.constant -2.0 : f64
  %0 = math.powf %x, %two : vector<8xf32>
  %1 = math.powf %x, %three : vector<8xf32>
  %2 = math.powf %x, %half : vector<8xf32>
  %3 = math.powf %x, %mhalf : vector<8xf32>
  %4 = math.powf %s, %mone : f64
  %5 = math.powf %s, %mtwo : f64
  return %0, %1, %2, %3, %4, %5
      : vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, f64, f64
}

// Other exponents, exponents that are not constants, and 16-bit types (whose
// pow PyTorch computes in f32) keep the libm call.
// CHECK-LABEL: func.func @powf_kept
// CHECK-COUNT-3: math.powf
func.func @powf_kept(%x: vector<8xf32>, %y: vector<8xf32>, %h: f16)
    -> (vector<8xf32>, vector<8xf32>, f16) {
  %c = arith.constant dense<4.0> : vector<8xf32>
  %two = arith.constant 2.0 : f16
  %0 = math.powf %x, %c : vector<8xf32>
  %1 = math.powf %x, %y : vector<8xf32>
  %2 = math.powf %h, %two : f16
  return %0, %1, %2 : vector<8xf32>, vector<8xf32>, f16
}
