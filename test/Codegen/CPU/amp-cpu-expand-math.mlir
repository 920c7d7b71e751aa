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
