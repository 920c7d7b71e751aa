// amp-gpu-vectorize-elementwise: an outermost scf.parallel whose body is
// loads, arith and stores gives each iteration (each GPU thread, later) V
// contiguous elements of its innermost dimension: V = 16 bytes / the narrowest
// element it accesses, aligned vector accesses on the buffers the function
// allocates, lane by lane on small arguments, versioned on their bases'
// alignment on large ones, uniform values broadcast, arith
// and math ops in their vector forms.
// Everything else is left as it is.
// RUN: amp-opt %s --amp-gpu-vectorize-elementwise="reductions=true" --split-input-file | FileCheck %s
// Without `reductions` (the default) a loop that holds an scf.for is left alone.
// RUN: amp-opt %s --amp-gpu-vectorize-elementwise --split-input-file | FileCheck %s --check-prefix=DEFAULT
// DEFAULT-LABEL: func.func @column_sums(
// DEFAULT-NOT: vector.
// DEFAULT: return
// DEFAULT-LABEL: func.func @uniform_in_loop(
// DEFAULT-NOT: vector.
// DEFAULT: return

// f16 out of a GEMM plus an f32 bias argument (4 KiB: lane by lane), relu.
// CHECK-LABEL: func.func @bias_relu(
// CHECK: %[[C128:.*]] = arith.constant 128 : index
// CHECK: scf.parallel (%[[I:.*]], %[[J:.*]]) = (%{{.*}}, %{{.*}}) to (%{{.*}}, %[[C128]])
// CHECK: %[[C8:.*]] = arith.constant 8 : index
// CHECK: %[[K:.*]] = arith.muli %[[J]], %[[C8]] : index
// CHECK: %[[ZERO:.*]] = vector.broadcast %{{.*}} : f16 to vector<8xf16>
// CHECK: %[[X:.*]] = vector.load %[[IN:.*]][%[[I]], %[[K]]] {alignment = 16 : i64} : memref<64x1024xf16>, vector<8xf16>
// CHECK: memref.load %arg0[%[[K]]] : memref<1024xf32>
// CHECK-COUNT-7: memref.load %arg0[
// CHECK: %[[B:.*]] = vector.from_elements {{.*}} : vector<8xf32>
// CHECK: %[[BH:.*]] = arith.truncf %[[B]] : vector<8xf32> to vector<8xf16>
// CHECK: %[[S:.*]] = arith.addf %[[X]], %[[BH]] : vector<8xf16>
// CHECK: %[[R:.*]] = arith.maximumf %[[S]], %[[ZERO]] : vector<8xf16>
// CHECK: vector.store %[[R]], %{{.*}}[%[[I]], %[[K]]] {alignment = 16 : i64} : memref<64x1024xf16>, vector<8xf16>
func.func @bias_relu(%bias: memref<1024xf32>) -> memref<64x1024xf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c1024 = arith.constant 1024 : index
  %zero = arith.constant 0.0 : f16
  %in = memref.alloc() : memref<64x1024xf16>
  %out = memref.alloc() : memref<64x1024xf16>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c1024) step (%c1, %c1) {
    %x = memref.load %in[%i, %j] : memref<64x1024xf16>
    %b = memref.load %bias[%j] : memref<1024xf32>
    %bh = arith.truncf %b : f32 to f16
    %s = arith.addf %x, %bh : f16
    %r = arith.maximumf %s, %zero : f16
    memref.store %r, %out[%i, %j] : memref<64x1024xf16>
    scf.reduce
  }
  return %out : memref<64x1024xf16>
}

// -----

// f32 only: 4 lanes; a per-row value (not indexed by the innermost variable)
// stays a scalar load and is broadcast; views of an allocation are aligned.
// CHECK-LABEL: func.func @row_scale(
// CHECK: %[[C64:.*]] = arith.constant 64 : index
// CHECK: scf.parallel (%[[I:.*]], %[[J:.*]]) = (%{{.*}}, %{{.*}}) to (%{{.*}}, %[[C64]])
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK: %[[K:.*]] = arith.muli %[[J]], %[[C4]] : index
// CHECK: %[[X:.*]] = vector.load %{{.*}}[%[[I]], %[[K]]] {alignment = 16 : i64} : memref<32x256xf32>, vector<4xf32>
// CHECK: %[[S:.*]] = memref.load %{{.*}}[%[[I]]] : memref<32xf32>
// CHECK: %[[SV:.*]] = vector.broadcast %[[S]] : f32 to vector<4xf32>
// CHECK: arith.mulf %[[X]], %[[SV]] : vector<4xf32>
// CHECK: vector.store {{.*}} {alignment = 16 : i64} : memref<32x256xf32>, vector<4xf32>
func.func @row_scale() -> memref<32x256xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c256 = arith.constant 256 : index
  %flat = memref.alloc() : memref<8192xf32>
  %in = memref.expand_shape %flat [[0, 1]] output_shape [32, 256] : memref<8192xf32> into memref<32x256xf32>
  %scale = memref.alloc() : memref<32xf32>
  %out = memref.alloc() : memref<32x256xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c32, %c256) step (%c1, %c1) {
    %x = memref.load %in[%i, %j] : memref<32x256xf32>
    %s = memref.load %scale[%i] : memref<32xf32>
    %y = arith.mulf %x, %s : f32
    memref.store %y, %out[%i, %j] : memref<32x256xf32>
    scf.reduce
  }
  return %out : memref<32x256xf32>
}

