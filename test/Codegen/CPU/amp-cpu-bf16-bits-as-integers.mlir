// amp-cpu-bf16-bits-as-integers: in the LLVM dialect, a bf16 value that is
// only moved is moved as i16. A store of a bf16 value bitcast from i16
// stores the i16; a select, shuffle, insertelement or extractelement of bf16
// values moves i16; a load whose readers all bitcast it to i16 or store it
// loads i16. A bf16 load read as bf16 (an fpext) and f16 values stay as they
// are.
// RUN: amp-opt %s --split-input-file --pass-pipeline='builtin.module(llvm.func(amp-cpu-bf16-bits-as-integers))' | FileCheck %s
//
// Upstream's f32 -> bf16 rounding in a loop, compiled for an AVX2 CPU
// without AVX512_BF16: without the pass LLVM selects the NaN case on
// bfloat vectors, one element at a time (ucomiss + cmov + a 16-bit store per
// element); with it, vector compares, blends and packs.
// RUN: amp-opt %S/Inputs/bf16-rounding-loop.mlir --pass-pipeline='builtin.module(arith-expand{include-bf16=true},convert-vector-to-llvm,convert-scf-to-cf,convert-to-llvm,reconcile-unrealized-casts,llvm.func(amp-cpu-bf16-bits-as-integers))' \
// RUN:   | mlir-translate --mlir-to-llvmir | opt -O3 -mtriple=x86_64-unknown-linux-gnu -mattr=+avx2,+fma,+f16c -S \
// RUN:   | llc -O3 -mtriple=x86_64-unknown-linux-gnu -mattr=+avx2,+fma,+f16c | FileCheck %s --check-prefix=ASM
// RUN: amp-opt %S/Inputs/bf16-rounding-loop.mlir --pass-pipeline='builtin.module(arith-expand{include-bf16=true},convert-vector-to-llvm,convert-scf-to-cf,convert-to-llvm,reconcile-unrealized-casts)' \
// RUN:   | mlir-translate --mlir-to-llvmir | opt -O3 -mtriple=x86_64-unknown-linux-gnu -mattr=+avx2,+fma,+f16c -S \
// RUN:   | llc -O3 -mtriple=x86_64-unknown-linux-gnu -mattr=+avx2,+fma,+f16c | FileCheck %s --check-prefix=SCALAR
//
// Two bf16 rows interleaved (a transpose's shuffle): without the pass LLVM
// moves each element with a 16-bit load and store; with it, one unpack.
// RUN: amp-opt %S/Inputs/bf16-interleave.mlir --pass-pipeline='builtin.module(llvm.func(amp-cpu-bf16-bits-as-integers))' \
// RUN:   | mlir-translate --mlir-to-llvmir | opt -O3 -mtriple=x86_64-unknown-linux-gnu -mattr=+avx2,+fma,+f16c -S \
// RUN:   | llc -O3 -mtriple=x86_64-unknown-linux-gnu -mattr=+avx2,+fma,+f16c | FileCheck %s --check-prefix=SHUFFLE
// RUN: mlir-translate --mlir-to-llvmir %S/Inputs/bf16-interleave.mlir | opt -O3 -mtriple=x86_64-unknown-linux-gnu -mattr=+avx2,+fma,+f16c -S \
// RUN:   | llc -O3 -mtriple=x86_64-unknown-linux-gnu -mattr=+avx2,+fma,+f16c | FileCheck %s --check-prefix=PER-ELEMENT
// PER-ELEMENT-LABEL: interleave_rows:
// PER-ELEMENT-COUNT-8: movzwl
// SHUFFLE-LABEL: interleave_rows:
// SHUFFLE-NOT: movzwl
// SHUFFLE: vpunpcklwd
// SHUFFLE-NOT: movw
// SHUFFLE: ret
// SCALAR-LABEL: round_to_bf16:
// SCALAR-COUNT-8: cmovp
// ASM-LABEL: round_to_bf16:
// ASM-NOT: ucomiss
// ASM-NOT: cmov
// ASM: vcmpunordps
// ASM: vpackusdw
// ASM: ret

