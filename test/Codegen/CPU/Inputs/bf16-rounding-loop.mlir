// f32 -> bf16 rounding of a buffer, 8 lanes at a time (what amp-cpu-vectorize
// makes of a bf16 step's casts); amp-cpu-bf16-bits-as-integers.mlir compiles
// it for x86.
func.func @round_to_bf16(%a: memref<1024xf32>, %b: memref<1024xbf16>) {
  %c0 = arith.constant 0 : index
  %c1024 = arith.constant 1024 : index
  %c8 = arith.constant 8 : index
  %p = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c1024 step %c8 {
    %x = vector.transfer_read %a[%i], %p {in_bounds = [true]} : memref<1024xf32>, vector<8xf32>
    %r = arith.truncf %x : vector<8xf32> to vector<8xbf16>
    vector.transfer_write %r, %b[%i] {in_bounds = [true]} : vector<8xbf16>, memref<1024xbf16>
  }
  return
}
