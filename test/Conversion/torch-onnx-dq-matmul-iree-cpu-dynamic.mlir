// RUN: dequant-opt %s --allow-unregistered-dialect --split-input-file --torch-onnx-to-dq --torch-onnx-dq-matmul-iree-cpu 2>%t.remarks | FileCheck %s
// RUN: FileCheck %s --check-prefix=REMARK < %t.remarks

// torch-onnx-dq-matmul-iree-cpu on dynamic int8 MatMuls (quantize_dynamic's
// DynamicQuantizeLinear + MatMulInteger + Cast + Mul by sx * sw, passes/dynamic_matmul.py): the
// DynamicQuantizeLinear becomes two dispatches of dq's own (passes/kernels/dynamic_quantize.py:
// the range of each workgroup's rows, then xq, and sx and zx as [1] tensors), the rest one
// dispatch of the QDQ kernel's dynamic form reading them; the node, the MatMulInteger, the Cast
// and both Muls go. Rows a run-time dim: 8 workgroups; 16 rows: 8; fewer rows: one each.

// VNNI, int8 weights w = 3 everywhere, sw = 0.25 per tensor, K = N = 64: the direct form (uint8
// xq as vpdpbusd's unsigned bytes, the weights' codes as they are). The constants, by hand:
// u = 3 in every byte; s = sw = 0.25 (0x3E800000: sx is applied in the kernel); c = sum_k w =
// 192 (0xC0: times -zx in the kernel).
// CHECK-LABEL: "stream.executable"() ({
// The second: the range of the 8 partial ranges, sx and zx (stored by workgroup 0), and the
// codes of the workgroup's rows: a true division, saturated (x finite: nnan, one vmaxps and one
// vminps), ties to even (by adding and subtracting 1.5 * 2^23).
// CHECK: func.func @[[Q:dq_dynamic_quantize_k64_w8]](
// CHECK: scf.for %{{.*}} = %c0 to %c8
// CHECK: memref.load %{{.*}} : memref<8x2xf32>
// CHECK: %[[SPAN:.*]] = arith.subf
// CHECK: %[[STEP:.*]] = arith.divf %[[SPAN]], %{{.*}} : f32
// CHECK: %[[SX:.*]] = arith.select %{{.*}}, %{{.*}}, %[[STEP]] : f32
// CHECK: math.roundeven %{{.*}} : f32
// CHECK: scf.if
// CHECK: memref.store %[[SX]]
// CHECK: %[[R:.*]] = arith.divf %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK-NEXT: %[[LO:.*]] = arith.maximumf %[[R]], %{{.*}} fastmath<nnan,nsz> : vector<16xf32>
// CHECK-NEXT: %[[HI:.*]] = arith.minimumf %[[LO]], %{{.*}} fastmath<nnan,nsz> : vector<16xf32>
// CHECK-NEXT: %[[UP:.*]] = arith.addf %[[HI]], %[[MAGIC:.*]] : vector<16xf32>
// CHECK-NEXT: arith.subf %[[UP]], %[[MAGIC]] : vector<16xf32>
// CHECK: arith.fptoui %{{.*}} : vector<16xf32> to vector<16xi8>
// The first dispatch (its executable printed second): the range of each workgroup's rows
// (ceil(m / 8) each), from 0 both ways, 64 values a step (x finite: nnan).
// CHECK: func.func @[[RANGE:dq_dynamic_range_k64_w8]](
// CHECK: %[[WG:.*]] = "stream.dispatch.workgroup.id"
// CHECK: %[[EACH:.*]] = arith.divui %{{.*}}, %c8 : index
// CHECK: %[[R0:.*]] = arith.minui %{{.*}}, %{{.*}} : index
// CHECK: %[[R1:.*]] = arith.minui %{{.*}}, %{{.*}} : index
// CHECK: scf.for %{{.*}} = %[[R0]] to %[[R1]]
// CHECK: %[[XW:.*]] = vector.load %{{.*}} : memref<?x64xf32>, vector<64xf32>
// CHECK: arith.maximumf %{{.*}}, %[[XW]] fastmath<nnan,nsz> : vector<64xf32>
// CHECK: arith.minimumf %{{.*}}, %[[XW]] fastmath<nnan,nsz> : vector<64xf32>
// CHECK: memref.store %{{.*}}, %{{.*}}[%[[WG]], %c0] : memref<8x2xf32>
// CHECK: memref.store %{{.*}}, %{{.*}}[%[[WG]], %c1] : memref<8x2xf32>
// CHECK: func.func @[[K:dq_matmul_qdq_u8_i8_k64_n64_dyn]](%[[XB:[^:]+]]: !stream.binding, %[[SXB:[^:]+]]: !stream.binding, %[[ZXB:[^:]+]]: !stream.binding, %{{[^:]+}}: !stream.binding, %[[SB:[^:]+]]: !stream.binding, %[[CB:[^:]+]]: !stream.binding, %{{[^:]+}}: !stream.binding, %{{[^:]+}}: index)
// CHECK-DAG: %[[SXM:.*]] = "stream.binding.subspan"(%[[SXB]], %{{[^)]+}}) : (!stream.binding, index) -> memref<1xf32>
// CHECK-DAG: %[[ZXM:.*]] = "stream.binding.subspan"(%[[ZXB]], %{{[^)]+}}) : (!stream.binding, index) -> memref<1xi8>
// CHECK-DAG: %[[SM:.*]] = "stream.binding.subspan"(%[[SB]], %{{[^)]+}}) : (!stream.binding, index) -> memref<1x1x64xf32>
// CHECK-DAG: %[[CM:.*]] = "stream.binding.subspan"(%[[CB]], %{{[^)]+}}) : (!stream.binding, index) -> memref<1x1x64xi32>
// CHECK: %[[SXS:.*]] = memref.load %[[SXM]]
// CHECK: %[[ZX:.*]] = memref.load %[[ZXM]]
// CHECK: %[[ZX32:.*]] = arith.extui %[[ZX]] : i8 to i32
// CHECK: %[[SXV:.*]] = vector.broadcast %[[SXS]] : f32 to vector<16xf32>
// CHECK: %[[MINUS:.*]] = arith.subi %{{.*}}, %[[ZX32]] : i32
// CHECK: %[[MZX:.*]] = vector.broadcast %[[MINUS]] : i32 to vector<16xi32>
// CHECK: %[[C:.*]] = vector.load %[[CM]]
// CHECK: arith.muli %[[MZX]], %[[C]] : vector<16xi32>
// CHECK: llvm.x86.avx512.vpdpbusd.512
// CHECK: %[[S:.*]] = vector.load %[[SM]]
// CHECK: arith.mulf %[[SXV]], %[[S]] : vector<16xf32>
// CHECK-LABEL: func.func @per_tensor
// CHECK-NOT: onnx.DynamicQuantizeLinear
// CHECK: %[[X:.*]] = "torch_c.to_builtin_tensor"(%{{.*}}) : (!torch.vtensor<[?,64],f32>) -> tensor<?x64xf32>
// CHECK: %[[PART:.*]] = "flow.dispatch"(%{{[^,]+}}, %[[X]], {{.*}}) {entry_points = [@[[RANGE]]::@[[RANGE]]]
// CHECK-SAME: (index, tensor<?x64xf32>, index, index) -> tensor<8x2xf32>
// CHECK: %[[P:.*]]:3 = "flow.dispatch"(%{{[^,]+}}, %[[X]], %[[PART]], {{.*}}) {entry_points = [@[[Q]]::@[[Q]]]
// CHECK-SAME: (index, tensor<?x64xf32>, tensor<8x2xf32>, index, index, index) -> (tensor<?x64xi8>, tensor<1xf32>, tensor<1xi8>)
// CHECK: "flow.dispatch"(%{{[^,]+}}, %[[P]]#0, %[[P]]#1, %[[P]]#2, {{.*}}) {entry_points = [@[[K]]::@[[K]]]
// CHECK-SAME: (index, tensor<?x64xi8>, tensor<1xf32>, tensor<1xi8>, tensor<1x16x256xi8>, tensor<1x1x64xf32>, tensor<1x1x64xi32>, index, index, index) -> tensor<?x64xf32>
// CHECK-NOT: onnx.MatMulInteger
// CHECK-NOT: onnx.Cast
// CHECK-NOT: onnx.Mul
// CHECK-DAG: "0x{{........}}{{(03)+}}"
// CHECK-DAG: "0x{{........}}{{(0000803E)+}}"
// CHECK-DAG: "0x{{........}}{{(C0000000)+}}"
module attributes {dq.avx512vnni} {
func.func @per_tensor(%x: !torch.vtensor<[?,64],f32>) -> !torch.vtensor<[?,64],f32> {
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<64x64xsi8>} : () -> !torch.vtensor<[64,64],si8>
  %zw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0> : tensor<si8>} : () -> !torch.vtensor<[],si8>
  %sw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %q:3 = "torch.operator"(%x) <{name = "onnx.DynamicQuantizeLinear"}> : (!torch.vtensor<[?,64],f32>) -> (!torch.vtensor<[?,64],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>)
  %s = "torch.operator"(%q#1, %sw) <{name = "onnx.Mul"}> : (!torch.vtensor<[],f32>, !torch.vtensor<[],f32>) -> !torch.vtensor<[],f32>
  %d = "torch.operator"(%q#0, %w, %q#2, %zw) <{name = "onnx.MatMulInteger"}> : (!torch.vtensor<[?,64],ui8>, !torch.vtensor<[64,64],si8>, !torch.vtensor<[],ui8>, !torch.vtensor<[],si8>) -> !torch.vtensor<[?,64],si32>
  %f = "torch.operator"(%d) <{name = "onnx.Cast"}> {torch.onnx.to = 1 : si64} : (!torch.vtensor<[?,64],si32>) -> !torch.vtensor<[?,64],f32>
  %y = "torch.operator"(%f, %s) <{name = "onnx.Mul"}> : (!torch.vtensor<[?,64],f32>, !torch.vtensor<[],f32>) -> !torch.vtensor<[?,64],f32>
  "func.return"(%y) : (!torch.vtensor<[?,64],f32>) -> ()
}
}

