// amp-selected-results-in-place: a result selected between a kept buffer and
// a fresh one (a loss-scaled update) is written in its out-parameter; the
// kept buffer is copied there only when the select would pick it.
// RUN: amp-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(amp-selected-results-in-place))' | FileCheck %s

// CHECK-LABEL: func.func @update
// CHECK-SAME: (%[[OLD:.*]]: memref<16xf32>, %[[BAD:.*]]: i1, %[[OUT:.*]]: memref<16xf32>)
// CHECK-NOT: memref.alloc
// CHECK: linalg.generic {{.*}} ins(%[[OLD]] : memref<16xf32>) outs(%[[OUT]] : memref<16xf32>)
// CHECK-NOT: arith.select
// CHECK: scf.if %[[BAD]] {
// CHECK-NEXT: memref.copy %[[OLD]], %[[OUT]]
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @update(%old: memref<16xf32>, %bad: i1, %out: memref<16xf32>) {
  %new = memref.alloc() : memref<16xf32>
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%old : memref<16xf32>) outs(%new : memref<16xf32>) {
  ^bb0(%x: f32, %y: f32):
    %h = arith.mulf %x, %x : f32
    linalg.yield %h : f32
  }
  %r = arith.select %bad, %old, %new : memref<16xf32>
  memref.copy %r, %out : memref<16xf32> to memref<16xf32>
  return
}

// -----

// The fresh buffer as the true value: the kept one is copied when the
// condition is false.
// CHECK-LABEL: func.func @fresh_if_true
// CHECK-SAME: (%[[OLD:.*]]: memref<4xf32>, %[[OK:.*]]: i1, %[[OUT:.*]]: memref<4xf32>)
// CHECK: linalg.fill {{.*}} outs(%[[OUT]] : memref<4xf32>)
// CHECK: %[[NOT:.*]] = arith.xori %[[OK]], %true
// CHECK: scf.if %[[NOT]] {
// CHECK-NEXT: memref.copy %[[OLD]], %[[OUT]]
func.func @fresh_if_true(%old: memref<4xf32>, %ok: i1, %out: memref<4xf32>) {
  %new = memref.alloc() : memref<4xf32>
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%one : f32) outs(%new : memref<4xf32>)
  %r = arith.select %ok, %new, %old : memref<4xf32>
  memref.copy %r, %out : memref<4xf32> to memref<4xf32>
  return
}

// -----

// The fresh buffer is read after the copy: left as it is.
// CHECK-LABEL: func.func @read_after
// CHECK: memref.alloc
// CHECK: arith.select
// CHECK: memref.copy
func.func @read_after(%old: memref<4xf32>, %bad: i1, %out: memref<4xf32>, %other: memref<4xf32>) {
  %new = memref.alloc() : memref<4xf32>
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%one : f32) outs(%new : memref<4xf32>)
  %r = arith.select %bad, %old, %new : memref<4xf32>
  memref.copy %r, %out : memref<4xf32> to memref<4xf32>
  memref.copy %new, %other : memref<4xf32> to memref<4xf32>
  return
}

// -----

// The out-parameter is used elsewhere too: left as it is.
// CHECK-LABEL: func.func @out_read
// CHECK: arith.select
// CHECK: memref.copy
func.func @out_read(%old: memref<4xf32>, %bad: i1, %out: memref<4xf32>, %other: memref<4xf32>) {
  memref.copy %out, %other : memref<4xf32> to memref<4xf32>
  %new = memref.alloc() : memref<4xf32>
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%one : f32) outs(%new : memref<4xf32>)
  %r = arith.select %bad, %old, %new : memref<4xf32>
  memref.copy %r, %out : memref<4xf32> to memref<4xf32>
  return
}

// -----

// Kept values computed for the guards alone (weight averages redone from the
// kept parameters, in the branch that keeps them; canonicalization merged the
// guards of one flag into one scf.if): the fresh buffers are written in the
// out-parameters, and the computation and the copies run only when the flag
// picks the kept values.
// CHECK-LABEL: func.func @averages
// CHECK-SAME: (%[[W:.*]]: memref<8xf32>, %[[E:.*]]: memref<8xf32>, %[[BAD:.*]]: i1, %[[OUT0:.*]]: memref<8xf32>, %[[OUT1:.*]]: memref<8xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[E]], %[[W]] : memref<8xf32>, memref<8xf32>) outs(%[[OUT0]] : memref<8xf32>)
// CHECK: linalg.fill {{.*}} outs(%[[OUT1]] : memref<8xf32>)
// CHECK-NOT: memref.copy
// CHECK: scf.if %[[BAD]] {
// CHECK-NEXT: %[[KEPT:.*]] = memref.alloc()
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[E]] : memref<8xf32>) outs(%[[KEPT]] : memref<8xf32>)
// CHECK: memref.copy %[[KEPT]], %[[OUT0]]
// CHECK-NEXT: memref.copy %[[E]], %[[OUT1]]
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @averages(%w: memref<8xf32>, %e: memref<8xf32>, %bad: i1, %out0: memref<8xf32>, %out1: memref<8xf32>) {
  %new0 = memref.alloc() : memref<8xf32>
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%e, %w : memref<8xf32>, memref<8xf32>) outs(%new0 : memref<8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  }
  %new1 = memref.alloc() : memref<8xf32>
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%one : f32) outs(%new1 : memref<8xf32>)
  %r:2 = scf.if %bad -> (memref<8xf32>, memref<8xf32>) {
    %kept = memref.alloc() : memref<8xf32>
    linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
        ins(%e : memref<8xf32>) outs(%kept : memref<8xf32>) {
    ^bb0(%a: f32, %o: f32):
      %s = arith.addf %a, %a : f32
      linalg.yield %s : f32
    }
    scf.yield %kept, %e : memref<8xf32>, memref<8xf32>
  } else {
    scf.yield %new0, %new1 : memref<8xf32>, memref<8xf32>
  }
  memref.copy %r#0, %out0 : memref<8xf32> to memref<8xf32>
  memref.copy %r#1, %out1 : memref<8xf32> to memref<8xf32>
  return
}

