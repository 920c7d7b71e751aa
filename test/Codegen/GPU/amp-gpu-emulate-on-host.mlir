// RUN: amp-opt %s --amp-gpu-emulate-on-host --split-input-file --verify-diagnostics | FileCheck %s
// RUN: amp-opt %s --amp-gpu-emulate-on-host="check-bounds=true" --split-input-file --verify-diagnostics | FileCheck %s --check-prefix=BOUNDS

// Run: an out-of-bounds store stops the run with its location on stderr and
// exit status 3 (amp-cpu-report-failed-checks). Without check-bounds it runs.
// RUN: amp-opt %S/Inputs/emulate-out-of-bounds.mlir --amp-gpu-emulate-on-host="check-bounds=true" --amp-cpu-pipeline="blas=false emit-c-interface=false runtime-allocator=false parallel-min-work=0" -o %t.bounds.mlir
// RUN: not mlir-runner %t.bounds.mlir -e main --entry-point-result=void 2>&1 | FileCheck %s --check-prefix=ABORT
// ABORT: error: the compiled step failed a check: ERROR: runtime op verification failed in emulated kernel
// ABORT-NEXT: memref.store at loc("{{.*}}emulate-out-of-bounds.mlir":22:7)
// ABORT-NEXT: ^ out-of-bounds access
// The same for a vector store (amp-gpu-vectorize-elementwise's): its last lane
// is checked.
// RUN: amp-opt %S/Inputs/emulate-vector-out-of-bounds.mlir --amp-gpu-emulate-on-host="check-bounds=true" --amp-cpu-pipeline="blas=false emit-c-interface=false runtime-allocator=false parallel-min-work=0" -o %t.vbounds.mlir
// RUN: not mlir-runner %t.vbounds.mlir -e main --entry-point-result=void 2>&1 | FileCheck %s --check-prefix=VABORT
// VABORT: error: the compiled step failed a check: ERROR: runtime op verification failed in emulated kernel
// VABORT-NEXT: vector.store at loc("{{.*}}emulate-vector-out-of-bounds.mlir":25:7)
// VABORT-NEXT: ^ out-of-bounds access

// A step as amp-gpu-pipeline{nvvm=false} leaves it: an async chain of
// allocations, copies and a launch, one wait at the end.

// CHECK-LABEL: func.func @step(
// CHECK-SAME:    %[[IN:.*]]: memref<1000xf32>, %[[OUT:.*]]: memref<1000xf32>)
// CHECK-NOT:     gpu.
// CHECK:         %[[BUF:.*]] = memref.alloc() : memref<1000xf32>
// CHECK:         memref.copy %[[IN]], %[[BUF]]
// CHECK:         linalg.fill ins(%{{.*}} : f32) outs(%[[OUT]] : memref<1000xf32>)
// CHECK:         call @kernels__scale(%c4, %c1, %c1, %c256, %c1, %c1, %[[BUF]], %[[OUT]])
// CHECK:         memref.dealloc %[[BUF]]
// CHECK-NEXT:    return

// The kernel: block z, y, x, thread z, y, x loops around the body, whose
// guard stays; the ids are the loop indices.
// CHECK-LABEL: func.func private @kernels__scale(
// CHECK-SAME:    %[[GX:[^:]*]]: index, %[[GY:[^:]*]]: index, %[[GZ:[^:]*]]: index, %[[BX:[^:]*]]: index, %[[BY:[^:]*]]: index, %[[BZ:[^:]*]]: index, %[[A:.*]]: memref<1000xf32>, %[[B:.*]]: memref<1000xf32>)
// CHECK-SAME:    attributes {passthrough = ["noinline"]}
// CHECK:         scf.for %{{.*}} = %{{.*}} to %[[GZ]]
// CHECK:           scf.for %{{.*}} = %{{.*}} to %[[GY]]
// CHECK:             scf.for %[[BID:.*]] = %{{.*}} to %[[GX]]
// CHECK:               scf.for %{{.*}} = %{{.*}} to %[[BZ]]
// CHECK:                 scf.for %{{.*}} = %{{.*}} to %[[BY]]
// CHECK:                   scf.for %[[TID:.*]] = %{{.*}} to %[[BX]]
// CHECK:                     scf.execute_region {
// CHECK:                       %[[I:.*]] = arith.muli %[[BID]], %[[BX]]
// CHECK:                       %[[J:.*]] = arith.addi %[[I]], %[[TID]]
// CHECK:                       scf.if
// CHECK:                         memref.load %[[A]][%[[J]]]
// CHECK:                         memref.store %{{.*}}, %[[B]][%[[J]]]
// CHECK:                       scf.yield
// CHECK-NOT:   gpu.module

