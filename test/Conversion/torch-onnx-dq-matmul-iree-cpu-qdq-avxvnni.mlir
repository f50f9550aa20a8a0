// RUN: dequant-opt %s --allow-unregistered-dialect --split-input-file --torch-onnx-to-dq --torch-onnx-dq-matmul-iree-cpu | FileCheck %s

// torch-onnx-dq-matmul-iree-cpu on QDQ MatMuls for an AVX-VNNI host without AVX-512 (a module
// tagged dq.avx2 and dq.avxvnni, as dq-target-features tags alderlake or sierraforest): one
// dispatch of the exact integer kernel with vpdpbusd on 8 lanes (passes/kernels/qdq_avxvnni.py,
// QdqAvxVnniKernel), no vpmaddwd and no widening of x.

// uint8 x, sx = 0.5, zx = 130; int8 weights w = 3 everywhere without a zero point, K = N = 64, sw
// = 0.25 per column: the direct form, two workgroups of 32 columns. The constants, by hand: u = w
// = 0x03 in every byte, laid out [N / 32, K / 4, 128] (4 rows of K a lane); s = sx * sw = 0.125
// (0x3E000000); c[n] = -zx * sum_k w = -130 * 192 = -24960 (0xFFFF9E80).
// CHECK-LABEL: "stream.executable"() ({
// CHECK: func.func @[[K:dq_matmul_qdq_avxvnni_u8_i8_k64_n64]](%[[XB:[^:]+]]: !stream.binding, %[[WB:[^:]+]]: !stream.binding, %[[SB:[^:]+]]: !stream.binding, %[[CB:[^:]+]]: !stream.binding, %[[YB:[^:]+]]: !stream.binding, %[[M:[^:]+]]: index)
// CHECK-NOT: memref.alloca
// CHECK: %[[X:.*]] = "stream.binding.subspan"(%[[XB]], %{{[^)]+}}) : (!stream.binding, index, index) -> memref<?x64xi8>
// CHECK: %[[W:.*]] = "stream.binding.subspan"(%[[WB]], %{{[^)]+}}) : (!stream.binding, index) -> memref<2x16x128xi8>
// No row sums: per 4 rows of K (16 steps of K = 64, 4 a loop iteration), each group's 32 weight
// bytes, and each row's 4 bytes of xq as they are (unsigned, no flip), broadcast as a word.
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[FOUR:.*]] iter_args
// CHECK: %[[WV:.*]] = vector.load %[[W]][%{{[^]]+}}] : memref<2x16x128xi8>, vector<32xi8>
// CHECK: %[[XV:.*]] = vector.load %[[X]][%{{[^]]+}}] : memref<?x64xi8>, vector<4xi8>
// CHECK-NOT: arith.xori
// CHECK: %[[WORD:.*]] = vector.bitcast %[[XV]] : vector<4xi8> to vector<1xi32>
// CHECK: %[[XS:.*]] = vector.broadcast %{{.*}} : i32 to vector<8xi32>
// CHECK: %[[XB8:.*]] = vector.bitcast %[[XS]] : vector<8xi32> to vector<32xi8>
// CHECK: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.256"(%{{[^,]+}}, %[[XB8]], %[[WV]]) : (vector<8xi32>, vector<32xi8>, vector<32xi8>) -> vector<8xi32>
// CHECK-NOT: pmadd
// CHECK: %[[F:.*]] = arith.sitofp %{{.*}} : vector<8xi32> to vector<8xf32>
// CHECK-NEXT: arith.mulf %{{.*}}, %[[F]] : vector<8xf32>
// CHECK-LABEL: func.func @uint8_activation
// CHECK: "flow.dispatch"({{.*}}) {entry_points = [@[[K]]::@[[K]]]
// CHECK-SAME: (index, tensor<?x64xi8>, tensor<2x16x128xi8>, tensor<2x1x32xf32>, tensor<2x1x32xi32>, index, index, index) -> tensor<?x64xf32>
// CHECK-NOT: onnx.MatMul
// CHECK-DAG: "0x{{........}}{{(03)+}}"
// CHECK-DAG: "0x{{........}}{{(0000003E)+}}"
// CHECK-DAG: "0x{{........}}{{(809EFFFF)+}}"


