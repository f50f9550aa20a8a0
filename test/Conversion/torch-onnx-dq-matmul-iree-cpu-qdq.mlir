// RUN: dequant-opt %s --allow-unregistered-dialect --split-input-file --torch-onnx-to-dq --torch-onnx-dq-matmul-iree-cpu 2>%t.remarks | FileCheck %s
// RUN: FileCheck %s --check-prefix=REMARK < %t.remarks

// torch-onnx-dq-matmul-iree-cpu on QDQ MatMuls (A and B dequantized), on modules tagged AVX-512
// VNNI by hand: one dispatch of the exact integer kernel reading the quantized activation's bytes
// (passes/kernels/qdq.py, QdqKernel), no dequantize of the activation left.

// uint8 x, sx = 0.5, zx = 130; int8 weights w = 3 everywhere, K = N = 64, sw = 0.25 per column:
// the direct form (xq as vpdpbusd's unsigned bytes, the weights' codes as they are: no row sums,
// no flips). The kernel's constants, by hand: u = 3 in every byte; s = sx * sw = 0.125
// (0x3E000000); c[n] = -zx * sum_k w = -130 * 192 = -24960 (0xFFFF9E80).
// CHECK-LABEL: "stream.executable"() ({
// CHECK: func.func @[[K:dq_matmul_qdq_u8_i8_k64_n64]](%[[XB:[^:]+]]: !stream.binding, %[[WB:[^:]+]]: !stream.binding, %[[SB:[^:]+]]: !stream.binding, %[[CB:[^:]+]]: !stream.binding, %[[YB:[^:]+]]: !stream.binding, %[[M:[^:]+]]: index)
// CHECK-DAG: %[[X:.*]] = "stream.binding.subspan"(%[[XB]], %{{[^,]+}}, %[[ROWS:[^)]+]]) : (!stream.binding, index, index) -> memref<?x64xi8>
// CHECK-DAG: "stream.binding.subspan"(%[[WB]], %{{[^)]+}}) : (!stream.binding, index) -> memref<1x16x256xi8>
// CHECK-DAG: "stream.binding.subspan"(%[[SB]], %{{[^)]+}}) : (!stream.binding, index) -> memref<1x1x64xf32>
// CHECK-DAG: "stream.binding.subspan"(%[[CB]], %{{[^)]+}}) : (!stream.binding, index) -> memref<1x1x64xi32>
// CHECK-DAG: "stream.binding.subspan"(%[[YB]], %{{[^,]+}}, %[[ROWS]]) : (!stream.binding, index, index) -> memref<?x64xf32>
// The product, a tile of 4 rows by all 4 column groups (16 i32 accumulators, int8.QDQ_HALF): 4
// bytes of xq a row, as they are, the unsigned operand against each group's weights.
// CHECK-NOT: arith.xori
// CHECK: %{{.*}}:16 = scf.for %{{.*}} -> (vector<16xi32>,
// CHECK: %[[FOUR:.*]] = vector.load %[[X]][%{{[^]]+}}] : memref<?x64xi8>, vector<4xi8>
// CHECK: %[[WORD:.*]] = vector.extract %{{.*}}[0] : i32 from vector<1xi32>
// CHECK: %[[XV:.*]] = vector.broadcast %[[WORD]] : i32 to vector<16xi32>
// CHECK: %[[XB:.*]] = vector.bitcast %[[XV]] : vector<16xi32> to vector<64xi8>
// CHECK-NOT: arith.xori
// CHECK: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"(%{{[^,]+}}, %[[XB]], %{{[^)]+}})
// CHECK-COUNT-15: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK-NEXT: scf.yield
// CHECK: %[[F:.*]] = arith.sitofp %{{.*}} : vector<16xi32> to vector<16xf32>
// CHECK-NEXT: arith.mulf %{{.*}}, %[[F]] : vector<16xf32>
// CHECK-LABEL: func.func @uint8_activation
// CHECK-SAME: (%[[AT:[^:]+]]: !torch.vtensor<[?,64],f32>)
// CHECK-NOT: dq.onnx_dequantize_linear
// CHECK-NOT: linalg.generic
// CHECK: %[[XQT:.*]] = "torch.operator"(%[[AT]], %{{[^,]+}}, %{{[^)]+}}) <{name = "onnx.QuantizeLinear"}>
// CHECK: %[[XQ:.*]] = "torch_c.to_builtin_tensor"(%[[XQT]]) : (!torch.vtensor<[?,64],ui8>) -> tensor<?x64xi8>
// CHECK-DAG: %[[C:.*]] = arith.constant dense_resource<[[CBLOB:[^>]+]]> : tensor<1x1x64xi32>
// CHECK-DAG: %[[S:.*]] = arith.constant dense_resource<[[SBLOB:[^>]+]]> : tensor<1x1x64xf32>
// CHECK-DAG: %[[W:.*]] = arith.constant dense_resource<[[WBLOB:[^>]+]]> : tensor<1x16x256xi8>
// CHECK: %[[ROWS:.*]] = tensor.dim %[[XQ]]
// CHECK-NEXT: %[[Y:.*]] = "flow.dispatch"(%[[ROWS]], %[[XQ]], %[[W]], %[[S]], %[[C]], %[[ROWS]], %[[ROWS]], %[[ROWS]]) {entry_points = [@[[K]]::@[[K]]]
// CHECK-SAME: -> tensor<?x64xf32>
// CHECK-NEXT: "torch_c.from_builtin_tensor"(%[[Y]])
// CHECK-NOT: onnx.DequantizeLinear
// CHECK-NOT: onnx.MatMul
// CHECK-DAG: [[WBLOB]]: "0x{{........}}{{(03)+}}"
// CHECK-DAG: [[SBLOB]]: "0x{{........}}{{(0000003E)+}}"
// CHECK-DAG: [[CBLOB]]: "0x{{........}}{{(809EFFFF)+}}"
module attributes {dq.avx512bw, dq.avx512vnni} {
func.func @uint8_activation(%a: !torch.vtensor<[?,64],f32>) -> !torch.vtensor<[?,64],f32> {
  %sx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<130> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<64x64xsi8>} : () -> !torch.vtensor<[64,64],si8>
  %sw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<64xf32>} : () -> !torch.vtensor<[64],f32>
  %xq = "torch.operator"(%a, %sx, %zx) <{name = "onnx.QuantizeLinear"}> : (!torch.vtensor<[?,64],f32>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[?,64],ui8>
  %xf = "torch.operator"(%xq, %sx, %zx) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[?,64],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[?,64],f32>
  %wf = "torch.operator"(%w, %sw) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 1 : si64} : (!torch.vtensor<[64,64],si8>, !torch.vtensor<[64],f32>) -> !torch.vtensor<[64,64],f32>
  %y = "torch.operator"(%xf, %wf) <{name = "onnx.MatMul"}> : (!torch.vtensor<[?,64],f32>, !torch.vtensor<[64,64],f32>) -> !torch.vtensor<[?,64],f32>
  "func.return"(%y) : (!torch.vtensor<[?,64],f32>) -> ()
}
}

