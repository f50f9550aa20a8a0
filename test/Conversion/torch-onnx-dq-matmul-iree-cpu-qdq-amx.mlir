// RUN: dequant-opt %s --allow-unregistered-dialect --split-input-file --torch-onnx-to-dq --torch-onnx-dq-matmul-iree-cpu | FileCheck %s

// torch-onnx-dq-matmul-iree-cpu on QDQ MatMuls of a module tagged AMX (dq.amxint8) by hand:
// the direct form (uint8 x, int8 weights without a zero point) takes the AMX kernel
// (passes/kernels/qdq_amx.py), whole tiles of 32 rows by tdpbusd, the rows after them by the VNNI
// body; the other forms QdqKernel as on any VNNI module.

// K = 96 (steps of kc = 48 bytes), N = 40: three column groups, a pair then one alone (its 8 last
// lanes stored masked). AMX's state is asked of Linux first (arch_prctl = 158,
// ARCH_REQ_XCOMP_PERM = 0x1023 = 4131, XFEATURE_XTILEDATA = 18), and only where the rows make a
// whole tile; refused, every row takes the VNNI body. The tile config: palette 1; bytes per row
// (u16 from byte 16) 64 for the accumulators 0-3, kc = 48 for xq's tiles 4-5, 64 for the
// weights' 6-7; rows (from byte 48) 16, and kc / 4 = 12 for the weights'.
// CHECK-LABEL: "stream.executable"() ({
// CHECK: func.func @dq_matmul_qdq_amx_u8_i8_k96_n40(
// CHECK: %[[X:.*]] = "stream.binding.subspan"({{.*}}) : (!stream.binding, index, index) -> memref<?x96xi8>
// CHECK: %[[W:.*]] = "stream.binding.subspan"({{.*}}) : (!stream.binding, index) -> memref<1x24x256xi8>
// CHECK: %[[FULL:.*]] = arith.muli %{{.*}}, %c32 : index
// CHECK: %[[SOME:.*]] = arith.cmpi ugt, %[[FULL]], %c0 : index
// CHECK-NEXT: %[[ASKED:.*]] = scf.if %[[SOME]] -> (i64) {
// CHECK: %[[R:.*]] = llvm.inline_asm has_side_effects "syscall", "={rax},{rax},{rdi},{rsi},~{rcx},~{r11},~{memory}" %c158_i64, %c4131_i64, %c18_i64 : (i64, i64, i64) -> i64
// CHECK-NEXT: scf.yield %[[R]] : i64
// CHECK: %[[GRANTED:.*]] = arith.cmpi eq, %[[ASKED]], %c0_i64 : i64
// CHECK-NEXT: %[[AT:.*]] = scf.if %[[GRANTED]] -> (index) {
// CHECK: arith.constant dense<[1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 64, 0, 64, 0, 64, 0, 64, 0, 48, 0, 48, 0, 64, 0, 64, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 16, 16, 16, 16, 16, 16, 12, 12, 0, 0, 0, 0, 0, 0, 0, 0]> : vector<64xi8>
// CHECK: llvm.call_intrinsic "llvm.x86.ldtilecfg"
// CHECK: scf.for %{{.*}} = %c0 to %[[FULL]] step %c32 {
// CHECK-COUNT-4: llvm.call_intrinsic "llvm.x86.tilezero"
// CHECK: scf.for %{{.*}} = %c0 to %c96 step %c48 {
// CHECK: memref.extract_aligned_pointer_as_index %[[X]]
// CHECK: llvm.call_intrinsic "llvm.x86.tileloadd64"(%c4_i8{{[_0-9]*}}, %{{[^,]+}}, %c96_i64{{[_0-9]*}})
// CHECK: llvm.call_intrinsic "llvm.x86.tileloadd64"(%c5_i8{{[_0-9]*}}, %{{[^,]+}}, %c96_i64{{[_0-9]*}})
// CHECK: memref.extract_aligned_pointer_as_index %[[W]]
// CHECK: llvm.call_intrinsic "llvm.x86.tileloadd64"(%c6_i8{{[_0-9]*}}, %{{[^,]+}}, %c256_i64{{[_0-9]*}})
// CHECK: llvm.call_intrinsic "llvm.x86.tileloadd64"(%c7_i8{{[_0-9]*}}, %{{[^,]+}}, %c256_i64{{[_0-9]*}})
// CHECK: llvm.call_intrinsic "llvm.x86.tdpbusd"(%c0_i8{{[_0-9]*}}, %c4_i8{{[_0-9]*}}, %c6_i8{{[_0-9]*}})
// CHECK: llvm.call_intrinsic "llvm.x86.tdpbusd"(%c1_i8{{[_0-9]*}}, %c4_i8{{[_0-9]*}}, %c7_i8{{[_0-9]*}})
// CHECK: llvm.call_intrinsic "llvm.x86.tdpbusd"(%c2_i8{{[_0-9]*}}, %c5_i8{{[_0-9]*}}, %c6_i8{{[_0-9]*}})
// CHECK: llvm.call_intrinsic "llvm.x86.tdpbusd"(%c3_i8{{[_0-9]*}}, %c5_i8{{[_0-9]*}}, %c7_i8{{[_0-9]*}})
// CHECK-COUNT-4: llvm.call_intrinsic "llvm.x86.tilestored64"({{.*}}, %c128_i64{{[_0-9]*}})
// The pair's epilogue, 32 rows from the sums on the stack 4 at a time (qdq_amx.EPILOGUE_ROWS),
// plain stores:
// CHECK: scf.for %{{.*}} = %c0 to %c32 step %c4 {
// CHECK-COUNT-8: vector.load %{{.*}} : memref<32x32xi32>, vector<16xi32>
// CHECK-COUNT-8: vector.store %{{.*}} : memref<?x40xf32>, vector<16xf32>
// The third group alone: accumulators 0 and 2, its weights in tile 6, a masked store.
// CHECK: llvm.call_intrinsic "llvm.x86.tilezero"(%c0_i8{{[_0-9]*}})
// CHECK-NEXT: arith.constant 2 : i8
// CHECK-NEXT: llvm.call_intrinsic "llvm.x86.tilezero"(%c2_i8{{[_0-9]*}})
// CHECK-NOT: "llvm.x86.tileloadd64"(%c7_i8
// CHECK: llvm.call_intrinsic "llvm.x86.tdpbusd"(%c0_i8{{[_0-9]*}}, %c4_i8{{[_0-9]*}}, %c6_i8{{[_0-9]*}})
// CHECK-NOT: "llvm.x86.tileloadd64"
// CHECK: llvm.call_intrinsic "llvm.x86.tdpbusd"(%c2_i8{{[_0-9]*}}, %c5_i8{{[_0-9]*}}, %c6_i8{{[_0-9]*}})
// CHECK: vector.maskedstore %{{.*}} : memref<?x40xf32>, vector<16xi1>, vector<16xf32>
// CHECK: llvm.call_intrinsic "llvm.x86.tilerelease"() : () -> ()
// CHECK-NEXT: scf.yield %[[FULL]] : index
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.yield %c0 : index
// The rows from there: the VNNI body's tiles of 4 rows, then its tails.
// CHECK: scf.for %{{.*}} = %[[AT]] to %{{.*}} step %c4 {
// CHECK: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK-LABEL: func.func @amx
// CHECK: "flow.dispatch"({{.*}}) {entry_points = [@dq_matmul_qdq_amx_u8_i8_k96_n40::@dq_matmul_qdq_amx_u8_i8_k96_n40]
module attributes {dq.avx512bw, dq.avx512vnni, dq.amxint8} {
func.func @amx(%a: !torch.vtensor<[?,96],f32>) -> !torch.vtensor<[?,40],f32> {
  %sx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<130> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<96x40xsi8>} : () -> !torch.vtensor<[96,40],si8>
  %sw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<40xf32>} : () -> !torch.vtensor<[40],f32>
  %xq = "torch.operator"(%a, %sx, %zx) <{name = "onnx.QuantizeLinear"}> : (!torch.vtensor<[?,96],f32>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[?,96],ui8>
  %xf = "torch.operator"(%xq, %sx, %zx) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[?,96],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[?,96],f32>
  %wf = "torch.operator"(%w, %sw) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 1 : si64} : (!torch.vtensor<[96,40],si8>, !torch.vtensor<[40],f32>) -> !torch.vtensor<[96,40],f32>
  %y = "torch.operator"(%xf, %wf) <{name = "onnx.MatMul"}> : (!torch.vtensor<[?,96],f32>, !torch.vtensor<[96,40],f32>) -> !torch.vtensor<[?,40],f32>
  "func.return"(%y) : (!torch.vtensor<[?,40],f32>) -> ()
}
}

