// amp-index-to-arith: the index dialect's ops as their arith twins on index
// (iree-compile registers no index dialect and compiled its ops as if they
// computed zero). tosa.rfft2d's lowering, through the IREE input pipeline,
// keeps no index op. index.sizeof has no twin: a located error.
// RUN: amp-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(amp-index-to-arith))' | FileCheck %s
// RUN: amp-opt %s --split-input-file --verify-diagnostics --amp-tensor-input-pipeline | FileCheck %s --check-prefix=IREE

// CHECK-LABEL: func.func @arithmetic
// CHECK-SAME: (%[[A:.*]]: index, %[[B:.*]]: index, %[[I:.*]]: i32)
// CHECK-NOT: index.
// CHECK: %[[MUL:.*]] = arith.muli %[[A]], %[[B]] : index
// CHECK: %[[REM:.*]] = arith.remui %[[MUL]], %[[B]] : index
// CHECK: %[[ADD:.*]] = arith.addi %[[REM]], %[[A]] : index
// CHECK: %[[SUB:.*]] = arith.subi %[[ADD]], %[[B]] : index
// CHECK: %[[DIVS:.*]] = arith.divsi %[[SUB]], %[[B]] : index
// CHECK: %[[DIVU:.*]] = arith.divui %[[DIVS]], %[[B]] : index
// CHECK: %[[CDS:.*]] = arith.ceildivsi %[[DIVU]], %[[B]] : index
// CHECK: %[[CDU:.*]] = arith.ceildivui %[[CDS]], %[[B]] : index
// CHECK: %[[FDS:.*]] = arith.floordivsi %[[CDU]], %[[B]] : index
// CHECK: %[[REMS:.*]] = arith.remsi %[[FDS]], %[[B]] : index
// CHECK: %[[MAXS:.*]] = arith.maxsi %[[REMS]], %[[B]] : index
// CHECK: %[[MAXU:.*]] = arith.maxui %[[MAXS]], %[[B]] : index
// CHECK: %[[MINS:.*]] = arith.minsi %[[MAXU]], %[[B]] : index
// CHECK: %[[MINU:.*]] = arith.minui %[[MINS]], %[[B]] : index
// CHECK: %[[SHL:.*]] = arith.shli %[[MINU]], %[[B]] : index
// CHECK: %[[SHRS:.*]] = arith.shrsi %[[SHL]], %[[B]] : index
// CHECK: %[[SHRU:.*]] = arith.shrui %[[SHRS]], %[[B]] : index
// CHECK: %[[AND:.*]] = arith.andi %[[SHRU]], %[[B]] : index
// CHECK: %[[OR:.*]] = arith.ori %[[AND]], %[[B]] : index
// CHECK: %[[XOR:.*]] = arith.xori %[[OR]], %[[B]] : index
// CHECK: %[[C7:.*]] = arith.constant 7 : index
// CHECK: %[[XOR2:.*]] = arith.xori %[[XOR]], %[[C7]] : index
// CHECK: %[[CASTS:.*]] = arith.index_cast %[[XOR2]] : index to i32
// CHECK: %[[CASTU:.*]] = arith.index_castui %[[I]] : i32 to index
// CHECK: %[[CMP:.*]] = arith.cmpi ule, %[[CASTU]], %[[A]] : index
// CHECK: %[[TRUE:.*]] = arith.constant true
// CHECK: %[[BOTH:.*]] = arith.andi %[[CMP]], %[[TRUE]] : i1
// CHECK: return %[[CASTS]], %[[BOTH]]
func.func @arithmetic(%a: index, %b: index, %i: i32) -> (i32, i1) {
  %0 = index.mul %a, %b
  %1 = index.remu %0, %b
  %2 = index.add %1, %a
  %3 = index.sub %2, %b
  %4 = index.divs %3, %b
  %5 = index.divu %4, %b
  %6 = index.ceildivs %5, %b
  %7 = index.ceildivu %6, %b
  %8 = index.floordivs %7, %b
  %9 = index.rems %8, %b
  %10 = index.maxs %9, %b
  %11 = index.maxu %10, %b
  %12 = index.mins %11, %b
  %13 = index.minu %12, %b
  %14 = index.shl %13, %b
  %15 = index.shrs %14, %b
  %16 = index.shru %15, %b
  %17 = index.and %16, %b
  %18 = index.or %17, %b
  %19 = index.xor %18, %b
  %c7 = index.constant 7
  %20 = index.xor %19, %c7
  %21 = index.casts %20 : index to i32
  %22 = index.castu %i : i32 to index
  %23 = index.cmp ule(%22, %a)
  %true = index.bool.constant true
  %24 = arith.andi %23, %true : i1
  return %21, %24 : i32, i1
}

// -----

// The DFT's angle of upstream's rfft2d lowering: arith, not index.
// CHECK-LABEL: func.func @rfft
// IREE-LABEL: func.func @rfft
// IREE-NOT: index.
// IREE: arith.muli
// IREE: arith.remui
// IREE: math.cos
// IREE-NOT: index.
// IREE: return
func.func @rfft(%x: tensor<1x4x8xf32>) -> (tensor<1x4x5xf32>, tensor<1x4x5xf32>) {
  %re, %im = tosa.rfft2d %x : (tensor<1x4x8xf32>) -> (tensor<1x4x5xf32>, tensor<1x4x5xf32>)
  return %re, %im : tensor<1x4x5xf32>, tensor<1x4x5xf32>
}

// -----

func.func @sizeof() -> index {
  // expected-error @+1 {{'index.sizeof' has no arith equivalent for this input (its value depends on the target's index width)}}
  %0 = index.sizeof
  return %0 : index
}