// -----

// uint8 x (zx = 130) and int8 weights with a zero point (zw = 1): not the direct form, so xq is
// flipped to int8 (xq ^ 0x80) and the weights biased to unsigned, u = 3 + 128 = 0x83, z' = 1 + 128
// = 0x81; each row summed (64 bytes of xq ^ 0x80 against ones);
// c[n] = -(zx - 128) * sum_k (w - zw) = -2 * 128 = -256 (0xFFFFFF00).
// CHECK-LABEL: func.func @dq_matmul_qdq_u8_i8_k64_n64_z
// CHECK: %[[ROW:.*]] = vector.load %{{.*}} : memref<?x64xi8>, vector<64xi8>
// CHECK: %[[V:.*]] = arith.xori %[[ROW]], %{{.*}} : vector<64xi8>
// CHECK: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"(%{{[^,]+}}, %{{[^,]+}}, %[[V]])
// CHECK: %[[WORD:.*]] = vector.extract %{{.*}}[0] : i32 from vector<1xi32>
// CHECK: arith.xori %[[WORD]], %{{.*}} : i32
// CHECK-LABEL: func.func @uint8_activation_weights_zero_point
// CHECK: "flow.dispatch"({{.*}}) {entry_points = [@dq_matmul_qdq_u8_i8_k64_n64_z::@dq_matmul_qdq_u8_i8_k64_n64_z]
// CHECK-DAG: "0x{{........}}{{(83)+}}"
// CHECK-DAG: "0x{{........}}{{(81)+}}"
// CHECK-DAG: "0x{{........}}{{(00FFFFFF)+}}"
module attributes {dq.avx512bw, dq.avx512vnni} {
func.func @uint8_activation_weights_zero_point(%a: !torch.vtensor<[?,64],f32>) -> !torch.vtensor<[?,64],f32> {
  %sx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<130> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<64x64xsi8>} : () -> !torch.vtensor<[64,64],si8>
  %sw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<1> : tensor<si8>} : () -> !torch.vtensor<[],si8>
  %xq = "torch.operator"(%a, %sx, %zx) <{name = "onnx.QuantizeLinear"}> : (!torch.vtensor<[?,64],f32>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[?,64],ui8>
  %xf = "torch.operator"(%xq, %sx, %zx) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[?,64],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[?,64],f32>
  %wf = "torch.operator"(%w, %sw, %zw) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[64,64],si8>, !torch.vtensor<[],f32>, !torch.vtensor<[],si8>) -> !torch.vtensor<[64,64],f32>
  %y = "torch.operator"(%xf, %wf) <{name = "onnx.MatMul"}> : (!torch.vtensor<[?,64],f32>, !torch.vtensor<[64,64],f32>) -> !torch.vtensor<[?,64],f32>
  "func.return"(%y) : (!torch.vtensor<[?,64],f32>) -> ()
}
}