// CHECK-LABEL: llvm.func @store_bits(
// CHECK-SAME: %[[X:.*]]: vector<8xi16>, %[[P:.*]]: !llvm.ptr)
// CHECK-NEXT: llvm.store %[[X]], %[[P]] {alignment = 2 : i64} : vector<8xi16>, !llvm.ptr
// CHECK-NEXT: llvm.return
llvm.func @store_bits(%x: vector<8xi16>, %p: !llvm.ptr) {
  %b = llvm.bitcast %x : vector<8xi16> to vector<8xbf16>
  llvm.store %b, %p {alignment = 2 : i64} : vector<8xbf16>, !llvm.ptr
  llvm.return
}

// -----

// The rounding's NaN select (upstream's expansion, after InstCombine's view
// of it): the select and the store move i16.
// CHECK-LABEL: llvm.func @select_bits(
// CHECK-SAME: %[[C:.*]]: vector<8xi1>, %[[X:.*]]: vector<8xi16>, %[[P:.*]]: !llvm.ptr)
// CHECK-DAG: %[[NAN:.*]] = llvm.mlir.constant(dense<32704> : vector<8xi16>)
// CHECK: %[[S:.*]] = llvm.select %[[C]], %[[NAN]], %[[X]] : vector<8xi1>, vector<8xi16>
// CHECK-NEXT: llvm.store %[[S]], %[[P]] {alignment = 2 : i64} : vector<8xi16>, !llvm.ptr
// CHECK-NOT: bf16
llvm.func @select_bits(%c: vector<8xi1>, %x: vector<8xi16>, %p: !llvm.ptr) {
  %nan = llvm.mlir.constant(dense<32704> : vector<8xi16>) : vector<8xi16>
  %a = llvm.bitcast %nan : vector<8xi16> to vector<8xbf16>
  %b = llvm.bitcast %x : vector<8xi16> to vector<8xbf16>
  %s = llvm.select %c, %a, %b : vector<8xi1>, vector<8xbf16>
  llvm.store %s, %p {alignment = 2 : i64} : vector<8xbf16>, !llvm.ptr
  llvm.return
}

// -----

// A select of bf16 constants and loads (a ReLU mask on a bf16 tensor):
// the loads read i16, the select picks i16, the store writes it.
// CHECK-LABEL: llvm.func @select_loaded(
// CHECK: %[[A:.*]] = llvm.load %{{.*}} {alignment = 2 : i64} : !llvm.ptr -> vector<8xi16>
// CHECK: %[[S:.*]] = llvm.select %{{.*}}, %{{.*}}, %[[A]] : vector<8xi1>, vector<8xi16>
// CHECK: llvm.store %[[S]], %{{.*}} : vector<8xi16>, !llvm.ptr
// CHECK-NOT: bf16
llvm.func @select_loaded(%c: vector<8xi1>, %p: !llvm.ptr, %q: !llvm.ptr) {
  %zero = llvm.mlir.constant(dense<0.000000e+00> : vector<8xbf16>) : vector<8xbf16>
  %a = llvm.load %p {alignment = 2 : i64} : !llvm.ptr -> vector<8xbf16>
  %s = llvm.select %c, %zero, %a : vector<8xi1>, vector<8xbf16>
  llvm.store %s, %q {alignment = 2 : i64} : vector<8xbf16>, !llvm.ptr
  llvm.return
}

// -----