// -----

// A weight zero point: not the direct form, QdqKernel's flipped route.
// CHECK-LABEL: func.func @dq_matmul_qdq_u8_i8_k96_n40_z(
// CHECK-NOT: llvm.x86.t
// CHECK-LABEL: func.func @with_zero_point
module attributes {dq.avx512bw, dq.avx512vnni, dq.amxint8} {
func.func @with_zero_point(%a: !torch.vtensor<[?,96],f32>) -> !torch.vtensor<[?,40],f32> {
  %sx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<130> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<96x40xsi8>} : () -> !torch.vtensor<[96,40],si8>
  %zw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<1> : tensor<40xsi8>} : () -> !torch.vtensor<[40],si8>
  %sw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<40xf32>} : () -> !torch.vtensor<[40],f32>
  %xq = "torch.operator"(%a, %sx, %zx) <{name = "onnx.QuantizeLinear"}> : (!torch.vtensor<[?,96],f32>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[?,96],ui8>
  %xf = "torch.operator"(%xq, %sx, %zx) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[?,96],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[?,96],f32>
  %wf = "torch.operator"(%w, %sw, %zw) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 1 : si64} : (!torch.vtensor<[96,40],si8>, !torch.vtensor<[40],f32>, !torch.vtensor<[40],si8>) -> !torch.vtensor<[96,40],f32>
  %y = "torch.operator"(%xf, %wf) <{name = "onnx.MatMul"}> : (!torch.vtensor<[?,96],f32>, !torch.vtensor<[96,40],f32>) -> !torch.vtensor<[?,40],f32>
  "func.return"(%y) : (!torch.vtensor<[?,40],f32>) -> ()
}
}