// -----

// int8 x (zx = -3) read as it is (no flip), K = 8 (row sums: the 8 bytes widened), weights
// uint8 per tensor with a zero point 5 (z + 0 bytes, no bias): c[n] = 3 * sum_k (200 - 5) = 4680
// (0x00001248).
// CHECK-LABEL: func.func @dq_matmul_qdq_i8_u8_k8_n64_z
// CHECK-NOT: arith.xori
// CHECK: arith.extsi %{{.*}} : vector<8xi8> to vector<8xi32>
// CHECK-NOT: arith.xori
// CHECK: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK-LABEL: func.func @int8_activation
// CHECK: "flow.dispatch"({{.*}}) {entry_points = [@dq_matmul_qdq_i8_u8_k8_n64_z::@dq_matmul_qdq_i8_u8_k8_n64_z]
// CHECK-SAME: (index, tensor<?x8xi8>, tensor<1x2x256xi8>, tensor<1x1x64xf32>, tensor<1x1x64xi8>, tensor<1x1x64xi32>, index, index, index)
// CHECK: "0x{{........}}{{(48120000)+}}"
module attributes {dq.avx512bw, dq.avx512vnni} {
func.func @int8_activation(%a: !torch.vtensor<[?,8],f32>) -> !torch.vtensor<[?,64],f32> {
  %sx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<-3> : tensor<si8>} : () -> !torch.vtensor<[],si8>
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<200> : tensor<8x64xui8>} : () -> !torch.vtensor<[8,64],ui8>
  %sw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<5> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %xq = "torch.operator"(%a, %sx, %zx) <{name = "onnx.QuantizeLinear"}> : (!torch.vtensor<[?,8],f32>, !torch.vtensor<[],f32>, !torch.vtensor<[],si8>) -> !torch.vtensor<[?,8],si8>
  %xf = "torch.operator"(%xq, %sx, %zx) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[?,8],si8>, !torch.vtensor<[],f32>, !torch.vtensor<[],si8>) -> !torch.vtensor<[?,8],f32>
  %wf = "torch.operator"(%w, %sw, %zw) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[8,64],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[8,64],f32>
  %y = "torch.operator"(%xf, %wf) <{name = "onnx.MatMul"}> : (!torch.vtensor<[?,8],f32>, !torch.vtensor<[8,64],f32>) -> !torch.vtensor<[?,64],f32>
  "func.return"(%y) : (!torch.vtensor<[?,64],f32>) -> ()
}
}

// -----

// x dequantized per column: the float route (dq's exact kernel on x's dequantize), with a remark.
// REMARK: remark: QDQ MatMul given dq's float route, not its integer kernel: its activation's scale or zero point is not per tensor
// CHECK-LABEL: func.func @per_axis_activation
// CHECK: "dq.onnx_dequantize_linear"
// CHECK: "flow.dispatch"({{.*}}) {entry_points = [@dq_matmul_i8_k8_n64_b8_l16::@dq_matmul_i8_k8_n64_b8_l16]
module attributes {dq.avx512bw, dq.avx512vnni} {
func.func @per_axis_activation(%a: !torch.vtensor<[2,8],si8>) -> !torch.vtensor<[2,64],f32> {
  %sx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<8xf32>} : () -> !torch.vtensor<[8],f32>
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<8x64xsi8>} : () -> !torch.vtensor<[8,64],si8>
  %sw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<64xf32>} : () -> !torch.vtensor<[64],f32>
  %xf = "torch.operator"(%a, %sx) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 1 : si64} : (!torch.vtensor<[2,8],si8>, !torch.vtensor<[8],f32>) -> !torch.vtensor<[2,8],f32>
  %wf = "torch.operator"(%w, %sw) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 1 : si64} : (!torch.vtensor<[8,64],si8>, !torch.vtensor<[64],f32>) -> !torch.vtensor<[8,64],f32>
  %y = "torch.operator"(%xf, %wf) <{name = "onnx.MatMul"}> : (!torch.vtensor<[2,8],f32>, !torch.vtensor<[8,64],f32>) -> !torch.vtensor<[2,64],f32>
  "func.return"(%y) : (!torch.vtensor<[2,64],f32>) -> ()
}
}

// -----

