// RUN: amp-opt %s --split-input-file --verify-diagnostics \
// RUN:   --amp-check-lowered="pipeline=amp-cpu-pipeline"
// RUN: amp-opt %s --split-input-file --verify-diagnostics \
// RUN:   --amp-check-lowered="pipeline=amp-gpu-pipeline allowed-ops=gpu.binary"

// Only the LLVM dialect: nothing to report.
llvm.func @lowered(%a: f32) -> f32 {
  %0 = llvm.fadd %a, %a : f32
  llvm.return %0 : f32
}

// -----

// An op left behind is reported once per kind, at the first one, with the
// number of the others (here: the vector.extract that the math-to-libm
// scalarisation creates after vector-to-llvm has run).
llvm.func @erf(%v: vector<4xf32>) -> f32 {
  // expected-error @below {{'vector.extract' op is left after amp-}}
  %0 = vector.extract %v[0] : f32 from vector<4xf32>
  %1 = vector.extract %v[1] : f32 from vector<4xf32>
  %2 = vector.extract %v[2] : f32 from vector<4xf32>
  // expected-error @below {{'math.erf' op is left after amp-}}
  %3 = math.erf %0 : f32
  %4 = llvm.fadd %1, %2 : f32
  %5 = llvm.fadd %3, %4 : f32
  llvm.return %5 : f32
}

// -----

// An op without a location (a cast a conversion made) is reported at the
// nearest op that has one: here the producer of its operand.
llvm.func @cast(%a: f32) -> i32 {
  // expected-error @below {{'builtin.unrealized_conversion_cast' op is left after amp-}}
  %0 = llvm.fadd %a, %a : f32
  %1 = builtin.unrealized_conversion_cast %0 : f32 to i32 loc(unknown)
  llvm.return %1 : i32
}
