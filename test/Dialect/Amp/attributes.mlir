// The typed attributes of the amp dialect print in the form they are written
// and read back unchanged: through the custom printer, the generic printer and
// bytecode. Numbers print in their shortest exact form.
// RUN: amp-opt %s -mlir-print-local-scope | FileCheck %s
// RUN: amp-opt %s | amp-opt -mlir-print-local-scope | FileCheck %s
// RUN: amp-opt %s -mlir-print-op-generic | amp-opt -mlir-print-local-scope | FileCheck %s
// RUN: amp-opt %s -emit-bytecode | amp-opt -mlir-print-local-scope | FileCheck %s

// CHECK-LABEL: func.func @init_hints(
// CHECK-SAME: {amp.init = #amp.init<zeros>}
// CHECK-SAME: {amp.init = #amp.init<ones>}
// CHECK-SAME: {amp.init = #amp.init<fill(65536)>}
// CHECK-SAME: {amp.init = #amp.init<fill(-1.5)>}
// CHECK-SAME: {amp.init = #amp.init<fill(3)>}
// CHECK-SAME: {amp.init = #amp.init<uniform(0.17)>}
// CHECK-SAME: {amp.init = #amp.init<uniform(0)>}
// CHECK-SAME: {amp.init = #amp.init<normal(1.0e-5)>}
// CHECK-SAME: {amp.init = #amp.init<normal(0.02)>}
// CHECK-SAME: {amp.init = #amp.init<labels(10)>}
// CHECK-SAME: {amp.init = #amp.init<labels(1000)>}
func.func @init_hints(%a: tensor<4xf32> {amp.init = #amp.init<zeros>},
                      %b: tensor<4xf16> {amp.init = #amp.init<ones>},
                      %c: tensor<f32> {amp.init = #amp.init<fill(65536.0)>},
                      %d: tensor<4xbf16> {amp.init = #amp.init<fill(-1.5)>},
                      %e: tensor<4xi32> {amp.init = #amp.init<fill(3)>},
                      %f: tensor<4x4xf32> {amp.init = #amp.init<uniform(0.17)>},
                      %g: tensor<4xf32> {amp.init = #amp.init<uniform(0.0)>},
                      %h: tensor<4xf32> {amp.init = #amp.init<normal(0.00001)>},
                      %i: tensor<4xf32> {amp.init = #amp.init<normal(2.0e-2)>},
                      %j: tensor<8xi32> {amp.init = #amp.init<labels(10)>},
                      %k: tensor<8xi64> {amp.init = #amp.init<labels(1000)>}) {
  return
}

// CHECK-LABEL: func.func @scale_state(
// CHECK-SAME: %{{.*}}: tensor<f32> {amp.init = #amp.init<fill(1024)>, amp.scale_state = #amp.scale_state<scale>}
// CHECK-SAME: %{{.*}}: tensor<i32> {amp.init = #amp.init<zeros>, amp.scale_state = #amp.scale_state<growth_tracker>}
// CHECK-SAME: %{{.*}}: tensor<i32> {amp.init = #amp.init<zeros>, amp.scale_state = #amp.scale_state<overflow_tracker>}
// CHECK-SAME: -> (tensor<f32> {amp.scale_state = #amp.scale_state<scale>}, tensor<i32> {amp.scale_state = #amp.scale_state<growth_tracker>}, tensor<i32> {amp.scale_state = #amp.scale_state<overflow_tracker>})
func.func @scale_state(
    %s: tensor<f32> {amp.scale_state = #amp.scale_state<scale>, amp.init = #amp.init<fill(1024.0)>},
    %g: tensor<i32> {amp.scale_state = #amp.scale_state<growth_tracker>, amp.init = #amp.init<zeros>},
    %o: tensor<i32> {amp.scale_state = #amp.scale_state<overflow_tracker>, amp.init = #amp.init<zeros>})
    -> (tensor<f32> {amp.scale_state = #amp.scale_state<scale>},
        tensor<i32> {amp.scale_state = #amp.scale_state<growth_tracker>},
        tensor<i32> {amp.scale_state = #amp.scale_state<overflow_tracker>}) {
  return %s, %g, %o : tensor<f32>, tensor<i32>, tensor<i32>
}

// CHECK-LABEL: func.func @precision_pins(
// CHECK: arith.addf %{{.*}}, %{{.*}} {amp.precision = #amp.precision<f32>}
// CHECK: arith.mulf %{{.*}}, %{{.*}} {amp.precision = #amp.precision<f16>}
// CHECK: arith.subf %{{.*}}, %{{.*}} {amp.precision = #amp.precision<bf16>}
func.func @precision_pins(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %x, %x {amp.precision = #amp.precision<f32>} : tensor<4xf32>
  %1 = arith.mulf %0, %0 {amp.precision = #amp.precision<f16>} : tensor<4xf32>
  %2 = arith.subf %1, %0 {amp.precision = #amp.precision<bf16>} : tensor<4xf32>
  return %2 : tensor<4xf32>
}

// A step's batch checks: each message with the location of the op it comes
// from, a call stack included (printed inline with -mlir-print-local-scope;
// as `#loc` aliases without it).
// CHECK-LABEL: func.func @step__amp_checks(
// CHECK-SAME: attributes {amp.checks = [#amp.check<"an id is past the table in 'tosa.gather'" at loc("model.py":12:0)>, #amp.check<"a label (in 'linalg.generic')" at loc(callsite("functional.py":3478:0 at "train.py":7:0))>]}
func.func @step__amp_checks(%ids: tensor<4xi32>) -> i32 attributes {amp.checks = [
    #amp.check<"an id is past the table in 'tosa.gather'" at loc("model.py":12:0)>,
    #amp.check<"a label (in 'linalg.generic')" at loc(callsite("functional.py":3478:0 at "train.py":7:0))>]} {
  %c0 = arith.constant 0 : i32
  return %c0 : i32
}