// Without VNNI (tagged AVX-512BW only): the AVX2 integer kernel's (passes/kernels/qdq_avx2.py),
// which K = 8 does not fit: the float route, the activation's dequantize kept.
// REMARK: remark: QDQ MatMul given dq's float route, not its integer kernel: K = 8 is not a multiple of 16
// CHECK-LABEL: func.func @without_vnni
// CHECK: "dq.onnx_dequantize_linear"
// CHECK: "flow.dispatch"({{.*}}) {entry_points = [@dq_matmul_i8_k8_n64_b8_l16::@dq_matmul_i8_k8_n64_b8_l16]
module attributes {dq.avx512bw} {
func.func @without_vnni(%a: !torch.vtensor<[?,8],f32>) -> !torch.vtensor<[?,64],f32> {
  %sx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<130> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<8x64xsi8>} : () -> !torch.vtensor<[8,64],si8>
  %sw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<64xf32>} : () -> !torch.vtensor<[64],f32>
  %xq = "torch.operator"(%a, %sx, %zx) <{name = "onnx.QuantizeLinear"}> : (!torch.vtensor<[?,8],f32>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[?,8],ui8>
  %xf = "torch.operator"(%xq, %sx, %zx) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[?,8],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[?,8],f32>
  %wf = "torch.operator"(%w, %sw) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 1 : si64} : (!torch.vtensor<[8,64],si8>, !torch.vtensor<[64],f32>) -> !torch.vtensor<[8,64],f32>
  %y = "torch.operator"(%xf, %wf) <{name = "onnx.MatMul"}> : (!torch.vtensor<[?,8],f32>, !torch.vtensor<[8,64],f32>) -> !torch.vtensor<[?,64],f32>
  "func.return"(%y) : (!torch.vtensor<[?,64],f32>) -> ()
}
}

// -----