// -----

// K = 68 = 4 x 17: no multiple of 4 from 16 to 64 divides it (steps of 4 bytes), QdqKernel's.
// CHECK-LABEL: func.func @dq_matmul_qdq_u8_i8_k68_n64(
// CHECK-NOT: llvm.x86.t
// CHECK-LABEL: func.func @short_steps
module attributes {dq.avx512bw, dq.avx512vnni, dq.amxint8} {
func.func @short_steps(%a: !torch.vtensor<[?,68],f32>) -> !torch.vtensor<[?,64],f32> {
  %sx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<130> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<68x64xsi8>} : () -> !torch.vtensor<[68,64],si8>
  %sw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<64xf32>} : () -> !torch.vtensor<[64],f32>
  %xq = "torch.operator"(%a, %sx, %zx) <{name = "onnx.QuantizeLinear"}> : (!torch.vtensor<[?,68],f32>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[?,68],ui8>
  %xf = "torch.operator"(%xq, %sx, %zx) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[?,68],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[?,68],f32>
  %wf = "torch.operator"(%w, %sw) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 1 : si64} : (!torch.vtensor<[68,64],si8>, !torch.vtensor<[64],f32>) -> !torch.vtensor<[68,64],f32>
  %y = "torch.operator"(%xf, %wf) <{name = "onnx.MatMul"}> : (!torch.vtensor<[?,68],f32>, !torch.vtensor<[68,64],f32>) -> !torch.vtensor<[?,64],f32>
  "func.return"(%y) : (!torch.vtensor<[?,64],f32>) -> ()
}
}
