// Numeric check of amp.update_scale's inline lowering against tables computed
// by hand from the reference rules (../shared/REFERENCE.md section 1): each
// step feeds one found_inf flag and prints the new scale, growth tracker and
// overflow tracker.
// RUN: amp-opt %s --amp-cpu-pipeline | mlir-runner -e main -entry-point-result=void -shared-libs=%amp_runtime_dir/libamp_runtime_cpu.so,%mlir_c_runner_utils | FileCheck %s

func.func private @printF32(f32)
func.func private @printI64(i64)
func.func private @printNewline()
func.func private @printComma()

func.func @show(%s: tensor<f32>, %g: tensor<i32>, %o: tensor<i32>) {
  %sv = tensor.extract %s[] : tensor<f32>
  %gv = tensor.extract %g[] : tensor<i32>
  %ov = tensor.extract %o[] : tensor<i32>
  %g64 = arith.extsi %gv : i32 to i64
  %o64 = arith.extsi %ov : i32 to i64
  call @printF32(%sv) : (f32) -> ()
  call @printComma() : () -> ()
  call @printI64(%g64) : (i64) -> ()
  call @printComma() : () -> ()
  call @printI64(%o64) : (i64) -> ()
  call @printNewline() : () -> ()
  return
}

// growth interval 3: growth exactly on the 3rd clean step, halving on overflow
func.func @pytorch(%f: tensor<i1>, %s: tensor<f32>, %g: tensor<i32>, %o: tensor<i32>) -> (tensor<f32>, tensor<i32>, tensor<i32>) {
  %0:3 = amp.update_scale %s, %g, %o if %f {growth_factor = 2.0 : f32, backoff_factor = 0.5 : f32, growth_interval = 3 : i64}
  return %0#0, %0#1, %0#2 : tensor<f32>, tensor<i32>, tensor<i32>
}

// growth refused when the grown scale is inf; the tracker still resets
func.func @pytorch_inf(%f: tensor<i1>, %s: tensor<f32>, %g: tensor<i32>, %o: tensor<i32>) -> (tensor<f32>, tensor<i32>, tensor<i32>) {
  %0:3 = amp.update_scale %s, %g, %o if %f {growth_factor = 2.0 : f32, backoff_factor = 0.5 : f32, growth_interval = 1 : i64}
  return %0#0, %0#1, %0#2 : tensor<f32>, tensor<i32>, tensor<i32>
}

// Paddle: back off (x0.8, floor 1) after 2 consecutive overflows; grow every 2
func.func @paddle(%f: tensor<i1>, %s: tensor<f32>, %g: tensor<i32>, %o: tensor<i32>) -> (tensor<f32>, tensor<i32>, tensor<i32>) {
  %0:3 = amp.update_scale %s, %g, %o if %f {growth_factor = 2.0 : f32, backoff_factor = 0.8 : f32, growth_interval = 2 : i64, backoff_interval = 2 : i64, min_scale = 1.0 : f32}
  return %0#0, %0#1, %0#2 : tensor<f32>, tensor<i32>, tensor<i32>
}

// TF legacy: halve with a floor of 1
func.func @tf_legacy(%f: tensor<i1>, %s: tensor<f32>, %g: tensor<i32>, %o: tensor<i32>) -> (tensor<f32>, tensor<i32>, tensor<i32>) {
  %0:3 = amp.update_scale %s, %g, %o if %f {growth_factor = 2.0 : f32, backoff_factor = 0.5 : f32, growth_interval = 2000 : i64, min_scale = 1.0 : f32}
  return %0#0, %0#1, %0#2 : tensor<f32>, tensor<i32>, tensor<i32>
}

// ORT/Apex: grow every 2 with a ceiling of 2^24
func.func @ort(%f: tensor<i1>, %s: tensor<f32>, %g: tensor<i32>, %o: tensor<i32>) -> (tensor<f32>, tensor<i32>, tensor<i32>) {
  %0:3 = amp.update_scale %s, %g, %o if %f {growth_factor = 2.0 : f32, backoff_factor = 0.5 : f32, growth_interval = 2 : i64, max_scale = 16777216.0 : f32}
  return %0#0, %0#1, %0#2 : tensor<f32>, tensor<i32>, tensor<i32>
}