// The MatMul's only reader a QuantizeLinear to int8 (sy = 0.375, zy = -7, per tensor): the
// kernel's epilogue, saturate(roundeven(y / sy) + zy), computed as the low byte of clamp(q, -128
// - zy, 127 - zy) + 1.5 * 2^23 (that sum's bits are 0x4B400000 + roundeven of the clamped q) plus
// zy's byte, its result the dispatch's i8 tensor, read where the QuantizeLinear's result was. q = y / sy is fma(y, zh, y * zl) with sy's
// split reciprocal zh = f32(1 / sy) = f32(8 / 3) and zl = f32(8 / 3 - zh) = -2^-22 / 3, which give
// every code the division gives (passes/kernels/reciprocal.py), the product fenced so that no
// FMA takes it in: r = [sy, zy, zh, zl] in f32.
// CHECK-LABEL: "stream.executable"() ({
// CHECK: func.func @[[K:dq_matmul_qdq_u8_i8_k64_n64_qi8_rcp]](%{{.*}}: !stream.binding, %[[RB:[^:]+]]: !stream.binding, %[[YB:[^:]+]]: !stream.binding, %[[M:[^:]+]]: index)
// CHECK-DAG: %[[LOW:.*]] = arith.constant dense<-1.280000e+02> : vector<16xf32>
// CHECK-DAG: %[[HIGH:.*]] = arith.constant dense<1.270000e+02> : vector<16xf32>
// CHECK-DAG: %[[MAGIC:.*]] = arith.constant dense<0x4B400000> : vector<16xf32>
// CHECK-DAG: %[[R:.*]] = "stream.binding.subspan"(%[[RB]], %{{[^)]+}}) : (!stream.binding, index) -> memref<4xf32>
// CHECK-DAG: %[[Y:.*]] = "stream.binding.subspan"(%[[YB]], %{{[^,]+}}, %{{[^)]+}}) : (!stream.binding, index, index) -> memref<?x64xi8>
// CHECK: vector.broadcast %{{.*}} : f32 to vector<16xf32>
// CHECK: %[[ZY:.*]] = vector.broadcast %{{.*}} : f32 to vector<16xf32>
// CHECK: %[[ZH:.*]] = vector.broadcast %{{.*}} : f32 to vector<16xf32>
// CHECK: %[[ZL:.*]] = vector.broadcast %{{.*}} : f32 to vector<16xf32>
// CHECK-NOT: arith.divf
// CHECK: %[[P:.*]] = arith.mulf %[[S:.*]], %[[ZL]] : vector<16xf32>
// CHECK-NEXT: %[[F:.*]] = llvm.call_intrinsic "llvm.arithmetic.fence"(%[[P]])
// CHECK-NEXT: %[[Q:.*]] = math.fma %[[S]], %[[ZH]], %[[F]] : vector<16xf32>
// CHECK-NEXT: %[[LO:.*]] = arith.subf %[[LOW]], %[[ZY]] : vector<16xf32>
// CHECK-NEXT: %[[HI:.*]] = arith.subf %[[HIGH]], %[[ZY]] : vector<16xf32>
// The clamps assume no NaN (one instruction each; a NaN has no code either way).
// CHECK-NEXT: %[[A:.*]] = arith.maximumf %[[Q]], %[[LO]] fastmath<nnan,nsz> : vector<16xf32>
// CHECK-NEXT: %[[B:.*]] = arith.minimumf %[[A]], %[[HI]] fastmath<nnan,nsz> : vector<16xf32>
// CHECK-NEXT: %[[UP:.*]] = arith.addf %[[B]], %[[MAGIC]] : vector<16xf32>
// CHECK-NEXT: %[[BITS:.*]] = vector.bitcast %[[UP]] : vector<16xf32> to vector<16xi32>
// CHECK-NEXT: %[[LOWB:.*]] = arith.trunci %[[BITS]] : vector<16xi32> to vector<16xi8>
// CHECK-NEXT: %[[ZI:.*]] = arith.fptosi %[[ZY]] : vector<16xf32> to vector<16xi32>
// CHECK-NEXT: %[[ZB:.*]] = arith.trunci %[[ZI]] : vector<16xi32> to vector<16xi8>
// CHECK-NEXT: %[[T:.*]] = arith.addi %[[LOWB]], %[[ZB]] : vector<16xi8>
// CHECK: vector.store %[[T]], %[[Y]][%{{[^]]+}}] : memref<?x64xi8>, vector<16xi8>
// CHECK-LABEL: func.func @requantize
// CHECK: "onnx.QuantizeLinear"
// CHECK: %[[RC:.*]] = arith.constant dense<[3.750000e-01, -7.000000e+00, 2.66666675, -7.9472862E-8]> : tensor<4xf32>
// CHECK: %[[YQ:.*]] = "flow.dispatch"(%{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[RC]], %{{.*}}) {entry_points = [@[[K]]::@[[K]]]
// CHECK-SAME: -> tensor<?x64xi8>
// CHECK-NEXT: %[[YT:.*]] = "torch_c.from_builtin_tensor"(%[[YQ]]) : (tensor<?x64xi8>) -> !torch.vtensor<[?,64],si8>
// CHECK-NEXT: "torch_c.to_builtin_tensor"(%[[YT]])
// CHECK-NOT: onnx.QuantizeLinear
// CHECK-NOT: onnx.MatMul
// CHECK: "dq.onnx_dequantize_linear"
// CHECK: return
module attributes {dq.avx512bw, dq.avx512vnni} {
func.func @requantize(%a: !torch.vtensor<[?,64],f32>) -> !torch.vtensor<[?,64],f32> {
  %sx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<130> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<64x64xsi8>} : () -> !torch.vtensor<[64,64],si8>
  %sw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<64xf32>} : () -> !torch.vtensor<[64],f32>
  %sy = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.375> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zy = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<-7> : tensor<si8>} : () -> !torch.vtensor<[],si8>
  %xq = "torch.operator"(%a, %sx, %zx) <{name = "onnx.QuantizeLinear"}> : (!torch.vtensor<[?,64],f32>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[?,64],ui8>
  %xf = "torch.operator"(%xq, %sx, %zx) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[?,64],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[?,64],f32>
  %wf = "torch.operator"(%w, %sw) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 1 : si64} : (!torch.vtensor<[64,64],si8>, !torch.vtensor<[64],f32>) -> !torch.vtensor<[64,64],f32>
  %y = "torch.operator"(%xf, %wf) <{name = "onnx.MatMul"}> : (!torch.vtensor<[?,64],f32>, !torch.vtensor<[64,64],f32>) -> !torch.vtensor<[?,64],f32>
  %yq = "torch.operator"(%y, %sy, %zy) <{name = "onnx.QuantizeLinear"}> : (!torch.vtensor<[?,64],f32>, !torch.vtensor<[],f32>, !torch.vtensor<[],si8>) -> !torch.vtensor<[?,64],si8>
  %yf = "torch.operator"(%yq, %sy, %zy) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[?,64],si8>, !torch.vtensor<[],f32>, !torch.vtensor<[],si8>) -> !torch.vtensor<[?,64],f32>
  "func.return"(%yf) : (!torch.vtensor<[?,64],f32>) -> ()
}
}

// -----

