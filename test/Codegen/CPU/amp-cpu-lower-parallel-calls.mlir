// amp-cpu-lower-parallel-calls: a call of a function marked
// amp.parallel_step becomes amp_rt_parallel_for(task, ctx, lo, hi, step):
// the call's other arguments stored into a struct (an alloca in the
// caller's entry block), a task that loads them back and calls the
// function on its piece of the range; the mark is removed.
// RUN: amp-opt %s --amp-cpu-lower-parallel-calls | FileCheck %s

// CHECK: llvm.func @amp_rt_parallel_for(i64, i64, i64, i64, i64)
// CHECK-LABEL: llvm.func @body(
// CHECK-NOT: amp.parallel_step
// CHECK-LABEL: llvm.func internal @body__task(
// CHECK-SAME: %[[CTX:.*]]: !llvm.ptr, %[[LO:.*]]: i64, %[[HI:.*]]: i64)
// CHECK: %[[P0:.*]] = llvm.getelementptr %[[CTX]][0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(ptr, f32)>
// CHECK: %[[A:.*]] = llvm.load %[[P0]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[P1:.*]] = llvm.getelementptr %[[CTX]][0, 1] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(ptr, f32)>
// CHECK: %[[B:.*]] = llvm.load %[[P1]] : !llvm.ptr -> f32
// CHECK: llvm.call @body(%[[LO]], %[[HI]], %[[A]], %[[B]])
// CHECK-LABEL: llvm.func @caller(
// CHECK: %[[FRAME:.*]] = llvm.alloca %{{.*}} x !llvm.struct<(ptr, f32)>
// CHECK: llvm.br
// CHECK: llvm.getelementptr %[[FRAME]][0, 0]
// CHECK: llvm.store %arg0
// CHECK: llvm.getelementptr %[[FRAME]][0, 1]
// CHECK: llvm.store %arg1
// CHECK: %[[TASK:.*]] = llvm.mlir.addressof @body__task
// CHECK: %[[TASKI:.*]] = llvm.ptrtoint %[[TASK]]
// CHECK: %[[CTXI:.*]] = llvm.ptrtoint %[[FRAME]]
// CHECK: %[[STEP:.*]] = llvm.mlir.constant(8 : i64)
// CHECK: llvm.call @amp_rt_parallel_for(%[[TASKI]], %[[CTXI]], %{{.*}}, %{{.*}}, %[[STEP]])
// CHECK-NOT: llvm.call @body(
llvm.func @body(%lo: i64, %hi: i64, %p: !llvm.ptr, %s: f32) attributes {amp.parallel_step = 8 : i64} {
  llvm.return
}

llvm.func @caller(%p: !llvm.ptr, %s: f32) {
  llvm.br ^bb1
^bb1:
  %lo = llvm.mlir.constant(0 : i64) : i64
  %hi = llvm.mlir.constant(1024 : i64) : i64
  llvm.call @body(%lo, %hi, %p, %s) : (i64, i64, !llvm.ptr, f32) -> ()
  llvm.return
}