// MegEngine: growth_interval = 0 disables every update
func.func @megengine(%f: tensor<i1>, %s: tensor<f32>, %g: tensor<i32>, %o: tensor<i32>) -> (tensor<f32>, tensor<i32>, tensor<i32>) {
  %0:3 = amp.update_scale %s, %g, %o if %f {growth_factor = 2.0 : f32, backoff_factor = 0.5 : f32, growth_interval = 0 : i64}
  return %0#0, %0#1, %0#2 : tensor<f32>, tensor<i32>, tensor<i32>
}

func.func @main() {
  %t = arith.constant dense<true> : tensor<i1>
  %f = arith.constant dense<false> : tensor<i1>
  %z = arith.constant dense<0> : tensor<i32>
  %pytorch_s0 = arith.constant dense<65536.0> : tensor<f32>
  %mark_pytorch = arith.constant 900001 : i64
  call @printI64(%mark_pytorch) : (i64) -> ()
  call @printNewline() : () -> ()
  %r1:3 = call @pytorch(%f, %pytorch_s0, %z, %z) : (tensor<i1>, tensor<f32>, tensor<i32>, tensor<i32>) -> (tensor<f32>, tensor<i32>, tensor<i32>)
  call @show(%r1#0, %r1#1, %r1#2) : (tensor<f32>, tensor<i32>, tensor<i32>) -> ()
  %r2:3 = call @pytorch(%f, %r1#0, %r1#1, %r1#2) : (tensor<i1>, tensor<f32>, tensor<i32>, tensor<i32>) -> (tensor<f32>, tensor<i32>, tensor<i32>)
  call @show(%r2#0, %r2#1, %r2#2) : (tensor<f32>, tensor<i32>, tensor<i32>) -> ()
  %r3:3 = call @pytorch(%f, %r2#0, %r2#1, %r2#2) : (tensor<i1>, tensor<f32>, tensor<i32>, tensor<i32>) -> (tensor<f32>, tensor<i32>, tensor<i32>)
  call @show(%r3#0, %r3#1, %r3#2) : (tensor<f32>, tensor<i32>, tensor<i32>) -> ()
  %r4:3 = call @pytorch(%f, %r3#0, %r3#1, %r3#2) : (tensor<i1>, tensor<f32>, tensor<i32>, tensor<i32>) -> (tensor<f32>, tensor<i32>, tensor<i32>)
  call @show(%r4#0, %r4#1, %r4#2) : (tensor<f32>, tensor<i32>, tensor<i32>) -> ()
  %r5:3 = call @pytorch(%t, %r4#0, %r4#1, %r4#2) : (tensor<i1>, tensor<f32>, tensor<i32>, tensor<i32>) -> (tensor<f32>, tensor<i32>, tensor<i32>)
  call @show(%r5#0, %r5#1, %r5#2) : (tensor<f32>, tensor<i32>, tensor<i32>) -> ()
  %r6:3 = call @pytorch(%f, %r5#0, %r5#1, %r5#2) : (tensor<i1>, tensor<f32>, tensor<i32>, tensor<i32>) -> (tensor<f32>, tensor<i32>, tensor<i32>)
  call @show(%r6#0, %r6#1, %r6#2) : (tensor<f32>, tensor<i32>, tensor<i32>) -> ()
  %r7:3 = call @pytorch(%f, %r6#0, %r6#1, %r6#2) : (tensor<i1>, tensor<f32>, tensor<i32>, tensor<i32>) -> (tensor<f32>, tensor<i32>, tensor<i32>)
  call @show(%r7#0, %r7#1, %r7#2) : (tensor<f32>, tensor<i32>, tensor<i32>) -> ()
  %r8:3 = call @pytorch(%f, %r7#0, %r7#1, %r7#2) : (tensor<i1>, tensor<f32>, tensor<i32>, tensor<i32>) -> (tensor<f32>, tensor<i32>, tensor<i32>)
  call @show(%r8#0, %r8#1, %r8#2) : (tensor<f32>, tensor<i32>, tensor<i32>) -> ()
  %r9:3 = call @pytorch(%t, %r8#0, %r8#1, %r8#2) : (tensor<i1>, tensor<f32>, tensor<i32>, tensor<i32>) -> (tensor<f32>, tensor<i32>, tensor<i32>)
  call @show(%r9#0, %r9#1, %r9#2) : (tensor<f32>, tensor<i32>, tensor<i32>) -> ()
  %r10:3 = call @pytorch(%t, %r9#0, %r9#1, %r9#2) : (tensor<i1>, tensor<f32>, tensor<i32>, tensor<i32>) -> (tensor<f32>, tensor<i32>, tensor<i32>)
  call @show(%r10#0, %r10#1, %r10#2) : (tensor<f32>, tensor<i32>, tensor<i32>) -> ()
  %pytorch_inf_s0 = arith.constant dense<1.701411835e+38> : tensor<f32>
  %mark_pytorch_inf = arith.constant 900002 : i64
  call @printI64(%mark_pytorch_inf) : (i64) -> ()
  call @printNewline() : () -> ()
  %r11:3 = call @pytorch_inf(%f, %pytorch_inf_s0, %z, %z) : (tensor<i1>, tensor<f32>, tensor<i32>, tensor<i32>) -> (tensor<f32>, tensor<i32>, tensor<i32>)
  call @show(%r11#0, %r11#1, %r11#2) : (tensor<f32>, tensor<i32>, tensor<i32>) -> ()
  %r12:3 = call @pytorch_inf(%f, %r11#0, %r11#1, %r11#2) : (tensor<i1>, tensor<f32>, tensor<i32>, tensor<i32>) -> (tensor<f32>, tensor<i32>, tensor<i32>)
  call @show(%r12#0, %r12#1, %r12#2) : (tensor<f32>, tensor<i32>, tensor<i32>) -> ()
  %r13:3 = call @pytorch_inf(%t, %r12#0, %r12#1, %r12#2) : (tensor<i1>, tensor<f32>, tensor<i32>, tensor<i32>) -> (tensor<f32>, tensor<i32>, tensor<i32>)
  call @show(%r13#0, %r13#1, %r13#2) : (tensor<f32>, tensor<i32>, tensor<i32>) -> ()
  %r14:3 = call @pytorch_inf(%f, %r13#0, %r13#1, %r13#2) : (tensor<i1>, tensor<f32>, tensor<i32>, tensor<i32>) -> (tensor<f32>, tensor<i32>, tensor<i32>)
  call @show(%r14#0, %r14#1, %r14#2) : (tensor<f32>, tensor<i32>, tensor<i32>) -> ()
  %paddle_s0 = arith.constant dense<2.0> : tensor<f32>
  %mark_paddle = arith.constant 900003 : i64
  call @printI64(%mark_paddle) : (i64) -> ()
  call @printNewline() : () -> ()
  %r15:3 = call @paddle(%t, %paddle_s0, %z, %z) : (tensor<i1>, tensor<f32>, tensor<i32>, tensor<i32>) -> (tensor<f32>, tensor<i32>, tensor<i32>)
  call @show(%r15#0, %r15#1, %r15#2) : (tensor<f32>, tensor<i32>, tensor<i32>) -> ()
  %r16:3 = call @paddle(%f, %r15#0, %r15#1, %r15#2) : (tensor<i1>, tensor<f32>, tensor<i32>, tensor<i32>) -> (tensor<f32>, tensor<i32>, tensor<i32>)
  call @show(%r16#0, %r16#1, %r16#2) : (tensor<f32>, tensor<i32>, tensor<i32>) -> ()
  %r17:3 = call @paddle(%t, %r16#0, %r16#1, %r16#2) : (tensor<i1>, tensor<f32>, tensor<i32>, tensor<i32>) -> (tensor<f32>, tensor<i32>, tensor<i32>)
  call @show(%r17#0, %r17#1, %r17#2) : (tensor<f32>, tensor<i32>, tensor<i32>) -> ()
  %r18:3 = call @paddle(%t, %r17#0, %r17#1, %r17#2) : (tensor<i1>, tensor<f32>, tensor<i32>, tensor<i32>) -> (tensor<f32>, tensor<i32>, tensor<i32>)
  call @show(%r18#0, %r18#1, %r18#2) : (tensor<f32>, tensor<i32>, tensor<i32>) -> ()
  %r19:3 = call @paddle(%t, %r18#0, %r18#1, %r18#2) : (tensor<i1>, tensor<f32>, tensor<i32>, tensor<i32>) -> (tensor<f32>, tensor<i32>, tensor<i32>)
  call @show(%r19#0, %r19#1, %r19#2) : (tensor<f32>, tensor<i32>, tensor<i32>) -> ()
  %r20:3 = call @paddle(%t, %r19#0, %r19#1, %r19#2) : (tensor<i1>, tensor<f32>, tensor<i32>, tensor<i32>) -> (tensor<f32>, tensor<i32>, tensor<i32>)
  call @show(%r20#0, %r20#1, %r20#2) : (tensor<f32>, tensor<i32>, tensor<i32>) -> ()
  %r21:3 = call @paddle(%f, %r20#0, %r20#1, %r20#2) : (tensor<i1>, tensor<f32>, tensor<i32>, tensor<i32>) -> (tensor<f32>, tensor<i32>, tensor<i32>)
  call @show(%r21#0, %r21#1, %r21#2) : (tensor<f32>, tensor<i32>, tensor<i32>) -> ()
  %r22:3 = call @paddle(%f, %r21#0, %r21#1, %r21#2) : (tensor<i1>, tensor<f32>, tensor<i32>, tensor<i32>) -> (tensor<f32>, tensor<i32>, tensor<i32>)
  call @show(%r22#0, %r22#1, %r22#2) : (tensor<f32>, tensor<i32>, tensor<i32>) -> ()
  %tf_legacy_s0 = arith.constant dense<2.0> : tensor<f32>
  %mark_tf_legacy = arith.constant 900004 : i64
  call @printI64(%mark_tf_legacy) : (i64) -> ()
  call @printNewline() : () -> ()
  %r23:3 = call @tf_legacy(%t, %tf_legacy_s0, %z, %z) : (tensor<i1>, tensor<f32>, tensor<i32>, tensor<i32>) -> (tensor<f32>, tensor<i32>, tensor<i32>)
  call @show(%r23#0, %r23#1, %r23#2) : (tensor<f32>, tensor<i32>, tensor<i32>) -> ()
  %r24:3 = call @tf_legacy(%t, %r23#0, %r23#1, %r23#2) : (tensor<i1>, tensor<f32>, tensor<i32>, tensor<i32>) -> (tensor<f32>, tensor<i32>, tensor<i32>)
  call @show(%r24#0, %r24#1, %r24#2) : (tensor<f32>, tensor<i32>, tensor<i32>) -> ()
  %r25:3 = call @tf_legacy(%f, %r24#0, %r24#1, %r24#2) : (tensor<i1>, tensor<f32>, tensor<i32>, tensor<i32>) -> (tensor<f32>, tensor<i32>, tensor<i32>)
  call @show(%r25#0, %r25#1, %r25#2) : (tensor<f32>, tensor<i32>, tensor<i32>) -> ()
  %ort_s0 = arith.constant dense<8388608.0> : tensor<f32>
  %mark_ort = arith.constant 900005 : i64
  call @printI64(%mark_ort) : (i64) -> ()
  call @printNewline() : () -> ()
  %r26:3 = call @ort(%f, %ort_s0, %z, %z) : (tensor<i1>, tensor<f32>, tensor<i32>, tensor<i32>) -> (tensor<f32>, tensor<i32>, tensor<i32>)
  call @show(%r26#0, %r26#1, %r26#2) : (tensor<f32>, tensor<i32>, tensor<i32>) -> ()
  %r27:3 = call @ort(%f, %r26#0, %r26#1, %r26#2) : (tensor<i1>, tensor<f32>, tensor<i32>, tensor<i32>) -> (tensor<f32>, tensor<i32>, tensor<i32>)
  call @show(%r27#0, %r27#1, %r27#2) : (tensor<f32>, tensor<i32>, tensor<i32>) -> ()
  %r28:3 = call @ort(%f, %r27#0, %r27#1, %r27#2) : (tensor<i1>, tensor<f32>, tensor<i32>, tensor<i32>) -> (tensor<f32>, tensor<i32>, tensor<i32>)
  call @show(%r28#0, %r28#1, %r28#2) : (tensor<f32>, tensor<i32>, tensor<i32>) -> ()
  %r29:3 = call @ort(%f, %r28#0, %r28#1, %r28#2) : (tensor<i1>, tensor<f32>, tensor<i32>, tensor<i32>) -> (tensor<f32>, tensor<i32>, tensor<i32>)
  call @show(%r29#0, %r29#1, %r29#2) : (tensor<f32>, tensor<i32>, tensor<i32>) -> ()
  %megengine_s0 = arith.constant dense<65536.0> : tensor<f32>
  %mark_megengine = arith.constant 900006 : i64
  call @printI64(%mark_megengine) : (i64) -> ()
  call @printNewline() : () -> ()
  %r30:3 = call @megengine(%t, %megengine_s0, %z, %z) : (tensor<i1>, tensor<f32>, tensor<i32>, tensor<i32>) -> (tensor<f32>, tensor<i32>, tensor<i32>)
  call @show(%r30#0, %r30#1, %r30#2) : (tensor<f32>, tensor<i32>, tensor<i32>) -> ()
  %r31:3 = call @megengine(%f, %r30#0, %r30#1, %r30#2) : (tensor<i1>, tensor<f32>, tensor<i32>, tensor<i32>) -> (tensor<f32>, tensor<i32>, tensor<i32>)
  call @show(%r31#0, %r31#1, %r31#2) : (tensor<f32>, tensor<i32>, tensor<i32>) -> ()
  %r32:3 = call @megengine(%f, %r31#0, %r31#1, %r31#2) : (tensor<i1>, tensor<f32>, tensor<i32>, tensor<i32>) -> (tensor<f32>, tensor<i32>, tensor<i32>)
  call @show(%r32#0, %r32#1, %r32#2) : (tensor<f32>, tensor<i32>, tensor<i32>) -> ()
  return
}

// CHECK-LABEL: {{^}}900001{{$}}
// CHECK-NEXT: {{^}}65536, 1, 0{{$}}
// CHECK-NEXT: {{^}}65536, 2, 0{{$}}
// CHECK-NEXT: {{^}}131072, 0, 0{{$}}
// CHECK-NEXT: {{^}}131072, 1, 0{{$}}
// CHECK-NEXT: {{^}}65536, 0, 0{{$}}
// CHECK-NEXT: {{^}}65536, 1, 0{{$}}
// CHECK-NEXT: {{^}}65536, 2, 0{{$}}
// CHECK-NEXT: {{^}}131072, 0, 0{{$}}
// CHECK-NEXT: {{^}}65536, 0, 0{{$}}
// CHECK-NEXT: {{^}}32768, 0, 0{{$}}
// CHECK-LABEL: {{^}}900002{{$}}
// CHECK-NEXT: {{^}}1.70141e+38, 0, 0{{$}}
// CHECK-NEXT: {{^}}1.70141e+38, 0, 0{{$}}
// CHECK-NEXT: {{^}}8.50706e+37, 0, 0{{$}}
// CHECK-NEXT: {{^}}1.70141e+38, 0, 0{{$}}
// CHECK-LABEL: {{^}}900003{{$}}
// CHECK-NEXT: {{^}}2, 0, 1{{$}}
// CHECK-NEXT: {{^}}2, 1, 0{{$}}
// CHECK-NEXT: {{^}}2, 0, 1{{$}}
// CHECK-NEXT: {{^}}1.6, 0, 0{{$}}
// CHECK-NEXT: {{^}}1.6, 0, 1{{$}}
// CHECK-NEXT: {{^}}1.28, 0, 0{{$}}
// CHECK-NEXT: {{^}}1.28, 1, 0{{$}}
// CHECK-NEXT: {{^}}2.56, 0, 0{{$}}
// CHECK-LABEL: {{^}}900004{{$}}
// CHECK-NEXT: {{^}}1, 0, 0{{$}}
// CHECK-NEXT: {{^}}1, 0, 0{{$}}
// CHECK-NEXT: {{^}}1, 1, 0{{$}}
// CHECK-LABEL: {{^}}900005{{$}}
// CHECK-NEXT: {{^}}8.38861e+06, 1, 0{{$}}
// CHECK-NEXT: {{^}}1.67772e+07, 0, 0{{$}}
// CHECK-NEXT: {{^}}1.67772e+07, 1, 0{{$}}
// CHECK-NEXT: {{^}}1.67772e+07, 0, 0{{$}}
// CHECK-LABEL: {{^}}900006{{$}}
// CHECK-NEXT: {{^}}65536, 0, 0{{$}}
// CHECK-NEXT: {{^}}65536, 0, 0{{$}}
// CHECK-NEXT: {{^}}65536, 0, 0{{$}}
