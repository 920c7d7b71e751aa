// RUN: amp-opt %s --split-input-file --amp-cpu-report-failed-checks | FileCheck %s
//
// A step whose check fails writes the message to stderr and exits with status
// 3, on the CPU and in the emulated GPU step; upstream's lowering alone
// (puts + abort) lost the message on a pipe and amp-train printed a stack dump.
// A check of the batch is refused before the step runs, on the CPU and for
// the GPU pipeline's step (amp-outline-batch-checks, a runner error); a
// check of a parameter stays in the step and ends the process from the
// compiled code.
// RUN: not amp-train %S/Inputs/failing-check-step.mlir --steps 2 --precision=fp32 --no-jit-cache > %t.out 2> %t.err
// RUN: FileCheck %s --check-prefixes=FAILED,REFUSED --input-file=%t.err
// RUN: %python -c "import subprocess, sys; sys.exit(subprocess.run(sys.argv[1:], capture_output=True).returncode != 3)" amp-train %S/Inputs/failing-weight-check-step.mlir --steps 1 --precision=fp32 --no-jit-cache
// RUN: not amp-train %S/Inputs/failing-weight-check-step.mlir --steps 2 --precision=f16 --no-jit-cache 2> %t.weight
// RUN: FileCheck %s --check-prefix=IN-STEP --input-file=%t.weight
// RUN: not amp-train %S/Inputs/failing-check-step.mlir --steps 2 --precision=f16 --no-jit-cache --device=cuda-emulated 2> %t.emulated
// RUN: FileCheck %s --check-prefixes=FAILED,REFUSED --input-file=%t.emulated
// RUN: %python -c "import subprocess, sys; sys.exit(subprocess.run(sys.argv[1:], capture_output=True).returncode != 3)" amp-train %S/Inputs/failing-check-step.mlir --steps 1 --precision=fp32 --no-jit-cache
// RUN: amp-opt %S/Inputs/failing-check-step.mlir --amp-cpu-pipeline | FileCheck %s --check-prefix=LOWERED

// FAILED-NOT: Stack dump
// FAILED: error: the compiled step failed a check: the ids' sum is not 100
// REFUSED-SAME: (the batch was refused before the step ran: nothing was updated)
// FAILED-NOT: Stack dump

// IN-STEP-NOT: refused
// IN-STEP: {{^}}error: the compiled step failed a check: the first weight is not above 10{{$}}
// IN-STEP-NOT: Stack dump

// LOWERED-DAG: llvm.mlir.global internal constant @amp_check_message_0("error: the compiled step failed a check: the ids' sum is not 100\0A")
// LOWERED-DAG: llvm.func @_exit(i32)
// LOWERED-DAG: llvm.func @write(i32, !llvm.ptr, i64) -> i64
// LOWERED-NOT: @abort
// LOWERED-NOT: @puts

// CHECK-DAG: llvm.mlir.global internal constant @amp_check_message_0("error: the compiled step failed a check: first\0A")
// CHECK-DAG: llvm.mlir.global internal constant @amp_check_message_1("error: the compiled step failed a check: second\0A")
// CHECK-DAG: llvm.func @write(i32, !llvm.ptr, i64) -> i64
// CHECK-DAG: llvm.func @_exit(i32)
// CHECK-LABEL: llvm.func @two_checks(
// CHECK-SAME:    %[[A:.*]]: i1, %[[B:.*]]: i1, %[[X:.*]]: i64)
// CHECK:         llvm.cond_br %[[A]], ^[[NEXT:.*]], ^[[FAIL:[a-z0-9]*]]
// CHECK:       ^[[FAIL]]:
// CHECK:         %[[MSG:.*]] = llvm.mlir.addressof @amp_check_message_0 : !llvm.ptr
// CHECK:         %[[FD:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK:         %[[LEN:.*]] = llvm.mlir.constant(47 : i64) : i64
// CHECK:         llvm.call @write(%[[FD]], %[[MSG]], %[[LEN]])
// CHECK:         %[[STATUS:.*]] = llvm.mlir.constant(3 : i32) : i32
// CHECK:         llvm.call @_exit(%[[STATUS]])
// CHECK:         llvm.unreachable
// CHECK:       ^[[NEXT]]:
// CHECK:         llvm.cond_br %[[B]]
// CHECK:         llvm.mlir.addressof @amp_check_message_1
// CHECK:         llvm.mlir.addressof @amp_check_message_0
// CHECK-NOT:     cf.assert
// CHECK:         llvm.return %[[X]] : i64
llvm.func @two_checks(%a: i1, %b: i1, %x: i64) -> i64 {
  cf.assert %a, "first"
  cf.assert %b, "second"
  cf.assert %a, "first"
  llvm.return %x : i64
}

// -----

// Device code keeps its checks (the NVVM lowering makes them __assertfail).
// CHECK-LABEL: gpu.module @kernels
// CHECK:         cf.assert %{{.*}}, "in a kernel"
// CHECK-NOT:     @write
gpu.module @kernels {
  llvm.func @kernel(%a: i1) {
    cf.assert %a, "in a kernel"
    llvm.return
  }
}