// -----

// A thread that walks rows (a bias gradient's column sums, after
// amp-gpu-register-accumulators): its accumulator becomes a vector, 8 columns
// a thread; the init and the result go through vectors too.
// CHECK-LABEL: func.func @column_sums(
// CHECK: scf.parallel (%[[I:.*]], %[[J:.*]]) = (%{{.*}}, %{{.*}}) to (%{{.*}}, %c128)
// CHECK: %[[K:.*]] = arith.muli %[[J]], %{{.*}} : index
// CHECK: %[[INIT:.*]] = vector.load %{{.*}}[%[[I]], %[[K]]] {alignment = 16 : i64} : memref<32x1024xf32>, vector<8xf32>
// CHECK: %[[SUM:.*]] = scf.for %[[R:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (vector<8xf32>) {
// CHECK: %[[X:.*]] = vector.load %{{.*}}[%[[R]], %[[I]], %[[K]]] {alignment = 16 : i64} : memref<256x32x1024xf16>, vector<8xf16>
// CHECK: %[[XF:.*]] = arith.extf %[[X]] : vector<8xf16> to vector<8xf32>
// CHECK: %[[NEXT:.*]] = arith.addf %[[XF]], %[[ACC]] : vector<8xf32>
// CHECK: scf.yield %[[NEXT]] : vector<8xf32>
// CHECK: vector.store %[[SUM]], %{{.*}}[%[[I]], %[[K]]] {alignment = 16 : i64} : memref<32x1024xf32>, vector<8xf32>
func.func @column_sums() -> memref<32x1024xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c256 = arith.constant 256 : index
  %c1024 = arith.constant 1024 : index
  %grad = memref.alloc() : memref<8192x1024xf16>
  %rows = memref.expand_shape %grad [[0, 1], [2]] output_shape [256, 32, 1024] : memref<8192x1024xf16> into memref<256x32x1024xf16>
  %partial = memref.alloc() : memref<32x1024xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c32, %c1024) step (%c1, %c1) {
    %init = memref.load %partial[%i, %j] : memref<32x1024xf32>
    %sum = scf.for %r = %c0 to %c256 step %c1 iter_args(%acc = %init) -> (f32) {
      %x = memref.load %rows[%r, %i, %j] : memref<256x32x1024xf16>
      %xf = arith.extf %x : f16 to f32
      %next = arith.addf %xf, %acc : f32
      scf.yield %next : f32
    }
    memref.store %sum, %partial[%i, %j] : memref<32x1024xf32>
    scf.reduce
  }
  return %partial : memref<32x1024xf32>
}

// -----