// A QuantizeLinear to uint8 dividing in f16 (precision = 10): not the kernel's epilogue, with a
// remark; the MatMul still takes the kernel, its f32 result read by the QuantizeLinear.
// REMARK: remark: QuantizeLinear not fused into dq's QDQ kernel: its QuantizeLinear's attribute 'precision' is not one the kernel takes
// CHECK-LABEL: func.func @requantize_in_f16
// CHECK: %[[Y:.*]] = "flow.dispatch"({{.*}}) {entry_points = [@dq_matmul_qdq_u8_i8_k64_n64::@dq_matmul_qdq_u8_i8_k64_n64]
// CHECK-SAME: -> tensor<?x64xf32>
// CHECK-NEXT: %[[YT:.*]] = "torch_c.from_builtin_tensor"(%[[Y]])
// CHECK-NEXT: "torch.operator"(%[[YT]], %{{.*}}) <{name = "onnx.QuantizeLinear"}> {torch.onnx.precision = 10 : si64}
module attributes {dq.avx512bw, dq.avx512vnni} {
func.func @requantize_in_f16(%a: !torch.vtensor<[?,64],f32>) -> !torch.vtensor<[?,64],ui8> {
  %sx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<130> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<64x64xsi8>} : () -> !torch.vtensor<[64,64],si8>
  %sw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<64xf32>} : () -> !torch.vtensor<[64],f32>
  %sy = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.375> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zy = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<7> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %xq = "torch.operator"(%a, %sx, %zx) <{name = "onnx.QuantizeLinear"}> : (!torch.vtensor<[?,64],f32>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[?,64],ui8>
  %xf = "torch.operator"(%xq, %sx, %zx) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[?,64],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[?,64],f32>
  %wf = "torch.operator"(%w, %sw) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 1 : si64} : (!torch.vtensor<[64,64],si8>, !torch.vtensor<[64],f32>) -> !torch.vtensor<[64,64],f32>
  %y = "torch.operator"(%xf, %wf) <{name = "onnx.MatMul"}> : (!torch.vtensor<[?,64],f32>, !torch.vtensor<[64,64],f32>) -> !torch.vtensor<[?,64],f32>
  %yq = "torch.operator"(%y, %sy, %zy) <{name = "onnx.QuantizeLinear"}> {torch.onnx.precision = 10 : si64} : (!torch.vtensor<[?,64],f32>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[?,64],ui8>
  "func.return"(%yq) : (!torch.vtensor<[?,64],ui8>) -> ()
}
}

// -----

// A constant bias Add between the MatMul and its QuantizeLinear (to uint8, sy = 0.375, zy = 7):
// b[n] = 0.5 (0x3F000000) laid out as c, added to y before the division (by sy's split
// reciprocal, as above).
// CHECK-LABEL: "stream.executable"() ({
// CHECK: func.func @[[K:dq_matmul_qdq_u8_i8_k64_n64_qu8_b_rcp]](%{{.*}}: !stream.binding, %[[BB:[^:]+]]: !stream.binding, %[[RB:[^:]+]]: !stream.binding, %[[YB:[^:]+]]: !stream.binding, %[[M:[^:]+]]: index)
// CHECK-DAG: %[[HIGH:.*]] = arith.constant dense<2.550000e+02> : vector<16xf32>
// CHECK-DAG: %[[B:.*]] = "stream.binding.subspan"(%[[BB]], %{{[^)]+}}) : (!stream.binding, index) -> memref<1x1x64xf32>
// CHECK-DAG: "stream.binding.subspan"(%[[RB]], %{{[^)]+}}) : (!stream.binding, index) -> memref<4xf32>
// CHECK: %[[BV:.*]] = vector.load %[[B]][%{{[^]]+}}] : memref<1x1x64xf32>, vector<16xf32>
// CHECK-NEXT: %[[YB2:.*]] = arith.addf %{{.*}}, %[[BV]] : vector<16xf32>
// CHECK-NEXT: arith.mulf %[[YB2]], %{{.*}} : vector<16xf32>
// CHECK-NEXT: llvm.call_intrinsic "llvm.arithmetic.fence"
// CHECK-NEXT: math.fma %[[YB2]], %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK-LABEL: func.func @bias_requantize
// CHECK-DAG: %[[BC:.*]] = arith.constant dense_resource<[[BBLOB:dq_kernel_b[^>]*]]> : tensor<1x1x64xf32>
// CHECK-DAG: %[[RC:.*]] = arith.constant dense<[3.750000e-01, 7.000000e+00, 2.66666675, -7.9472862E-8]> : tensor<4xf32>
// CHECK: "flow.dispatch"(%{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[BC]], %[[RC]], %{{.*}}) {entry_points = [@[[K]]::@[[K]]]
// CHECK-SAME: -> tensor<?x64xi8>
// CHECK-NOT: onnx.Add
// CHECK-NOT: onnx.QuantizeLinear
// CHECK: return
// CHECK: [[BBLOB]]: "0x{{........}}{{(0000003F)+}}"
module attributes {dq.avx512bw, dq.avx512vnni} {
func.func @bias_requantize(%a: !torch.vtensor<[?,64],f32>) -> !torch.vtensor<[?,64],ui8> {
  %sx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<130> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<64x64xsi8>} : () -> !torch.vtensor<[64,64],si8>
  %sw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<64xf32>} : () -> !torch.vtensor<[64],f32>
  %b = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<64xf32>} : () -> !torch.vtensor<[64],f32>
  %sy = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.375> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zy = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<7> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %xq = "torch.operator"(%a, %sx, %zx) <{name = "onnx.QuantizeLinear"}> : (!torch.vtensor<[?,64],f32>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[?,64],ui8>
  %xf = "torch.operator"(%xq, %sx, %zx) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[?,64],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[?,64],f32>
  %wf = "torch.operator"(%w, %sw) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 1 : si64} : (!torch.vtensor<[64,64],si8>, !torch.vtensor<[64],f32>) -> !torch.vtensor<[64,64],f32>
  %y = "torch.operator"(%xf, %wf) <{name = "onnx.MatMul"}> : (!torch.vtensor<[?,64],f32>, !torch.vtensor<[64,64],f32>) -> !torch.vtensor<[?,64],f32>
  %yb = "torch.operator"(%y, %b) <{name = "onnx.Add"}> : (!torch.vtensor<[?,64],f32>, !torch.vtensor<[64],f32>) -> !torch.vtensor<[?,64],f32>
  %yq = "torch.operator"(%yb, %sy, %zy) <{name = "onnx.QuantizeLinear"}> : (!torch.vtensor<[?,64],f32>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[?,64],ui8>
  "func.return"(%yq) : (!torch.vtensor<[?,64],ui8>) -> ()
}
}

