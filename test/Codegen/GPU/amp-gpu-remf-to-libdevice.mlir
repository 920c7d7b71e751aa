// amp-gpu-remf-to-libdevice: a kernel's arith.remf as a call of libdevice's
// fmod (upstream's NVVM pipeline made it an llvm.frem, which the NVVM target
// refuses); 16-bit remainders through f32, vectors lane by lane, host code
// untouched. Then a whole
// step with a remainder through amp-compile --target=cuda and ptxas.
// RUN: amp-opt %s --split-input-file --verify-diagnostics --amp-gpu-remf-to-libdevice | FileCheck %s
// RUN: %if nvcc %{ amp-compile %S/Inputs/remf-step.mlir --target=cuda --chip=sm_80 --emit=ptx --precision=f16 -o %t.ptx %}
// RUN: %if nvcc %{ ptxas -arch=sm_80 %t.ptx -o %t.cubin %}
// RUN: %if nvcc %{ FileCheck %s --check-prefix=PTX --input-file %t.ptx %}

// CHECK-LABEL: gpu.module @kernels
// CHECK-DAG: llvm.func @__nv_fmodf(f32, f32) -> f32
// CHECK-DAG: llvm.func @__nv_fmod(f64, f64) -> f64
// CHECK-LABEL: gpu.func @k
// CHECK-SAME: (%[[A:.*]]: f32, %[[B:.*]]: f32, %[[H:.*]]: f16, %[[G:.*]]: f16, %[[D:.*]]: f64, %[[E:.*]]: f64
// CHECK-NOT: arith.remf
// CHECK: %[[R:.*]] = llvm.call @__nv_fmodf(%[[A]], %[[B]]) : (f32, f32) -> f32
// CHECK: %[[HX:.*]] = arith.extf %[[H]] : f16 to f32
// CHECK: %[[GX:.*]] = arith.extf %[[G]] : f16 to f32
// CHECK: %[[HR:.*]] = llvm.call @__nv_fmodf(%[[HX]], %[[GX]]) : (f32, f32) -> f32
// CHECK: arith.truncf %[[HR]] : f32 to f16
// CHECK: llvm.call @__nv_fmod(%[[D]], %[[E]]) : (f64, f64) -> f64
// CHECK-LABEL: func.func @host
// CHECK: arith.remf
// PTX: .entry
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%a: f32, %b: f32, %h: f16, %g: f16, %d: f64, %e: f64, %out: memref<3xf32>) kernel {
      %0 = arith.remf %a, %b : f32
      %1 = arith.remf %h, %g : f16
      %2 = arith.remf %d, %e : f64
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %3 = arith.extf %1 : f16 to f32
      %4 = arith.truncf %2 : f64 to f32
      memref.store %0, %out[%c0] : memref<3xf32>
      memref.store %3, %out[%c1] : memref<3xf32>
      memref.store %4, %out[%c2] : memref<3xf32>
      gpu.return
    }
  }
  func.func @host(%a: f32, %b: f32) -> f32 {
    %0 = arith.remf %a, %b : f32
    return %0 : f32
  }
}

// -----

// A vector remainder (amp-gpu-vectorize-elementwise gives a thread 16
// bytes): lane by lane, 16-bit lanes through f32, gathered again.
// CHECK-LABEL: gpu.func @vector
// CHECK-SAME: (%[[A:.*]]: vector<2xf16>, %[[B:.*]]: vector<2xf16>
// CHECK-NOT: arith.remf
// CHECK: %[[A0:.*]] = vector.extract %[[A]][0] : f16 from vector<2xf16>
// CHECK: %[[B0:.*]] = vector.extract %[[B]][0] : f16 from vector<2xf16>
// CHECK: %[[A0X:.*]] = arith.extf %[[A0]] : f16 to f32
// CHECK: %[[B0X:.*]] = arith.extf %[[B0]] : f16 to f32
// CHECK: %[[R0X:.*]] = llvm.call @__nv_fmodf(%[[A0X]], %[[B0X]]) : (f32, f32) -> f32
// CHECK: %[[R0:.*]] = arith.truncf %[[R0X]] : f32 to f16
// CHECK: %[[A1:.*]] = vector.extract %[[A]][1] : f16 from vector<2xf16>
// CHECK: %[[B1:.*]] = vector.extract %[[B]][1] : f16 from vector<2xf16>
// CHECK: llvm.call @__nv_fmodf
// CHECK: %[[R1:.*]] = arith.truncf %{{.*}} : f32 to f16
// CHECK: %[[R:.*]] = vector.from_elements %[[R0]], %[[R1]] : vector<2xf16>
// CHECK: vector.store %[[R]]
// A 2-D one keeps its shape: lanes [0, 0] .. [1, 1].
// CHECK-LABEL: gpu.func @matrix
// CHECK: vector.extract %{{.*}}[0, 0] : f32 from vector<2x2xf32>
// CHECK: llvm.call @__nv_fmodf
// CHECK: vector.extract %{{.*}}[0, 1] : f32 from vector<2x2xf32>
// CHECK: llvm.call @__nv_fmodf
// CHECK: vector.extract %{{.*}}[1, 0] : f32 from vector<2x2xf32>
// CHECK: llvm.call @__nv_fmodf
// CHECK: vector.extract %{{.*}}[1, 1] : f32 from vector<2x2xf32>
// CHECK: llvm.call @__nv_fmodf
// CHECK: vector.from_elements {{.*}} : vector<2x2xf32>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @vector(%a: vector<2xf16>, %b: vector<2xf16>, %out: memref<2xf16>) kernel {
      %0 = arith.remf %a, %b : vector<2xf16>
      %c0 = arith.constant 0 : index
      vector.store %0, %out[%c0] : memref<2xf16>, vector<2xf16>
      gpu.return
    }
    gpu.func @matrix(%a: vector<2x2xf32>, %b: vector<2x2xf32>, %out: memref<2x2xf32>) kernel {
      %0 = arith.remf %a, %b : vector<2x2xf32>
      %c0 = arith.constant 0 : index
      vector.store %0, %out[%c0, %c0] : memref<2x2xf32>, vector<2x2xf32>
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%a: vector<[4]xf32>, %b: vector<[4]xf32>, %out: memref<4xf32>) kernel {
      // expected-error @+1 {{a kernel's arith.remf on 'vector<[4]xf32>' has no libdevice function (f16, bf16, f32 and f64 have, as scalars or fixed-size vectors)}}
      %0 = arith.remf %a, %b : vector<[4]xf32>
      gpu.return
    }
  }
}