// -----

// AVX2 (vpmaddwd), uint8 weights with zero points and scales per column, the Muls' operands in
// the other order, batch dims [2, 8] collapsed to 16 rows; the bias Add stays (IREE fuses it).
// CHECK-LABEL: func.func @dq_matmul_qdq_avx2_u8_u8_k64_n32_z_dyn
// CHECK: llvm.x86.avx2.pmadd.wd
// CHECK-LABEL: func.func @per_column
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<2x8x64xf32> into tensor<16x64xf32>
// CHECK: "flow.dispatch"({{.*}}) {entry_points = [@dq_dynamic_range_k64_w8::@dq_dynamic_range_k64_w8]
// CHECK-SAME: -> tensor<8x2xf32>
// CHECK: "flow.dispatch"({{.*}}) {entry_points = [@dq_dynamic_quantize_k64_w8::@dq_dynamic_quantize_k64_w8]
// CHECK: "flow.dispatch"({{.*}}) {entry_points = [@dq_matmul_qdq_avx2_u8_u8_k64_n32_z_dyn::@dq_matmul_qdq_avx2_u8_u8_k64_n32_z_dyn]
// CHECK-SAME: (index, tensor<16x64xi8>, tensor<1xf32>, tensor<1xi8>, tensor<1x32x64xi8>, tensor<1x1x32xf32>, tensor<1x1x32xi8>, tensor<1x1x32xi32>, index) -> tensor<16x32xf32>
// CHECK: tensor.expand_shape
// CHECK: <{name = "onnx.Add"}>
module attributes {dq.avx2} {
func.func @per_column(%x: !torch.vtensor<[2,8,64],f32>) -> !torch.vtensor<[2,8,32],f32> {
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<200> : tensor<64x32xui8>} : () -> !torch.vtensor<[64,32],ui8>
  %zw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<128> : tensor<32xui8>} : () -> !torch.vtensor<[32],ui8>
  %sw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<32xf32>} : () -> !torch.vtensor<[32],f32>
  %b = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<1.0> : tensor<32xf32>} : () -> !torch.vtensor<[32],f32>
  %q:3 = "torch.operator"(%x) <{name = "onnx.DynamicQuantizeLinear"}> : (!torch.vtensor<[2,8,64],f32>) -> (!torch.vtensor<[2,8,64],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>)
  %s = "torch.operator"(%sw, %q#1) <{name = "onnx.Mul"}> : (!torch.vtensor<[32],f32>, !torch.vtensor<[],f32>) -> !torch.vtensor<[32],f32>
  %d = "torch.operator"(%q#0, %w, %q#2, %zw) <{name = "onnx.MatMulInteger"}> : (!torch.vtensor<[2,8,64],ui8>, !torch.vtensor<[64,32],ui8>, !torch.vtensor<[],ui8>, !torch.vtensor<[32],ui8>) -> !torch.vtensor<[2,8,32],si32>
  %f = "torch.operator"(%d) <{name = "onnx.Cast"}> {torch.onnx.to = 1 : si64} : (!torch.vtensor<[2,8,32],si32>) -> !torch.vtensor<[2,8,32],f32>
  %y = "torch.operator"(%s, %f) <{name = "onnx.Mul"}> : (!torch.vtensor<[32],f32>, !torch.vtensor<[2,8,32],f32>) -> !torch.vtensor<[2,8,32],f32>
  %z = "torch.operator"(%y, %b) <{name = "onnx.Add"}> : (!torch.vtensor<[2,8,32],f32>, !torch.vtensor<[32],f32>) -> !torch.vtensor<[2,8,32],f32>
  "func.return"(%z) : (!torch.vtensor<[2,8,32],f32>) -> ()
}
}