// -----

// A scale past the split reciprocal's range (|sy| > 2^100: kernels/reciprocal.py's LIMIT, sy =
// f32(1e33) here) is divided, y / sy a true division, and r = [sy, zy].
// CHECK-LABEL: "stream.executable"() ({
// CHECK: func.func @[[K:dq_matmul_qdq_u8_i8_k64_n64_qu8]](
// CHECK-DAG: "stream.binding.subspan"(%{{[^)]+}}) : (!stream.binding, index) -> memref<2xf32>
// CHECK-NOT: math.fma
// CHECK: arith.divf %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK-LABEL: func.func @requantize_by_division
// CHECK: arith.constant dense<[9.99999994E+32, 7.000000e+00]> : tensor<2xf32>
// CHECK: "flow.dispatch"({{.*}}) {entry_points = [@[[K]]::@[[K]]]
module attributes {dq.avx512bw, dq.avx512vnni} {
func.func @requantize_by_division(%a: !torch.vtensor<[?,64],f32>) -> !torch.vtensor<[?,64],ui8> {
  %sx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<130> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<64x64xsi8>} : () -> !torch.vtensor<[64,64],si8>
  %sw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<64xf32>} : () -> !torch.vtensor<[64],f32>
  %sy = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<1.0e33> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zy = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<7> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %xq = "torch.operator"(%a, %sx, %zx) <{name = "onnx.QuantizeLinear"}> : (!torch.vtensor<[?,64],f32>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[?,64],ui8>
  %xf = "torch.operator"(%xq, %sx, %zx) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[?,64],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[?,64],f32>
  %wf = "torch.operator"(%w, %sw) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 1 : si64} : (!torch.vtensor<[64,64],si8>, !torch.vtensor<[64],f32>) -> !torch.vtensor<[64,64],f32>
  %y = "torch.operator"(%xf, %wf) <{name = "onnx.MatMul"}> : (!torch.vtensor<[?,64],f32>, !torch.vtensor<[64,64],f32>) -> !torch.vtensor<[?,64],f32>
  %yq = "torch.operator"(%y, %sy, %zy) <{name = "onnx.QuantizeLinear"}> : (!torch.vtensor<[?,64],f32>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[?,64],ui8>
  "func.return"(%yq) : (!torch.vtensor<[?,64],ui8>) -> ()
}
}

// -----