// Loads that something reads as bf16 (here an fpext) stay bf16; a load the
// widening reads through a bitcast to i16 loads i16; f16 is left alone.
// CHECK-LABEL: llvm.func @loads(
// CHECK: llvm.load %{{.*}} : !llvm.ptr -> vector<8xbf16>
// CHECK: llvm.fpext %{{.*}} : vector<8xbf16> to vector<8xf32>
// CHECK: %[[I:.*]] = llvm.load %{{.*}} : !llvm.ptr -> vector<8xi16>
// CHECK-NEXT: llvm.zext %[[I]] : vector<8xi16> to vector<8xi32>
// CHECK: llvm.load %{{.*}} : !llvm.ptr -> vector<8xf16>
// CHECK: llvm.bitcast %{{.*}} : vector<8xf16> to vector<8xi16>
llvm.func @loads(%p: !llvm.ptr, %q: !llvm.ptr, %r: !llvm.ptr) -> !llvm.struct<(vector<8xf32>, vector<8xi32>, vector<8xi16>)> {
  %a = llvm.load %p : !llvm.ptr -> vector<8xbf16>
  %x = llvm.fpext %a : vector<8xbf16> to vector<8xf32>
  %b = llvm.load %q : !llvm.ptr -> vector<8xbf16>
  %bi = llvm.bitcast %b : vector<8xbf16> to vector<8xi16>
  %w = llvm.zext %bi : vector<8xi16> to vector<8xi32>
  %h = llvm.load %r : !llvm.ptr -> vector<8xf16>
  %hi = llvm.bitcast %h : vector<8xf16> to vector<8xi16>
  %u = llvm.mlir.undef : !llvm.struct<(vector<8xf32>, vector<8xi32>, vector<8xi16>)>
  %u0 = llvm.insertvalue %x, %u[0] : !llvm.struct<(vector<8xf32>, vector<8xi32>, vector<8xi16>)>
  %u1 = llvm.insertvalue %w, %u0[1] : !llvm.struct<(vector<8xf32>, vector<8xi32>, vector<8xi16>)>
  %u2 = llvm.insertvalue %hi, %u1[2] : !llvm.struct<(vector<8xf32>, vector<8xi32>, vector<8xi16>)>
  llvm.return %u2 : !llvm.struct<(vector<8xf32>, vector<8xi32>, vector<8xi16>)>
}

// -----

// A shuffle of bf16 vectors shuffles i16; the loads it read load i16 and the
// store writes i16.
// CHECK-LABEL: llvm.func @shuffle_bits(
// CHECK: %[[A:.*]] = llvm.load %{{.*}} : !llvm.ptr -> vector<4xi16>
// CHECK: %[[B:.*]] = llvm.load %{{.*}} : !llvm.ptr -> vector<4xi16>
// CHECK: %[[S:.*]] = llvm.shufflevector %[[A]], %[[B]] [0, 4, 1, 5, 2, 6, 3, 7] : vector<4xi16>
// CHECK-NEXT: llvm.store %[[S]], %{{.*}} : vector<8xi16>, !llvm.ptr
// CHECK-NOT: bf16
llvm.func @shuffle_bits(%p: !llvm.ptr, %q: !llvm.ptr, %r: !llvm.ptr) {
  %a = llvm.load %p : !llvm.ptr -> vector<4xbf16>
  %b = llvm.load %q : !llvm.ptr -> vector<4xbf16>
  %c = llvm.shufflevector %a, %b [0, 4, 1, 5, 2, 6, 3, 7] : vector<4xbf16>
  llvm.store %c, %r : vector<8xbf16>, !llvm.ptr
  llvm.return
}

// -----

// An element extracted from one bf16 vector and inserted into another (a
// gather), and a scalar bf16 copied (a load stored as it is): i16 throughout.
// CHECK-LABEL: llvm.func @element_bits(
// CHECK: %[[V:.*]] = llvm.load %{{.*}} : !llvm.ptr -> vector<8xi16>
// CHECK: %[[E:.*]] = llvm.extractelement %[[V]][%{{.*}} : i64] : vector<8xi16>
// CHECK: %[[I:.*]] = llvm.insertelement %[[E]], %{{.*}}[%{{.*}} : i64] : vector<8xi16>
// CHECK: llvm.store %[[I]], %{{.*}} : vector<8xi16>, !llvm.ptr
// CHECK: %[[X:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i16
// CHECK-NEXT: llvm.store %[[X]], %{{.*}} : i16, !llvm.ptr
// CHECK-NOT: bf16
llvm.func @element_bits(%p: !llvm.ptr, %q: !llvm.ptr, %i: i64, %j: i64) {
  %v = llvm.load %p : !llvm.ptr -> vector<8xbf16>
  %w = llvm.load %q : !llvm.ptr -> vector<8xbf16>
  %e = llvm.extractelement %v[%i : i64] : vector<8xbf16>
  %u = llvm.insertelement %e, %w[%j : i64] : vector<8xbf16>
  llvm.store %u, %q : vector<8xbf16>, !llvm.ptr
  %x = llvm.load %p : !llvm.ptr -> bf16
  llvm.store %x, %q : bf16, !llvm.ptr
  llvm.return
}