// -----

// K = 62, not a multiple of the VNNI kernel's step (4): IREE's own MatMulInteger and
// DynamicQuantizeLinear, with a remark.
// REMARK: remark: MatMulInteger left to IREE: K = 62 is not a multiple of 4
// CHECK-LABEL: func.func @k_off_step
// CHECK-NOT: flow.dispatch
// CHECK: <{name = "onnx.MatMulInteger"}>
module attributes {dq.avx512vnni} {
func.func @k_off_step(%x: !torch.vtensor<[?,62],f32>) -> !torch.vtensor<[?,64],f32> {
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<62x64xsi8>} : () -> !torch.vtensor<[62,64],si8>
  %sw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %q:3 = "torch.operator"(%x) <{name = "onnx.DynamicQuantizeLinear"}> : (!torch.vtensor<[?,62],f32>) -> (!torch.vtensor<[?,62],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>)
  %s = "torch.operator"(%q#1, %sw) <{name = "onnx.Mul"}> : (!torch.vtensor<[],f32>, !torch.vtensor<[],f32>) -> !torch.vtensor<[],f32>
  %d = "torch.operator"(%q#0, %w, %q#2) <{name = "onnx.MatMulInteger"}> : (!torch.vtensor<[?,62],ui8>, !torch.vtensor<[62,64],si8>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[?,64],si32>
  %f = "torch.operator"(%d) <{name = "onnx.Cast"}> {torch.onnx.to = 1 : si64} : (!torch.vtensor<[?,64],si32>) -> !torch.vtensor<[?,64],f32>
  %y = "torch.operator"(%f, %s) <{name = "onnx.Mul"}> : (!torch.vtensor<[?,64],f32>, !torch.vtensor<[],f32>) -> !torch.vtensor<[?,64],f32>
  "func.return"(%y) : (!torch.vtensor<[?,64],f32>) -> ()
}
}

// -----

// The int32 sums read by something besides the Cast: IREE's own MatMulInteger, with a remark.
// REMARK: remark: MatMulInteger left to IREE: its result is not read by one Cast to f32 alone
// CHECK-LABEL: func.func @sums_read_twice
// CHECK-NOT: flow.dispatch
// CHECK: <{name = "onnx.MatMulInteger"}>
module attributes {dq.avx512vnni} {
func.func @sums_read_twice(%x: !torch.vtensor<[?,64],f32>) -> (!torch.vtensor<[?,64],f32>, !torch.vtensor<[?,64],si32>) {
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<64x64xsi8>} : () -> !torch.vtensor<[64,64],si8>
  %sw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %q:3 = "torch.operator"(%x) <{name = "onnx.DynamicQuantizeLinear"}> : (!torch.vtensor<[?,64],f32>) -> (!torch.vtensor<[?,64],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>)
  %s = "torch.operator"(%q#1, %sw) <{name = "onnx.Mul"}> : (!torch.vtensor<[],f32>, !torch.vtensor<[],f32>) -> !torch.vtensor<[],f32>
  %d = "torch.operator"(%q#0, %w, %q#2) <{name = "onnx.MatMulInteger"}> : (!torch.vtensor<[?,64],ui8>, !torch.vtensor<[64,64],si8>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[?,64],si32>
  %f = "torch.operator"(%d) <{name = "onnx.Cast"}> {torch.onnx.to = 1 : si64} : (!torch.vtensor<[?,64],si32>) -> !torch.vtensor<[?,64],f32>
  %y = "torch.operator"(%f, %s) <{name = "onnx.Mul"}> : (!torch.vtensor<[?,64],f32>, !torch.vtensor<[],f32>) -> !torch.vtensor<[?,64],f32>
  "func.return"(%y, %d) : (!torch.vtensor<[?,64],f32>, !torch.vtensor<[?,64],si32>) -> ()
}
}

// -----

// A one-dimensional A (a vector, as numpy's matmul allows): IREE's own MatMulInteger, with a remark.
// REMARK: remark: MatMulInteger left to IREE: its A is not 8-bit rows [..., M, K] of B's K
// CHECK-LABEL: func.func @vector_a
// CHECK-NOT: flow.dispatch
// CHECK: <{name = "onnx.MatMulInteger"}>
module attributes {dq.avx512vnni} {
func.func @vector_a(%x: !torch.vtensor<[64],f32>) -> !torch.vtensor<[64],f32> {
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<64x64xsi8>} : () -> !torch.vtensor<[64,64],si8>
  %sw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %q:3 = "torch.operator"(%x) <{name = "onnx.DynamicQuantizeLinear"}> : (!torch.vtensor<[64],f32>) -> (!torch.vtensor<[64],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>)
  %s = "torch.operator"(%q#1, %sw) <{name = "onnx.Mul"}> : (!torch.vtensor<[],f32>, !torch.vtensor<[],f32>) -> !torch.vtensor<[],f32>
  %d = "torch.operator"(%q#0, %w, %q#2) <{name = "onnx.MatMulInteger"}> : (!torch.vtensor<[64],ui8>, !torch.vtensor<[64,64],si8>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[64],si32>
  %f = "torch.operator"(%d) <{name = "onnx.Cast"}> {torch.onnx.to = 1 : si64} : (!torch.vtensor<[64],si32>) -> !torch.vtensor<[64],f32>
  %y = "torch.operator"(%f, %s) <{name = "onnx.Mul"}> : (!torch.vtensor<[64],f32>, !torch.vtensor<[],f32>) -> !torch.vtensor<[64],f32>
  "func.return"(%y) : (!torch.vtensor<[64],f32>) -> ()
}
}

// -----

// xq read by something else too (a result of the function): the MatMul takes dq's dispatches, and
// the DynamicQuantizeLinear stays for its other reader.
// CHECK-LABEL: func.func @codes_read_twice
// CHECK: "flow.dispatch"({{.*}}) {entry_points = [@dq_dynamic_range_k64_w8::@dq_dynamic_range_k64_w8]
// CHECK: "flow.dispatch"({{.*}}) {entry_points = [@dq_dynamic_quantize_k64_w8::@dq_dynamic_quantize_k64_w8]
// CHECK: %[[Q:.*]]:3 = "torch.operator"(%{{.*}}) <{name = "onnx.DynamicQuantizeLinear"}>
// CHECK: "flow.dispatch"({{.*}}) {entry_points = [@dq_matmul_qdq_u8_i8_k64_n64_dyn::@dq_matmul_qdq_u8_i8_k64_n64_dyn]
// CHECK: return %{{.*}}, %[[Q]]#0
module attributes {dq.avx512vnni} {
func.func @codes_read_twice(%x: !torch.vtensor<[?,64],f32>) -> (!torch.vtensor<[?,64],f32>, !torch.vtensor<[?,64],ui8>) {
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<64x64xsi8>} : () -> !torch.vtensor<[64,64],si8>
  %sw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %q:3 = "torch.operator"(%x) <{name = "onnx.DynamicQuantizeLinear"}> : (!torch.vtensor<[?,64],f32>) -> (!torch.vtensor<[?,64],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>)
  %s = "torch.operator"(%q#1, %sw) <{name = "onnx.Mul"}> : (!torch.vtensor<[],f32>, !torch.vtensor<[],f32>) -> !torch.vtensor<[],f32>
  %d = "torch.operator"(%q#0, %w, %q#2) <{name = "onnx.MatMulInteger"}> : (!torch.vtensor<[?,64],ui8>, !torch.vtensor<[64,64],si8>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[?,64],si32>
  %f = "torch.operator"(%d) <{name = "onnx.Cast"}> {torch.onnx.to = 1 : si64} : (!torch.vtensor<[?,64],si32>) -> !torch.vtensor<[?,64],f32>
  %y = "torch.operator"(%f, %s) <{name = "onnx.Mul"}> : (!torch.vtensor<[?,64],f32>, !torch.vtensor<[],f32>) -> !torch.vtensor<[?,64],f32>
  "func.return"(%y, %q#0) : (!torch.vtensor<[?,64],f32>, !torch.vtensor<[?,64],ui8>) -> ()
}
}
