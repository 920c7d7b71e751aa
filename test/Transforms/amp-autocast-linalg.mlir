// amp-autocast on linalg / tensor / arith / math code on tensors.
// RUN: amp-opt %s --amp-autocast | FileCheck %s
// RUN: amp-opt %s --amp-autocast=precision=bf16 | FileCheck %s --check-prefix=BF16

#id = affine_map<(d0, d1) -> (d0, d1)>

// linalg.matmul: f16 ins (arith.truncf outside TOSA code), f32 outs; the fill
// of the accumulator with 0.0 stays f32.
// CHECK-LABEL: func.func @matmul(
// CHECK-SAME: %[[A:[^:]*]]: tensor<4x8xf32>, %[[B:[^:]*]]: tensor<8x2xf32>)
// CHECK-DAG: %[[A16:.*]] = arith.truncf %[[A]] : tensor<4x8xf32> to tensor<4x8xf16>
// CHECK-DAG: %[[B16:.*]] = arith.truncf %[[B]] : tensor<8x2xf32> to tensor<8x2xf16>
// CHECK-DAG: %[[E:.*]] = tensor.empty() : tensor<4x2xf32>
// CHECK-DAG: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[F:.*]] = linalg.fill ins(%[[Z]] : f32) outs(%[[E]] : tensor<4x2xf32>) -> tensor<4x2xf32>
// CHECK-NEXT: %[[M:.*]] = linalg.matmul ins(%[[A16]], %[[B16]] : tensor<4x8xf16>, tensor<8x2xf16>) outs(%[[F]] : tensor<4x2xf32>) -> tensor<4x2xf32>
// CHECK-NEXT: return %[[M]] : tensor<4x2xf32>
// CHECK-NOT: tosa.cast
// BF16-LABEL: func.func @matmul(
// BF16: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x8xbf16>, tensor<8x2xbf16>) outs(%{{.*}} : tensor<4x2xf32>) -> tensor<4x2xf32>
func.func @matmul(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>) -> tensor<4x2xf32> {
  %e = tensor.empty() : tensor<4x2xf32>
  %z = arith.constant 0.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x2xf32>) -> tensor<4x2xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x2xf32>) outs(%f : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// CHECK-LABEL: func.func @batch_matmul(
// CHECK-SAME: %[[A:[^:]*]]: tensor<3x4x8xf32>, %[[B:[^:]*]]: tensor<3x8x2xf32>, %[[I:[^:]*]]: tensor<3x4x2xf32>)
// CHECK-DAG: %[[A16:.*]] = arith.truncf %[[A]] : tensor<3x4x8xf32> to tensor<3x4x8xf16>
// CHECK-DAG: %[[B16:.*]] = arith.truncf %[[B]] : tensor<3x8x2xf32> to tensor<3x8x2xf16>
// CHECK: linalg.batch_matmul ins(%[[A16]], %[[B16]] : tensor<3x4x8xf16>, tensor<3x8x2xf16>) outs(%[[I]] : tensor<3x4x2xf32>) -> tensor<3x4x2xf32>
func.func @batch_matmul(%a: tensor<3x4x8xf32>, %b: tensor<3x8x2xf32>, %init: tensor<3x4x2xf32>) -> tensor<3x4x2xf32> {
  %0 = linalg.batch_matmul ins(%a, %b : tensor<3x4x8xf32>, tensor<3x8x2xf32>) outs(%init : tensor<3x4x2xf32>) -> tensor<3x4x2xf32>
  return %0 : tensor<3x4x2xf32>
}

// A product with a 0/1 matrix (an i1 tensor turned into f32 by a generic
// whose body is one arith.uitofp, then transposed and collapsed: the linalg
// import of the embedding backward) is a scatter-add written as a GEMM: deny,
// it stays f32 (docs/Policy.md, difference 14). A float-to-float cast on the
// way (%float) makes it an ordinary product again.
// CHECK-LABEL: func.func @one_hot_matmul(
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<5x4xf32>, tensor<4x3xf32>) outs(%{{.*}} : tensor<5x3xf32>)
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<5x4xf16>, tensor<4x3xf16>) outs(%{{.*}} : tensor<5x3xf32>)
// BF16-LABEL: func.func @one_hot_matmul(
// BF16: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<5x4xf32>, tensor<4x3xf32>) outs(%{{.*}} : tensor<5x3xf32>)
// BF16: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<5x4xbf16>, tensor<4x3xbf16>) outs(%{{.*}} : tensor<5x3xf32>)
func.func @one_hot_matmul(%hits: tensor<1x4x5xi1>, %rows: tensor<4x3xf32>, %float: tensor<4x5xf64>) -> (tensor<5x3xf32>, tensor<5x3xf32>) {
  %e = tensor.empty() : tensor<1x4x5xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%hits : tensor<1x4x5xi1>) outs(%e : tensor<1x4x5xf32>) {
  ^bb0(%in: i1, %out: f32):
    %c = arith.uitofp %in : i1 to f32
    linalg.yield %c : f32
  } -> tensor<1x4x5xf32>
  %1 = tensor.collapse_shape %0 [[0, 1], [2]] : tensor<1x4x5xf32> into tensor<4x5xf32>
  %t = tensor.empty() : tensor<5x4xf32>
  %2 = linalg.transpose ins(%1 : tensor<4x5xf32>) outs(%t : tensor<5x4xf32>) permutation = [1, 0]
  %z = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<5x3xf32>
  %f = linalg.fill ins(%z : f32) outs(%o : tensor<5x3xf32>) -> tensor<5x3xf32>
  %3 = linalg.matmul ins(%2, %rows : tensor<5x4xf32>, tensor<4x3xf32>) outs(%f : tensor<5x3xf32>) -> tensor<5x3xf32>
  %e2 = tensor.empty() : tensor<4x5xf32>
  %4 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%float : tensor<4x5xf64>) outs(%e2 : tensor<4x5xf32>) {
  ^bb0(%in: f64, %out: f32):
    %c = arith.truncf %in : f64 to f32
    linalg.yield %c : f32
  } -> tensor<4x5xf32>
  %5 = linalg.transpose ins(%4 : tensor<4x5xf32>) outs(%t : tensor<5x4xf32>) permutation = [1, 0]
  %6 = linalg.matmul ins(%5, %rows : tensor<5x4xf32>, tensor<4x3xf32>) outs(%f : tensor<5x3xf32>) -> tensor<5x3xf32>
  return %3, %6 : tensor<5x3xf32>, tensor<5x3xf32>
}