// N = 24, no whole workgroup (passes/kernels/tail.py): one workgroup of its two live groups (16
// columns plain, then 8 of 16 lanes stored masked); the constants padded to 64 columns, c's
// padding zero.
// CHECK-LABEL: "stream.executable"() ({
// CHECK: func.func @[[K:dq_matmul_qdq_u8_i8_k64_n24]](
// CHECK-DAG: "stream.binding.subspan"(%{{[^)]+}}) : (!stream.binding, index) -> memref<1x16x256xi8>
// CHECK-DAG: "stream.binding.subspan"(%{{[^)]+}}) : (!stream.binding, index) -> memref<1x1x64xi32>
// CHECK-DAG: %[[Y:.*]] = "stream.binding.subspan"(%{{[^)]+}}) : (!stream.binding, index, index) -> memref<?x24xf32>
// CHECK-NOT: scf.if
// CHECK: vector.store %{{[^,]+}}, %[[Y]][%{{[^]]+}}] : memref<?x24xf32>, vector<16xf32>
// CHECK-NEXT: %[[C16:.*]] = arith.addi %{{.*}}, %c16
// CHECK-NEXT: %[[MASK:.*]] = vector.constant_mask [8] : vector<16xi1>
// CHECK-NEXT: vector.maskedstore %[[Y]][%{{[^,]+}}, %[[C16]]], %[[MASK]], %{{[^ ]+}} : memref<?x24xf32>, vector<16xi1>, vector<16xf32>
// CHECK-NOT: %c32
// CHECK-LABEL: func.func @partial_columns
// CHECK: "flow.dispatch"({{.*}}) {entry_points = [@[[K]]::@[[K]]]
// CHECK-SAME: -> tensor<?x24xf32>
// CHECK: dq_kernel_c: "0x{{........}}{{(809EFFFF)+(00000000)+}}"
module attributes {dq.avx512bw, dq.avx512vnni} {
func.func @partial_columns(%a: !torch.vtensor<[?,64],f32>) -> !torch.vtensor<[?,24],f32> {
  %sx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<130> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<64x24xsi8>} : () -> !torch.vtensor<[64,24],si8>
  %sw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<24xf32>} : () -> !torch.vtensor<[24],f32>
  %xq = "torch.operator"(%a, %sx, %zx) <{name = "onnx.QuantizeLinear"}> : (!torch.vtensor<[?,64],f32>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[?,64],ui8>
  %xf = "torch.operator"(%xq, %sx, %zx) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[?,64],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[?,64],f32>
  %wf = "torch.operator"(%w, %sw) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 1 : si64} : (!torch.vtensor<[64,24],si8>, !torch.vtensor<[24],f32>) -> !torch.vtensor<[64,24],f32>
  %y = "torch.operator"(%xf, %wf) <{name = "onnx.MatMul"}> : (!torch.vtensor<[?,64],f32>, !torch.vtensor<[64,24],f32>) -> !torch.vtensor<[?,24],f32>
  "func.return"(%y) : (!torch.vtensor<[?,24],f32>) -> ()
}
}

// -----

// N = 72: two workgroups, the last of one live group of 8 columns; the body built twice, the
// workgroup id choosing the last one's (its group stored masked, no plain store) or all four
// groups (plain stores).
// CHECK-LABEL: "stream.executable"() ({
// CHECK: %[[TWO:.*]] = arith.constant 2 : index
// CHECK: "stream.return"(%{{[^,]+}}, %[[TWO]],
// CHECK: func.func @dq_matmul_qdq_u8_i8_k64_n72(
// CHECK: %[[WG:.*]] = "stream.dispatch.workgroup.id"() {dimension = 1 : index}
// CHECK: %[[LAST:.*]] = arith.cmpi eq, %[[WG]], %c1 : index
// CHECK-NEXT: scf.if %[[LAST]] {
// CHECK-NOT: vector.store {{.*}} : memref<?x72xf32>
// CHECK: vector.maskedstore %{{.*}} : memref<?x72xf32>, vector<16xi1>, vector<16xf32>
// CHECK: vector.store %{{.*}} : memref<?x72xf32>, vector<16xf32>
// CHECK-LABEL: func.func @partial_workgroup
module attributes {dq.avx512bw, dq.avx512vnni} {
func.func @partial_workgroup(%a: !torch.vtensor<[?,64],f32>) -> !torch.vtensor<[?,72],f32> {
  %sx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<130> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<64x72xsi8>} : () -> !torch.vtensor<[64,72],si8>
  %sw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<72xf32>} : () -> !torch.vtensor<[72],f32>
  %xq = "torch.operator"(%a, %sx, %zx) <{name = "onnx.QuantizeLinear"}> : (!torch.vtensor<[?,64],f32>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[?,64],ui8>
  %xf = "torch.operator"(%xq, %sx, %zx) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[?,64],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[?,64],f32>
  %wf = "torch.operator"(%w, %sw) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 1 : si64} : (!torch.vtensor<[64,72],si8>, !torch.vtensor<[72],f32>) -> !torch.vtensor<[64,72],f32>
  %y = "torch.operator"(%xf, %wf) <{name = "onnx.MatMul"}> : (!torch.vtensor<[?,64],f32>, !torch.vtensor<[64,72],f32>) -> !torch.vtensor<[?,72],f32>
  "func.return"(%y) : (!torch.vtensor<[?,72],f32>) -> ()
}
}