module attributes {dq.avx2, dq.avxvnni} {
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

// int8 x (zx = -3), int8 weights per tensor with a zero point 5: u = w + 128 (unsigned, vpdpbusd's
// first operand) against x's bytes (signed, its second); the zero point's share of d, -(zw + 128)
// * sum_k v, from each row's sum by vpdpbusd of 32 bytes against ones.
// CHECK-LABEL: func.func @dq_matmul_qdq_avxvnni_i8_i8_k32_n32_z
// CHECK: %[[ONES:.*]] = arith.constant dense<1> : vector<32xi8>
// CHECK: %[[ROW:.*]] = vector.load %{{.*}} : memref<?x32xi8>, vector<32xi8>
// CHECK: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.256"(%{{[^,]+}}, %[[ONES]], %[[ROW]])
// CHECK: %[[ZB:.*]] = arith.extui %{{.*}} : vector<8xi8> to vector<8xi32>
// CHECK: arith.muli %[[ZB]], %{{.*}} : vector<8xi32>
// CHECK: %[[WV:.*]] = vector.load %{{.*}} : memref<1x8x128xi8>, vector<32xi8>
// CHECK: %[[XB8:.*]] = vector.bitcast %{{.*}} : vector<8xi32> to vector<32xi8>
// CHECK: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.256"(%{{[^,]+}}, %[[WV]], %[[XB8]])
// CHECK-LABEL: func.func @int8_activation_zero_point
// CHECK: "flow.dispatch"({{.*}}) {entry_points = [@dq_matmul_qdq_avxvnni_i8_i8_k32_n32_z::@dq_matmul_qdq_avxvnni_i8_i8_k32_n32_z]
// CHECK-SAME: (index, tensor<?x32xi8>, tensor<1x8x128xi8>, tensor<1x1x32xf32>, tensor<1x1x32xi8>, tensor<1x1x32xi32>, index, index, index)
module attributes {dq.avx2, dq.avxvnni} {
func.func @int8_activation_zero_point(%a: !torch.vtensor<[?,32],f32>) -> !torch.vtensor<[?,32],f32> {
  %sx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zx = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<-3> : tensor<si8>} : () -> !torch.vtensor<[],si8>
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<7> : tensor<32x32xsi8>} : () -> !torch.vtensor<[32,32],si8>
  %sw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %zw = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<5> : tensor<si8>} : () -> !torch.vtensor<[],si8>
  %xq = "torch.operator"(%a, %sx, %zx) <{name = "onnx.QuantizeLinear"}> : (!torch.vtensor<[?,32],f32>, !torch.vtensor<[],f32>, !torch.vtensor<[],si8>) -> !torch.vtensor<[?,32],si8>
  %xf = "torch.operator"(%xq, %sx, %zx) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[?,32],si8>, !torch.vtensor<[],f32>, !torch.vtensor<[],si8>) -> !torch.vtensor<[?,32],f32>
  %wf = "torch.operator"(%w, %sw, %zw) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[32,32],si8>, !torch.vtensor<[],f32>, !torch.vtensor<[],si8>) -> !torch.vtensor<[32,32],f32>
  %y = "torch.operator"(%xf, %wf) <{name = "onnx.MatMul"}> : (!torch.vtensor<[?,32],f32>, !torch.vtensor<[32,32],f32>) -> !torch.vtensor<[?,32],f32>
  "func.return"(%y) : (!torch.vtensor<[?,32],f32>) -> ()
}
}

// -----

// A CPU with both (sapphirerapids, znver5): AVX-512 VNNI's 16-lane kernel, not this one.
// CHECK-LABEL: func.func @both_vnnis
// CHECK: "flow.dispatch"({{.*}}) {entry_points = [@dq_matmul_qdq_u8_i8_k64_n64::@dq_matmul_qdq_u8_i8_k64_n64]


module attributes {dq.avx2, dq.avxvnni, dq.avx512bw, dq.avx512vnni} {
func.func @both_vnnis(%a: !torch.vtensor<[?,64],f32>) -> !torch.vtensor<[?,64],f32> {
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