// A generic whose body has math.exp is deny: it stays f32 between two matmuls.
// CHECK-LABEL: func.func @generic_exp(
// CHECK: %[[M:.*]] = linalg.matmul {{.*}} -> tensor<4x8xf32>
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK-NEXT: %[[G:.*]] = linalg.generic {{.*}} ins(%[[M]] : tensor<4x8xf32>) outs(%[[E]] : tensor<4x8xf32>) {
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[X:.*]] = math.exp %[[IN]] : f32
// CHECK-NEXT: linalg.yield %[[X]] : f32
// CHECK-NEXT: } -> tensor<4x8xf32>
// CHECK-NEXT: %[[G16:.*]] = arith.truncf %[[G]] : tensor<4x8xf32> to tensor<4x8xf16>
// CHECK-NEXT: linalg.matmul ins(%[[G16]], %{{.*}} : tensor<4x8xf16>, tensor<8x8xf16>)
func.func @generic_exp(%a: tensor<4x8xf32>, %b: tensor<8x8xf32>, %init: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%0 : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = math.exp %x : f32
    linalg.yield %y : f32
  } -> tensor<4x8xf32>
  %2 = linalg.matmul ins(%1, %b : tensor<4x8xf32>, tensor<8x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// An elementwise generic (addf) of a matmul and a broadcast bias between two
// matmuls goes f16: its block
// arguments are extended at the top of the body, the result truncated before
// the yield, and its init is a new f16 tensor.empty (the f32 one is dead).
// CHECK-LABEL: func.func @generic_add(
// CHECK-SAME: %[[BIAS:[^:]*]]: tensor<8xf32>, %{{[^:]*}}: tensor<4x8xf32>)
// CHECK-DAG: %[[BIAS16:.*]] = arith.truncf %[[BIAS]] : tensor<8xf32> to tensor<8xf16>
// CHECK: %[[M:.*]] = linalg.matmul {{.*}} -> tensor<4x8xf32>
// CHECK-NEXT: %[[M16:.*]] = arith.truncf %[[M]] : tensor<4x8xf32> to tensor<4x8xf16>
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<4x8xf16>
// CHECK-NEXT: %[[G:.*]] = linalg.generic {{.*}} ins(%[[M16]], %[[BIAS16]] : tensor<4x8xf16>, tensor<8xf16>) outs(%[[E]] : tensor<4x8xf16>) {
// CHECK-NEXT: ^bb0(%[[X:.*]]: f16, %[[Y:.*]]: f16, %{{.*}}: f16):
// CHECK-NEXT: %[[X32:.*]] = arith.extf %[[X]] : f16 to f32
// CHECK-NEXT: %[[Y32:.*]] = arith.extf %[[Y]] : f16 to f32
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[X32]], %[[Y32]] : f32
// CHECK-NEXT: %[[S16:.*]] = arith.truncf %[[S]] : f32 to f16
// CHECK-NEXT: linalg.yield %[[S16]] : f16
// CHECK-NEXT: } -> tensor<4x8xf16>
// CHECK-NEXT: linalg.matmul ins(%[[G]], %{{.*}} : tensor<4x8xf16>, tensor<8x8xf16>)
// CHECK-NOT: tensor.empty() : tensor<4x8xf32>
// BF16-LABEL: func.func @generic_add(
// BF16: ^bb0(%{{.*}}: bf16, %{{.*}}: bf16, %{{.*}}: bf16):
// BF16-NEXT: arith.extf %{{.*}} : bf16 to f32
// BF16-NEXT: arith.extf %{{.*}} : bf16 to f32
// BF16-NEXT: arith.addf
// BF16-NEXT: arith.truncf %{{.*}} : f32 to bf16
func.func @generic_add(%a: tensor<4x8xf32>, %b: tensor<8x8xf32>, %bias: tensor<8xf32>, %init: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %1 = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> (d1)>, #id], iterator_types = ["parallel", "parallel"]} ins(%0, %bias : tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %2 = linalg.matmul ins(%1, %b : tensor<4x8xf32>, tensor<8x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// Left alone: the same generic after the last matmul stays f32.
// CHECK-LABEL: func.func @generic_add_alone(
// CHECK: %[[M:.*]] = linalg.matmul {{.*}} -> tensor<4x8xf32>
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[M]], %{{.*}} : tensor<4x8xf32>, tensor<4x8xf32>) outs(%[[E]] : tensor<4x8xf32>) {
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32):
// CHECK-NEXT: arith.addf %{{.*}}, %{{.*}} : f32
func.func @generic_add_alone(%a: tensor<4x8xf32>, %b: tensor<8x8xf32>, %bias: tensor<4x8xf32>, %init: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%0, %bias : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// linalg.reduce with addf is an accumulating sum: f32 even right after a matmul.
// CHECK-LABEL: func.func @reduce_sum(
// CHECK-SAME: %[[ACC:[^:]*]]: tensor<4xf32>)
// CHECK: %[[M:.*]] = linalg.matmul {{.*}} -> tensor<4x8xf32>
// CHECK-NEXT: %[[R:.*]] = linalg.reduce ins(%[[M]] : tensor<4x8xf32>) outs(%[[ACC]] : tensor<4xf32>) dimensions = [1]
// CHECK-NEXT: (%{{.*}}: f32, %{{.*}}: f32) {
// CHECK-NEXT: arith.addf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: linalg.yield %{{.*}} : f32
// CHECK-NEXT: }
// CHECK-NEXT: return %[[R]] : tensor<4xf32>
func.func @reduce_sum(%a: tensor<4x8xf32>, %b: tensor<8x8xf32>, %init: tensor<4x8xf32>, %acc: tensor<4xf32>) -> tensor<4xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = linalg.reduce ins(%0 : tensor<4x8xf32>) outs(%acc : tensor<4xf32>) dimensions = [1]
    (%x: f32, %y: f32) {
      %s = arith.addf %x, %y : f32
      linalg.yield %s : f32
    }
  return %1 : tensor<4xf32>
}