// Inside the thread's loop: a uniform value computed there (a batch norm's
// per-channel mean, times a constant) is broadcast after its definition in the
// new loop, not at the top of the body; a loop without accumulators keeps its
// own yield.
// CHECK-LABEL: func.func @uniform_in_loop(
// CHECK: scf.for %[[R:.*]] = {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<2xf64>) {
// CHECK: %[[M:.*]] = memref.load %{{.*}}[%{{.*}}] : memref<512xf64>
// CHECK: %[[MS:.*]] = arith.mulf %[[M]], %{{.*}} : f64
// CHECK: %[[MV:.*]] = vector.broadcast %[[MS]] : f64 to vector<2xf64>
// CHECK: arith.subf %{{.*}}, %[[MV]] : vector<2xf64>
// CHECK: scf.for %{{.*}} = {{.*}} {
// CHECK-NEXT: vector.load {{.*}} : memref<4x512x2xf16>, vector<2xf16>
// CHECK-NEXT: vector.store {{.*}} : memref<4x512x2xf16>, vector<2xf16>
// CHECK-NEXT: }
func.func @uniform_in_loop() -> memref<512x2xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c512 = arith.constant 512 : index
  %quarter = arith.constant 0.25 : f64
  %x = memref.alloc() : memref<4x512x2xf16>
  %y = memref.alloc() : memref<4x512x2xf16>
  %mean = memref.alloc() : memref<512xf64>
  %var = memref.alloc() : memref<512x2xf64>
  scf.parallel (%c, %j) = (%c0, %c0) to (%c512, %c2) step (%c1, %c1) {
    %init = memref.load %var[%c, %j] : memref<512x2xf64>
    %sum = scf.for %r = %c0 to %c4 step %c1 iter_args(%acc = %init) -> (f64) {
      %v = memref.load %x[%r, %c, %j] : memref<4x512x2xf16>
      %m = memref.load %mean[%c] : memref<512xf64>
      %vf = arith.extf %v : f16 to f64
      %ms = arith.mulf %m, %quarter : f64
      %d = arith.subf %vf, %ms : f64
      %sq = arith.mulf %d, %d : f64
      %next = arith.addf %sq, %acc : f64
      scf.yield %next : f64
    }
    memref.store %sum, %var[%c, %j] : memref<512x2xf64>
    scf.for %r = %c0 to %c4 step %c1 {
      %v = memref.load %x[%r, %c, %j] : memref<4x512x2xf16>
      memref.store %v, %y[%r, %c, %j] : memref<4x512x2xf16>
    }
    scf.reduce
  }
  return %var : memref<512x2xf64>
}

// -----

// Math ops too (GELU's tanh form in f32 on f16 data), and arith.remf: their
// vector forms, which the NVVM lowering (amp-gpu-remf-to-libdevice for the
// remainder) calls libdevice for lane by lane.
// CHECK-LABEL: func.func @gelu(
// CHECK: %[[X:.*]] = vector.load {{.*}} : memref<64x1024xf16>, vector<8xf16>
// CHECK: %[[XF:.*]] = arith.extf %[[X]] : vector<8xf16> to vector<8xf32>
// CHECK: %[[T:.*]] = math.tanh %{{.*}} : vector<8xf32>
// CHECK: arith.remf %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK: vector.store {{.*}} : memref<64x1024xf16>, vector<8xf16>
func.func @gelu() -> memref<64x1024xf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c1024 = arith.constant 1024 : index
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %k = arith.constant 0.797884583 : f32
  %in = memref.alloc() : memref<64x1024xf16>
  %out = memref.alloc() : memref<64x1024xf16>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c1024) step (%c1, %c1) {
    %x = memref.load %in[%i, %j] : memref<64x1024xf16>
    %xf = arith.extf %x : f16 to f32
    %kx = arith.mulf %xf, %k : f32
    %t = math.tanh %kx : f32
    %t1 = arith.addf %t, %one : f32
    %hx = arith.mulf %xf, %half : f32
    %g0 = arith.mulf %hx, %t1 : f32
    %g = arith.remf %g0, %k : f32
    %gh = arith.truncf %g : f32 to f16
    memref.store %gh, %out[%i, %j] : memref<64x1024xf16>
    scf.reduce
  }
  return %out : memref<64x1024xf16>
}

// -----

// An extent of 6: the largest power of two up to 8 that divides it, 2 lanes,
// 4-byte alignment.
// CHECK-LABEL: func.func @six(
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c3)
// CHECK: vector.load {{.*}} {alignment = 4 : i64} : memref<6xf16>, vector<2xf16>
// CHECK: arith.negf {{.*}} : vector<2xf16>
// CHECK: vector.store {{.*}} {alignment = 4 : i64} : memref<6xf16>, vector<2xf16>
func.func @six() -> memref<6xf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %in = memref.alloc() : memref<6xf16>
  %out = memref.alloc() : memref<6xf16>
  scf.parallel (%j) = (%c0) to (%c6) step (%c1) {
    %x = memref.load %in[%j] : memref<6xf16>
    %y = arith.negf %x : f16
    memref.store %y, %out[%j] : memref<6xf16>
    scf.reduce
  }
  return %out : memref<6xf16>
}

// -----

