// amp-gpu-parallel-loops-first: a reduction whose first loop reduces (a
// column sum, a bias gradient) is generalized with its parallel loops first,
// so convert-linalg-to-parallel-loops makes its outputs threads instead of a
// host loop around kernel launches; ops already in that order are left alone.
// RUN: amp-opt %s --amp-gpu-parallel-loops-first | FileCheck %s

// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2) -> (d1, d2, d0)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d0)>
// CHECK-DAG: #[[CIN:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-DAG: #[[COUT:.*]] = affine_map<(d0, d1) -> (d0)>

// CHECK-LABEL: func.func @bias_grad(
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "reduction", "reduction"]} ins(%arg0 : memref<1x512x1024xf16>) outs(%arg1 : memref<1024xf32>)
func.func @bias_grad(%x: memref<1x512x1024xf16>, %out: memref<1024xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>],
                  iterator_types = ["reduction", "reduction", "parallel"]}
      ins(%x : memref<1x512x1024xf16>) outs(%out : memref<1024xf32>) {
  ^bb0(%in: f16, %acc: f32):
    %e = arith.extf %in : f16 to f32
    %s = arith.addf %e, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// CHECK-LABEL: func.func @column_sum(
// CHECK: linalg.generic {indexing_maps = [#[[CIN]], #[[COUT]]], iterator_types = ["parallel", "reduction"]} ins(%arg0 : memref<512x16xf32>) outs(%arg1 : memref<16xf32>)
// CHECK-NOT: linalg.reduce
func.func @column_sum(%x: memref<512x16xf32>, %out: memref<16xf32>) {
  linalg.reduce ins(%x : memref<512x16xf32>) outs(%out : memref<16xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return
}

// CHECK-LABEL: func.func @row_sum(
// CHECK: linalg.reduce
func.func @row_sum(%x: memref<512x16xf32>, %out: memref<512xf32>) {
  linalg.reduce ins(%x : memref<512x16xf32>) outs(%out : memref<512xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return
}