// linalg.reduce with maximumf is clear: it follows the matmul's f32 result
// (no round trip through f16).
// CHECK-LABEL: func.func @reduce_max(
// CHECK-SAME: %[[ACC:[^:]*]]: tensor<4xf32>)
// CHECK: %[[M:.*]] = linalg.matmul {{.*}} -> tensor<4x8xf32>
// CHECK-NEXT: %[[R:.*]] = linalg.reduce ins(%[[M]] : tensor<4x8xf32>) outs(%[[ACC]] : tensor<4xf32>) dimensions = [1]
// CHECK-NEXT: (%{{.*}}: f32, %{{.*}}: f32) {
// CHECK-NEXT: arith.maximumf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: linalg.yield %{{.*}} : f32
// CHECK-NEXT: }
// CHECK-NEXT: return %[[R]] : tensor<4xf32>
func.func @reduce_max(%a: tensor<4x8xf32>, %b: tensor<8x8xf32>, %init: tensor<4x8xf32>, %acc: tensor<4xf32>) -> tensor<4xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = linalg.reduce ins(%0 : tensor<4x8xf32>) outs(%acc : tensor<4xf32>) dimensions = [1]
    (%x: f32, %y: f32) {
      %s = arith.maximumf %x, %y : f32
      linalg.yield %s : f32
    }
  return %1 : tensor<4xf32>
}