// -----

// A fresh buffer read after the scf.if: left as it is.
// CHECK-LABEL: func.func @average_read_after
// CHECK: memref.alloc
// CHECK: scf.if %{{.*}} -> (memref<4xf32>)
// CHECK: memref.copy
func.func @average_read_after(%e: memref<4xf32>, %bad: i1, %out: memref<4xf32>, %other: memref<4xf32>) {
  %new = memref.alloc() : memref<4xf32>
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%one : f32) outs(%new : memref<4xf32>)
  %r = scf.if %bad -> (memref<4xf32>) {
    %kept = memref.alloc() : memref<4xf32>
    memref.copy %e, %kept : memref<4xf32> to memref<4xf32>
    scf.yield %kept : memref<4xf32>
  } else {
    scf.yield %new : memref<4xf32>
  }
  memref.copy %r, %out : memref<4xf32> to memref<4xf32>
  memref.copy %new, %other : memref<4xf32> to memref<4xf32>
  return
}

// -----

// The per-element form (the check before the update): the select of each
// state between its old value and the fresh one is folded into the loop that
// computes the fresh one, which then writes the out-parameter (reading the
// old state as one more input, or through the input that already reads it).
// CHECK-LABEL: func.func @adam_select_per_element
// CHECK-SAME: (%[[P:[^:]*]]: memref<16xf32>, %[[M:[^:]*]]: memref<16xf32>, %[[G:[^:]*]]: memref<16xf32>, %[[BAD:[^:]*]]: i1, %[[OP:[^:]*]]: memref<16xf32>, %[[OM:[^:]*]]: memref<16xf32>)
// CHECK-NOT: memref.alloc
// CHECK: linalg.generic {{.*}} ins(%[[P]], %[[M]], %[[G]] : {{.*}}) outs(%[[OP]], %[[OM]] : {{.*}})
// CHECK-NEXT: ^bb0(%[[PE:[^:]*]]: f32, %[[ME:[^:]*]]: f32, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32):
// CHECK: %[[NM:.*]] = arith.addf %[[ME]]
// CHECK: %[[NP:.*]] = arith.subf %[[PE]], %[[NM]]
// CHECK: %[[SP:.*]] = arith.select %[[BAD]], %[[PE]], %[[NP]]
// CHECK: %[[SM:.*]] = arith.select %[[BAD]], %[[ME]], %[[NM]]
// CHECK: linalg.yield %[[SP]], %[[SM]]
// CHECK-NOT: linalg.generic
// CHECK: return
#id = affine_map<(i) -> (i)>
func.func @adam_select_per_element(%p: memref<16xf32>, %m: memref<16xf32>, %g: memref<16xf32>, %bad: i1,
                                   %outp: memref<16xf32>, %outm: memref<16xf32>) {
  %newp = memref.alloc() : memref<16xf32>
  %newm = memref.alloc() : memref<16xf32>
  linalg.generic {indexing_maps = [#id, #id, #id, #id, #id], iterator_types = ["parallel"]}
      ins(%p, %m, %g : memref<16xf32>, memref<16xf32>, memref<16xf32>)
      outs(%newp, %newm : memref<16xf32>, memref<16xf32>) {
  ^bb0(%x: f32, %mo: f32, %d: f32, %o1: f32, %o2: f32):
    %m2 = arith.addf %mo, %d : f32
    %x2 = arith.subf %x, %m2 : f32
    linalg.yield %x2, %m2 : f32, f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%p, %newp : memref<16xf32>, memref<16xf32>) outs(%outp : memref<16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.select %bad, %a, %b : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%newm, %m : memref<16xf32>, memref<16xf32>) outs(%outm : memref<16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.select %bad, %b, %a : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// The old state written between the two loops: left as it is.
// CHECK-LABEL: func.func @kept_written_between
// CHECK: memref.alloc
// CHECK: arith.select
#id = affine_map<(i) -> (i)>
func.func @kept_written_between(%p: memref<16xf32>, %bad: i1, %outp: memref<16xf32>) {
  %newp = memref.alloc() : memref<16xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%p : memref<16xf32>) outs(%newp : memref<16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %h = arith.mulf %x, %x : f32
    linalg.yield %h : f32
  }
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%p : memref<16xf32>)
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%p, %newp : memref<16xf32>, memref<16xf32>) outs(%outp : memref<16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.select %bad, %a, %b : f32
    linalg.yield %s : f32
  }
  return
}
