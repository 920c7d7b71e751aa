// Two rows of 4 bf16 interleaved into one of 8 (the shuffles of a
// vectorised transpose); amp-cpu-bf16-bits-as-integers.mlir compiles it for
// x86.
llvm.func @interleave_rows(%p: !llvm.ptr, %q: !llvm.ptr, %r: !llvm.ptr) {
  %a = llvm.load %p {alignment = 2 : i64} : !llvm.ptr -> vector<4xbf16>
  %b = llvm.load %q {alignment = 2 : i64} : !llvm.ptr -> vector<4xbf16>
  %c = llvm.shufflevector %a, %b [0, 4, 1, 5, 2, 6, 3, 7] : vector<4xbf16>
  llvm.store %c, %r {alignment = 2 : i64} : vector<8xbf16>, !llvm.ptr
  llvm.return
}