// linalg.softmax stays f32.
// CHECK-LABEL: func.func @softmax(
// CHECK: %[[M:.*]] = linalg.matmul {{.*}} -> tensor<4x8xf32>
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK-NEXT: linalg.softmax dimension(1) ins(%[[M]] : tensor<4x8xf32>) outs(%[[E]] : tensor<4x8xf32>) -> tensor<4x8xf32>
func.func @softmax(%a: tensor<4x8xf32>, %b: tensor<8x8xf32>, %init: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %1 = linalg.softmax dimension(1) ins(%0 : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// linalg.transpose feeding a matmul moves f16 data into an f16 tensor.empty.
// CHECK-LABEL: func.func @transpose(
// CHECK-SAME: %[[A:[^:]*]]: tensor<8x4xf32>
// CHECK-DAG: %[[A16:.*]] = arith.truncf %[[A]] : tensor<8x4xf32> to tensor<8x4xf16>
// CHECK-DAG: %[[E:.*]] = tensor.empty() : tensor<4x8xf16>
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[A16]] : tensor<8x4xf16>) outs(%[[E]] : tensor<4x8xf16>) permutation = [1, 0]
// CHECK-NEXT: linalg.matmul ins(%[[T]], %{{.*}} : tensor<4x8xf16>, tensor<8x2xf16>)
// CHECK-NOT: tensor<4x8xf32>
func.func @transpose(%a: tensor<8x4xf32>, %b: tensor<8x2xf32>, %init: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %t = linalg.transpose ins(%a : tensor<8x4xf32>) outs(%e : tensor<4x8xf32>) permutation = [1, 0]
  %0 = linalg.matmul ins(%t, %b : tensor<4x8xf32>, tensor<8x2xf32>) outs(%init : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// arith / math on tensors: addf (infer) and tanh (infer) between two matmuls
// go f16, exp (deny) after the last one stays f32.
// CHECK-LABEL: func.func @tensor_arith(
// CHECK-SAME: %[[A:[^:]*]]: tensor<4x8xf32>
// CHECK-DAG: %[[A16:.*]] = arith.truncf %[[A]] : tensor<4x8xf32> to tensor<4x8xf16>
// CHECK: %[[M:.*]] = linalg.matmul ins(%[[A16]], {{.*}} -> tensor<4x8xf32>
// CHECK-NEXT: %[[M16:.*]] = arith.truncf %[[M]] : tensor<4x8xf32> to tensor<4x8xf16>
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[M16]], %[[A16]] : tensor<4x8xf16>
// CHECK-NEXT: %[[T:.*]] = math.tanh %[[S]] : tensor<4x8xf16>
// CHECK-NEXT: %[[M2:.*]] = linalg.matmul ins(%[[T]], {{.*}} -> tensor<4x8xf32>
// CHECK-NEXT: %[[X:.*]] = math.exp %[[M2]] : tensor<4x8xf32>
// CHECK-NEXT: return %[[X]]
func.func @tensor_arith(%a: tensor<4x8xf32>, %b: tensor<8x8xf32>, %init: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = arith.addf %0, %a : tensor<4x8xf32>
  %2 = math.tanh %1 : tensor<4x8xf32>
  %3 = linalg.matmul ins(%2, %b : tensor<4x8xf32>, tensor<8x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = math.exp %3 : tensor<4x8xf32>
  return %4 : tensor<4x8xf32>
}

// Left alone: tensor arithmetic with no matmul stays f32.
// CHECK-LABEL: func.func @tensor_arith_alone(
// CHECK-NOT: arith.truncf
// CHECK: arith.addf %{{.*}}, %{{.*}} : tensor<4x8xf32>
// CHECK-NEXT: math.tanh %{{.*}} : tensor<4x8xf32>
// CHECK-NOT: arith.truncf
// CHECK: return
func.func @tensor_arith_alone(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %1 = arith.addf %a, %a : tensor<4x8xf32>
  %2 = math.tanh %1 : tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// linalg.fill feeding an f16 elementwise op: the constant scalar is
// re-created in f16 and the fill writes an f16 tensor.empty.
// CHECK-LABEL: func.func @fill_scalar(
// CHECK: %[[M:.*]] = linalg.matmul {{.*}} -> tensor<4x8xf32>
// CHECK-NEXT: %[[M16:.*]] = arith.truncf %[[M]] : tensor<4x8xf32> to tensor<4x8xf16>
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<4x8xf16>
// CHECK: %[[C16:.*]] = arith.constant 2.000000e+00 : f16
// CHECK-NEXT: %[[F:.*]] = linalg.fill ins(%[[C16]] : f16) outs(%[[E]] : tensor<4x8xf16>) -> tensor<4x8xf16>
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[M16]], %[[F]] : tensor<4x8xf16>
// CHECK-NEXT: linalg.matmul ins(%[[P]], {{.*}} : tensor<4x8xf16>, tensor<8x8xf16>)
// BF16-LABEL: func.func @fill_scalar(
// BF16: %[[C16:.*]] = arith.constant 2.000000e+00 : bf16
// BF16-NEXT: linalg.fill ins(%[[C16]] : bf16) outs(%{{.*}} : tensor<4x8xbf16>) -> tensor<4x8xbf16>
func.func @fill_scalar(%a: tensor<4x8xf32>, %b: tensor<8x8xf32>, %init: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %c = arith.constant 2.0 : f32
  %f = linalg.fill ins(%c : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = arith.mulf %0, %f : tensor<4x8xf32>
  %2 = linalg.matmul ins(%1, %b : tensor<4x8xf32>, tensor<8x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// A non-constant fill scalar gets an arith.truncf.
// CHECK-LABEL: func.func @fill_dynamic_scalar(
// CHECK-SAME: %[[S:[^:]*]]: f32)
// CHECK: %[[S16:.*]] = arith.truncf %[[S]] : f32 to f16
// CHECK-NEXT: linalg.fill ins(%[[S16]] : f16) outs(%{{.*}} : tensor<4x8xf16>) -> tensor<4x8xf16>
func.func @fill_dynamic_scalar(%a: tensor<4x8xf32>, %b: tensor<8x8xf32>, %init: tensor<4x8xf32>, %s: f32) -> tensor<4x8xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %f = linalg.fill ins(%s : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = arith.mulf %0, %f : tensor<4x8xf32>
  %2 = linalg.matmul ins(%1, %b : tensor<4x8xf32>, tensor<8x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// One tensor.empty used by an f16 generic and an f32 generic is re-created
// per type; no cast of an empty tensor is ever inserted.
// CHECK-LABEL: func.func @empty_per_type(
// CHECK-DAG: %[[E32:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK-DAG: %[[E16:.*]] = tensor.empty() : tensor<4x8xf16>
// CHECK-NOT: arith.truncf %[[E32]]
// CHECK: linalg.generic {{.*}} outs(%[[E16]] : tensor<4x8xf16>)
// CHECK: math.tanh %{{.*}} : f32
// CHECK: linalg.generic {{.*}} outs(%[[E32]] : tensor<4x8xf32>)
// CHECK: math.exp %{{.*}} : f32
func.func @empty_per_type(%a: tensor<4x8xf32>, %b: tensor<8x8xf32>, %init: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%0 : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = math.tanh %x : f32
    linalg.yield %y : f32
  } -> tensor<4x8xf32>
  %2 = linalg.matmul ins(%1, %b : tensor<4x8xf32>, tensor<8x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%2 : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = math.exp %x : f32
    linalg.yield %y : f32
  } -> tensor<4x8xf32>
  return %2, %3 : tensor<4x8xf32>, tensor<4x8xf32>
}

// tensor data movement (clear) next to matmuls: collapse_shape, extract_slice,
// expand_shape, pad (with its padding value converted), insert_slice.
// CHECK-LABEL: func.func @tensor_ops(
// CHECK-SAME: %[[A:[^:]*]]: tensor<2x4x8xf32>
// CHECK-DAG: %[[A16:.*]] = arith.truncf %[[A]] : tensor<2x4x8xf32> to tensor<2x4x8xf16>
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[A16]] {{\[\[}}0, 1], [2]] : tensor<2x4x8xf16> into tensor<8x8xf16>
// CHECK-NEXT: %[[S:.*]] = tensor.extract_slice %[[C]][0, 0] [8, 8] [1, 1] : tensor<8x8xf16> to tensor<8x8xf16>
// CHECK-NEXT: %[[M:.*]] = linalg.matmul ins(%[[S]], {{.*}} -> tensor<8x8xf32>
// CHECK-NEXT: %[[M16:.*]] = arith.truncf %[[M]] : tensor<8x8xf32> to tensor<8x8xf16>
// CHECK-NEXT: %[[X:.*]] = tensor.expand_shape %[[M16]] {{.*}} : tensor<8x8xf16> into tensor<2x4x8xf16>
// CHECK-NEXT: %[[Y:.*]] = tensor.collapse_shape %[[X]] {{.*}} : tensor<2x4x8xf16> into tensor<8x8xf16>
// CHECK: %[[P:.*]] = tensor.pad %[[Y]] low[1, 0] high[1, 0] {
// CHECK: %[[PV:.*]] = arith.constant 5.000000e-01 : f16
// CHECK-NEXT: tensor.yield %[[PV]] : f16
// CHECK-NEXT: } : tensor<8x8xf16> to tensor<10x8xf16>
// CHECK-NEXT: %[[M2:.*]] = linalg.matmul ins(%[[P]], {{.*}} -> tensor<10x8xf32>
// CHECK-NEXT: %[[M216:.*]] = arith.truncf %[[M2]] : tensor<10x8xf32> to tensor<10x8xf16>
// CHECK-NEXT: %[[I:.*]] = tensor.insert_slice %[[M16]] into %[[M216]][1, 0] [8, 8] [1, 1] : tensor<8x8xf16> into tensor<10x8xf16>
// CHECK-NEXT: linalg.matmul ins(%[[I]], {{.*}} : tensor<10x8xf16>, tensor<8x8xf16>)
func.func @tensor_ops(%a: tensor<2x4x8xf32>, %b: tensor<8x8xf32>, %init: tensor<8x8xf32>, %big: tensor<10x8xf32>) -> tensor<10x8xf32> {
  %c = tensor.collapse_shape %a [[0, 1], [2]] : tensor<2x4x8xf32> into tensor<8x8xf32>
  %s = tensor.extract_slice %c[0, 0] [8, 8] [1, 1] : tensor<8x8xf32> to tensor<8x8xf32>
  %0 = linalg.matmul ins(%s, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%init : tensor<8x8xf32>) -> tensor<8x8xf32>
  %x = tensor.expand_shape %0 [[0, 1], [2]] output_shape [2, 4, 8] : tensor<8x8xf32> into tensor<2x4x8xf32>
  %y = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x4x8xf32> into tensor<8x8xf32>
  %pv = arith.constant 0.5 : f32
  %p = tensor.pad %y low[1, 0] high[1, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %pv : f32
  } : tensor<8x8xf32> to tensor<10x8xf32>
  %m = linalg.matmul ins(%p, %b : tensor<10x8xf32>, tensor<8x8xf32>) outs(%big : tensor<10x8xf32>) -> tensor<10x8xf32>
  %ins = tensor.insert_slice %0 into %m[1, 0] [8, 8] [1, 1] : tensor<8x8xf32> into tensor<10x8xf32>
  %r = linalg.matmul ins(%ins, %b : tensor<10x8xf32>, tensor<8x8xf32>) outs(%big : tensor<10x8xf32>) -> tensor<10x8xf32>
  return %r : tensor<10x8xf32>
}

// Left alone: data movement with no low-precision neighbour.
// CHECK-LABEL: func.func @tensor_ops_alone(
// CHECK-NOT: arith.truncf
// CHECK: tensor.collapse_shape %{{.*}} : tensor<2x4x8xf32> into tensor<8x8xf32>
// CHECK: tensor.pad
// CHECK: tensor.yield %{{.*}} : f32
// CHECK: } : tensor<8x8xf32> to tensor<10x8xf32>
func.func @tensor_ops_alone(%a: tensor<2x4x8xf32>) -> tensor<10x8xf32> {
  %c = tensor.collapse_shape %a [[0, 1], [2]] : tensor<2x4x8xf32> into tensor<8x8xf32>
  %pv = arith.constant 0.5 : f32
  %p = tensor.pad %c low[1, 0] high[1, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %pv : f32
  } : tensor<8x8xf32> to tensor<10x8xf32>
  return %p : tensor<10x8xf32>
}

// A linalg payload that reads a low-precision value it captures (torch-mlir's
// max_pool2d_with_indices: the argmax generic extracts from the padded input,
// which the rewrite turned f16): the captured use gets the value back in its
// original type, the payload is left as written.
// CHECK-LABEL: func.func @captured_by_payload(
// CHECK: %[[P:.*]] = tensor.pad %{{.*}} low[1, 0] high[1, 0]
// CHECK: } : tensor<8x8xf16> to tensor<10x8xf16>
// CHECK: %[[P32:.*]] = arith.extf %[[P]] : tensor<10x8xf16> to tensor<10x8xf32>
// CHECK: linalg.matmul ins(%[[P]], %{{.*}} : tensor<10x8xf16>, tensor<8x8xf16>)
// CHECK: linalg.generic
// CHECK: tensor.extract %[[P32]][%{{.*}}, %{{.*}}] : tensor<10x8xf32>
// CHECK: linalg.yield %{{.*}} : i64
func.func @captured_by_payload(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>, %big: tensor<10x8xf32>) -> (tensor<10x8xf32>, tensor<10x8xi64>) {
  %init = tensor.empty() : tensor<8x8xf32>
  %z = arith.constant 0.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%init : tensor<8x8xf32>) -> tensor<8x8xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%f : tensor<8x8xf32>) -> tensor<8x8xf32>
  %pv = arith.constant 0.0 : f32
  %p = tensor.pad %0 low[1, 0] high[1, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %pv : f32
  } : tensor<8x8xf32> to tensor<10x8xf32>
  %m = linalg.matmul ins(%p, %b : tensor<10x8xf32>, tensor<8x8xf32>) outs(%big : tensor<10x8xf32>) -> tensor<10x8xf32>
  %e = tensor.empty() : tensor<10x8xi64>
  %neg = arith.constant -1 : i64
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m : tensor<10x8xf32>) outs(%e : tensor<10x8xi64>) {
  ^bb0(%in: f32, %out: i64):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %x = tensor.extract %p[%i, %j] : tensor<10x8xf32>
    %eq = arith.cmpf oeq, %x, %in : f32
    %ii = arith.index_cast %i : index to i64
    %s = arith.select %eq, %ii, %neg : i64
    linalg.yield %s : i64
  } -> tensor<10x8xi64>
  return %m, %g : tensor<10x8xf32>, tensor<10x8xi64>
}

// torch-mlir's max_pool2d_with_indices (linalg import): the pool runs low
// between two convolutions, on the rounded convolution output; its argmax
// generic extracts from the f32 convolution output and compares the element
// with the pooled value. The generic is clear (the extract is data movement,
// cmpf clear) and runs low, and the element it computes with is rounded as the
// pool's input was: f16 / bf16 then back to f32, so it equals the pooled
// value where the maximum is. (Left f32, no element matched, every index
// stayed -1 and the backward lost the gradient: f16 4.6% off fp32 in 5 steps.)
// CHECK-LABEL: func.func @pool_argmax(
// CHECK: %[[C:.*]] = linalg.conv_2d_nchw_fchw {{.*}} -> tensor<1x1x4x4xf32>
// CHECK: %[[C16:.*]] = arith.truncf %[[C]] : tensor<1x1x4x4xf32> to tensor<1x1x4x4xf16>
// CHECK: %[[P:.*]] = linalg.pooling_nchw_max {{.*}} ins(%[[C16]], %{{.*}} : tensor<1x1x4x4xf16>, tensor<2x2xf16>) {{.*}} -> tensor<1x1x2x2xf16>
// CHECK: linalg.generic {{.*}} ins(%[[P]], %{{.*}} : tensor<1x1x2x2xf16>, tensor<2x2xi64>)
// CHECK: ^bb0(%[[IN:.*]]: f16, %{{.*}}: i64, %{{.*}}: i64):
// CHECK: %[[IN32:.*]] = arith.extf %[[IN]] : f16 to f32
// CHECK: %[[E:.*]] = tensor.extract %[[C]][{{.*}}] : tensor<1x1x4x4xf32>
// CHECK-NEXT: %[[E16:.*]] = arith.truncf %[[E]] : f32 to f16
// CHECK-NEXT: %[[E32:.*]] = arith.extf %[[E16]] : f16 to f32
// CHECK-NEXT: arith.cmpf oeq, %[[E32]], %[[IN32]] : f32
// CHECK: linalg.yield %{{.*}} : i64
// BF16-LABEL: func.func @pool_argmax(
// BF16: %[[E:.*]] = tensor.extract %{{.*}} : tensor<1x1x4x4xf32>
// BF16-NEXT: %[[E16:.*]] = arith.truncf %[[E]] : f32 to bf16
// BF16-NEXT: arith.extf %[[E16]] : bf16 to f32
#pool_in = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>
#pool_win = affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>
func.func @pool_argmax(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x1x1xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>) {
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %neg1 = arith.constant -1 : i64
  %e4 = tensor.empty() : tensor<1x1x4x4xf32>
  %f4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%x, %w : tensor<1x1x4x4xf32>, tensor<1x1x1x1xf32>) outs(%f4 : tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  %e2 = tensor.empty() : tensor<1x1x2x2xf32>
  %f2 = linalg.fill ins(%ninf : f32) outs(%e2 : tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %win = tensor.empty() : tensor<2x2xf32>
  %p = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
      ins(%c, %win : tensor<1x1x4x4xf32>, tensor<2x2xf32>) outs(%f2 : tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %ei = tensor.empty() : tensor<1x1x2x2xi64>
  %fi = linalg.fill ins(%neg1 : i64) outs(%ei : tensor<1x1x2x2xi64>) -> tensor<1x1x2x2xi64>
  %wi = tensor.empty() : tensor<2x2xi64>
  %idx = linalg.generic {indexing_maps = [#pool_in, #pool_win, #pool_in],
                         iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%p, %wi : tensor<1x1x2x2xf32>, tensor<2x2xi64>) outs(%fi : tensor<1x1x2x2xi64>) {
  ^bb0(%in: f32, %unused: i64, %out: i64):
    %n = linalg.index 0 : index
    %ch = linalg.index 1 : index
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %ki = linalg.index 4 : index
    %kj = linalg.index 5 : index
    %i2 = arith.muli %i, %c2 : index
    %h = arith.addi %i2, %ki : index
    %j2 = arith.muli %j, %c2 : index
    %v = arith.addi %j2, %kj : index
    %elem = tensor.extract %c[%n, %ch, %h, %v] : tensor<1x1x4x4xf32>
    %eq = arith.cmpf oeq, %elem, %in : f32
    %hw = arith.muli %h, %c4 : index
    %flat = arith.addi %v, %hw : index
    %flat64 = arith.index_cast %flat : index to i64
    %pick = arith.select %eq, %flat64, %out : i64
    %first = arith.cmpi eq, %out, %neg1 : i64
    %r = arith.select %first, %pick, %out : i64
    linalg.yield %r : i64
  } -> tensor<1x1x2x2xi64>
  %e22 = tensor.empty() : tensor<1x1x2x2xf32>
  %f22 = linalg.fill ins(%zero : f32) outs(%e22 : tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%p, %w : tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>) outs(%f22 : tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  return %y, %idx : tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>
}

// A payload that yields an element of a tensor from above as is is a gather
// (clear, like tosa.gather): torch-mlir's weight flip in the convolution
// backward. It takes its reader's precision and truncates the element it
// yields; its own input, which the payload never reads, is not cast.
// CHECK-LABEL: func.func @gather_payload(
// CHECK-SAME: %[[W:[^:]*]]: tensor<8x8xf32>
// CHECK: %[[FLIP:.*]] = linalg.generic
// CHECK-SAME: ins(%[[W]] : tensor<8x8xf32>) outs(%{{.*}} : tensor<8x8xf16>)
// CHECK: ^bb0(%{{.*}}: f32, %{{.*}}: f16):
// CHECK: %[[E:.*]] = tensor.extract %[[W]][%{{.*}}, %{{.*}}] : tensor<8x8xf32>
// CHECK: %[[T:.*]] = arith.truncf %[[E]] : f32 to f16
// CHECK: linalg.yield %[[T]] : f16
// CHECK: linalg.matmul ins(%{{.*}}, %[[FLIP]] : tensor<8x8xf16>, tensor<8x8xf16>)
// BF16-LABEL: func.func @gather_payload(
// BF16: arith.truncf %{{.*}} : f32 to bf16
func.func @gather_payload(%w: tensor<8x8xf32>, %a: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %c7 = arith.constant 7 : index
  %e = tensor.empty() : tensor<8x8xf32>
  %flip = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %r = arith.subi %c7, %j : index
    %x = tensor.extract %w[%i, %r] : tensor<8x8xf32>
    linalg.yield %x : f32
  } -> tensor<8x8xf32>
  %z = arith.constant 0.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %m = linalg.matmul ins(%a, %flip : tensor<8x8xf32>, tensor<8x8xf32>) outs(%f : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %m : tensor<8x8xf32>
}