// With check-bounds, each access is checked first.
// BOUNDS-LABEL: func.func private @kernels__scale(
// BOUNDS:         cf.assert %{{.*}}, "ERROR: runtime op verification failed in emulated kernel\0Amemref.load at {{.*}}emulate-on-host.mlir{{.*}}out-of-bounds access"
// BOUNDS-NEXT:    memref.load
// BOUNDS:         cf.assert %{{.*}}, "{{.*}}memref.store at {{.*}}out-of-bounds access"
// BOUNDS-NEXT:    memref.store

module attributes {gpu.container_module} {
  func.func @step(%in: memref<1000xf32>, %out: memref<1000xf32>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c256 = arith.constant 256 : index
    %zero = arith.constant 0.0 : f32
    %t0 = gpu.wait async
    %buf, %t1 = gpu.alloc async [%t0] () : memref<1000xf32>
    %t2 = gpu.memcpy async [%t1] %buf, %in : memref<1000xf32>, memref<1000xf32>
    %t3 = gpu.memset async [%t2] %out, %zero : memref<1000xf32>, f32
    %t4 = gpu.launch_func async [%t3] @kernels::@scale blocks in (%c4, %c1, %c1) threads in (%c256, %c1, %c1) args(%buf : memref<1000xf32>, %out : memref<1000xf32>)
    %t5 = gpu.dealloc async [%t4] %buf : memref<1000xf32>
    gpu.wait [%t5]
    return
  }
  gpu.module @kernels {
    gpu.func @scale(%a: memref<1000xf32>, %b: memref<1000xf32>) kernel {
      %bid = gpu.block_id x
      %tid = gpu.thread_id x
      %dim = gpu.block_dim x
      %n = arith.constant 1000 : index
      %i = arith.muli %bid, %dim : index
      %j = arith.addi %i, %tid : index
      %in = arith.cmpi ult, %j, %n : index
      scf.if %in {
        %v = memref.load %a[%j] : memref<1000xf32>
        %two = arith.constant 2.0 : f32
        %w = arith.mulf %v, %two : f32
        memref.store %w, %b[%j] : memref<1000xf32>
      }
      gpu.return
    }
  }
}

// -----

// Threads that meet at a barrier cannot run one after another.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @sync(%a: memref<256xf32>) kernel {
      // expected-error @below {{'gpu.barrier' op cannot be emulated on the host}}
      gpu.barrier
      gpu.return
    }
  }
}

// -----

// Nor can threads that share memory.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // expected-error @below {{uses workgroup (shared) memory}}
    gpu.func @shared(%a: memref<256xf32>) workgroup(%tile: memref<256xf32, #gpu.address_space<workgroup>>) kernel {
      gpu.return
    }
  }
}

// -----

// A gpu.memcpy into a slice at an offset: memref.copy would honour the offset
// where the GPU lowering of gpu.memcpy ignores it (the copy lands at the
// buffer's start), so the emulation refuses it rather than hide the
// difference (amp-gpu-host-to-device makes such copies kernels).
module attributes {gpu.container_module} {
  func.func @offset_copy(%h: memref<4x16xf32>, %o: memref<48x16xf32>) {
    %v = memref.subview %o[4, 0] [4, 16] [1, 1] : memref<48x16xf32> to memref<4x16xf32, strided<[16, 1], offset: 64>>
    // expected-error @below {{'gpu.memcpy' op has an operand of type 'memref<4x16xf32, strided<[16, 1], offset: 64>>', which is not a dense buffer at offset 0}}
    gpu.memcpy %v, %h : memref<4x16xf32, strided<[16, 1], offset: 64>>, memref<4x16xf32>
    return
  }
}