// A large argument (2 MiB, f16; and 4 MiB of f32, read and written): lane
// by lane would not coalesce into 16-byte accesses, and its base is aligned
// only at run time, so the host checks the bases once (the OR of each base
// modulo 16 bytes) and each access of the argument is an scf.if of the vector
// access and the lane-by-lane one; the allocated output is a vector store.
// CHECK-LABEL: func.func @versioned(
// CHECK-SAME: %[[BIG:[^:]*]]: memref<1024x1024xf16>, %[[W:[^:]*]]: memref<1024x1024xf32>
// CHECK: %[[P0:.*]] = memref.extract_aligned_pointer_as_index %[[BIG]]
// CHECK: %[[R0:.*]] = arith.remui %[[P0]], %{{.*}} : index
// CHECK: %[[P1:.*]] = memref.extract_aligned_pointer_as_index %[[W]]
// CHECK: %[[R1:.*]] = arith.remui %[[P1]], %{{.*}} : index
// CHECK: %[[MIS:.*]] = arith.ori %[[R0]], %[[R1]] : index
// CHECK: scf.parallel
// CHECK: %[[OK:.*]] = arith.cmpi eq, %[[MIS]], %{{.*}} : index
// CHECK: %[[X:.*]] = scf.if %[[OK]] -> (vector<8xf16>) {
// CHECK-NEXT: vector.load %[[BIG]]{{.*}} {alignment = 16 : i64} : memref<1024x1024xf16>, vector<8xf16>
// CHECK: } else {
// CHECK-COUNT-8: memref.load %[[BIG]]
// CHECK: vector.from_elements
// CHECK: %[[Y:.*]] = scf.if %[[OK]] -> (vector<8xf32>) {
// CHECK-NEXT: vector.load %[[W]]
// CHECK: arith.addf %[[X]], %{{.*}} : vector<8xf16>
// CHECK: vector.store %{{.*}} {alignment = 16 : i64} : memref<1024x1024xf16>, vector<8xf16>
// CHECK: scf.if %[[OK]] {
// CHECK-NEXT: vector.store %[[Y]], %[[W]]
// CHECK: } else {
// CHECK-COUNT-8: memref.store %{{.*}}, %[[W]]
func.func @versioned(%big: memref<1024x1024xf16>, %w: memref<1024x1024xf32>) -> memref<1024x1024xf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c1024 = arith.constant 1024 : index
  %out = memref.alloc() : memref<1024x1024xf16>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c1024, %c1024) step (%c1, %c1) {
    %x = memref.load %big[%i, %j] : memref<1024x1024xf16>
    %y = memref.load %w[%i, %j] : memref<1024x1024xf32>
    %yh = arith.truncf %y : f32 to f16
    %s = arith.addf %x, %yh : f16
    memref.store %s, %out[%i, %j] : memref<1024x1024xf16>
    memref.store %y, %w[%i, %j] : memref<1024x1024xf32>
    scf.reduce
  }
  return %out : memref<1024x1024xf16>
}

// -----

// Left as they are: a large argument whose rows start at odd elements (a row
// stride of 1025: no base makes every row aligned), a transposed access, index
// arithmetic on the innermost variable, an odd extent, a reduction (every
// lane into one element), and a loop whose bounds vary with the innermost
// variable.
// CHECK-LABEL: func.func @left_alone(
// CHECK-NOT: vector.
// CHECK: return
func.func @left_alone(%big: memref<1024x1024xf16, strided<[1025, 1]>>, %n: memref<7xf16>) -> memref<1024x1024xf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %c64 = arith.constant 64 : index
  %c1024 = arith.constant 1024 : index
  %out = memref.alloc() : memref<1024x1024xf16>
  %t = memref.alloc() : memref<64x64xf16>
  %u = memref.alloc() : memref<64x64xf16>
  %acc = memref.alloc() : memref<64xf16>
  %odd = memref.alloc() : memref<7xf16>
  %ints = memref.alloc() : memref<64x64xi32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c1024, %c1024) step (%c1, %c1) {
    %x = memref.load %big[%i, %j] : memref<1024x1024xf16, strided<[1025, 1]>>
    memref.store %x, %out[%i, %j] : memref<1024x1024xf16>
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c64) step (%c1, %c1) {
    %x = memref.load %t[%j, %i] : memref<64x64xf16>
    memref.store %x, %u[%i, %j] : memref<64x64xf16>
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c64) step (%c1, %c1) {
    %k = arith.index_cast %j : index to i32
    memref.store %k, %ints[%i, %j] : memref<64x64xi32>
    scf.reduce
  }
  scf.parallel (%j) = (%c0) to (%c7) step (%c1) {
    %x = memref.load %n[%j] : memref<7xf16>
    memref.store %x, %odd[%j] : memref<7xf16>
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c64) step (%c1, %c1) {
    %x = memref.load %t[%i, %j] : memref<64x64xf16>
    memref.store %x, %acc[%i] : memref<64xf16>
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c64) step (%c1, %c1) {
    %x = memref.load %t[%i, %j] : memref<64x64xf16>
    %s = scf.for %r = %c0 to %j step %c1 iter_args(%a = %x) -> (f16) {
      %y = arith.addf %a, %a : f16
      scf.yield %y : f16
    }
    memref.store %s, %u[%i, %j] : memref<64x64xf16>
    scf.reduce
  }
  return %out : memref<1024x1024xf16>
}
