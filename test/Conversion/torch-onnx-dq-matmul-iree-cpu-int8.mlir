// RUN: dequant-opt %s --allow-unregistered-dialect --split-input-file --torch-onnx-to-dq --torch-onnx-dq-matmul-iree-cpu=int8-activations=true 2>%t.option.remarks | FileCheck %s
// RUN: FileCheck %s --check-prefix=REMARK < %t.option.remarks
// RUN: dequant-opt %s --allow-unregistered-dialect --split-input-file --pass-pipeline='builtin.module(torch-onnx-to-dq,torch-onnx-dq-matmul-iree-cpu{int8-activations=true})' 2>%t.remarks | FileCheck %s
// RUN: FileCheck %s --check-prefix=REMARK < %t.remarks
// RUN: not dequant-opt %s --allow-unregistered-dialect --torch-onnx-dq-matmul-iree-cpu=int8=true 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: pass 'torch-onnx-dq-matmul-iree-cpu' has no option 'int8' (its options: int8-activations)

// torch-onnx-dq-matmul-iree-cpu with int8-activations=true, on a module tagged AVX-512 VNNI by
// hand: a MatMul of constant int4 weights becomes two dispatches (passes/kernels/int8.py):
// one quantizing x per row and block of K into xq (4 int8 to an i32), the block scales and the
// block sums of xq, and dq's kernel reading them with vpdpbusd.

// Blocked int4, K = 8, N = 64, block 8, one scale 0.5: w[k][n] = k - 4 for every n (ONNX bytes:
// two equal nibbles, row k is 32 bytes of CC, DD, EE, FF, 00, 11, 22, 33). Biased by 8, u = k + 4;
// the kernel's layout [N/64, K/8, 64 * 4] puts in byte b of each column's 32-bit lane row b (low
// nibble) and row 4 + b (high nibble): 84 95 A6 B7, for each of the 64 columns.
// CHECK-LABEL: "stream.executable"() ({
// CHECK: func.func @[[Q:dq_quantize_rows_k8_b8]](%[[XB:[^:]+]]: !stream.binding, %[[XQB:[^:]+]]: !stream.binding, %[[XSB:[^:]+]]: !stream.binding, %[[SUMB:[^:]+]]: !stream.binding, %[[QM:[^:]+]]: index)
// CHECK-DAG: "stream.binding.subspan"(%[[XB]], %{{[^,]+}}, %[[QM]]) : (!stream.binding, index, index) -> memref<?x8xf32>
// CHECK-DAG: "stream.binding.subspan"(%[[XQB]], %{{[^,]+}}, %[[QM]]) : (!stream.binding, index, index) -> memref<?x2xi32>
// CHECK-DAG: "stream.binding.subspan"(%[[XSB]], %{{[^,]+}}, %[[QM]]) : (!stream.binding, index, index) -> memref<?x1xf32>
// CHECK-DAG: "stream.binding.subspan"(%[[SUMB]], %{{[^,]+}}, %[[QM]]) : (!stream.binding, index, index) -> memref<?x1xi32>
// CHECK: vector.reduction <maximumf>
// CHECK: math.roundeven
// CHECK: vector.reduction <add>
// CHECK: "stream.executable"() ({
// CHECK: func.func @[[K:dq_matmul_x8_i4_k8_n64_b8_l16]](%[[XQ:[^:]+]]: !stream.binding, %[[XS:[^:]+]]: !stream.binding, %[[SUM:[^:]+]]: !stream.binding, %[[WB:[^:]+]]: !stream.binding, %[[SB:[^:]+]]: !stream.binding, %[[YB:[^:]+]]: !stream.binding, %[[M:[^:]+]]: index)
// CHECK-DAG: "stream.binding.subspan"(%[[WB]], %{{[^)]+}}) : (!stream.binding, index) -> memref<1x1x256xi8>
// CHECK-DAG: "stream.binding.subspan"(%[[SB]], %{{[^)]+}}) : (!stream.binding, index) -> memref<1x1x64xf32>
// CHECK-DAG: "stream.binding.subspan"(%[[YB]], %{{[^,]+}}, %[[M]]) : (!stream.binding, index, index) -> memref<?x64xf32>
// CHECK: %[[LO:.*]] = arith.andi %{{.*}} : vector<64xi8>
// CHECK: %[[HI:.*]] = arith.shrui %{{.*}} : vector<64xi8>
// CHECK: %[[D:.*]] = llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"(%{{[^,]+}}, %[[LO]], %{{[^)]+}}) : (vector<16xi32>, vector<64xi8>, vector<64xi8>) -> vector<16xi32>
// CHECK-NEXT: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"(%[[D]], %[[HI]], %{{[^)]+}})
// CHECK: arith.sitofp %{{.*}} : vector<16xi32> to vector<16xf32>
// CHECK: vector.fma
// CHECK-LABEL: func.func @int4_blocked
// CHECK-SAME: (%[[AT:[^:]+]]: !torch.vtensor<[?,8],f32>)
// CHECK-NOT: onnx.MatMul
// CHECK-DAG: %[[W:.*]] = arith.constant dense_resource<[[WBLOB:[^>]+]]> : tensor<1x1x256xi8>
// CHECK-DAG: %[[S:.*]] = arith.constant dense_resource<[[SBLOB:[^>]+]]> : tensor<1x1x64xf32>
// CHECK-DAG: %[[A:.*]] = "torch_c.to_builtin_tensor"(%[[AT]])
// CHECK-DAG: %[[ROWS:.*]] = tensor.dim %[[A]], %{{.*}} : tensor<?x8xf32>
// CHECK: %[[QX:.*]]:3 = "flow.dispatch"(%[[ROWS]], %[[A]], %[[ROWS]], %[[ROWS]], %[[ROWS]], %[[ROWS]], %[[ROWS]]) {entry_points = [@[[Q]]::@[[Q]]], operandSegmentSizes = array<i32: 1, 2, 1, 3>, tied_operands = [-1 : index, -1 : index, -1 : index]} : (index, tensor<?x8xf32>, index, index, index, index, index) -> (tensor<?x2xi32>, tensor<?x1xf32>, tensor<?x1xi32>)
// CHECK-NEXT: %[[Y:.*]] = "flow.dispatch"(%[[ROWS]], %[[QX]]#0, %[[QX]]#1, %[[QX]]#2, %[[W]], %[[S]], %[[ROWS]], %[[ROWS]], %[[ROWS]], %[[ROWS]], %[[ROWS]]) {entry_points = [@[[K]]::@[[K]]], operandSegmentSizes = array<i32: 1, 6, 3, 1>, tied_operands = [-1 : index]}
// CHECK-SAME: -> tensor<?x64xf32>
// CHECK-NEXT: "torch_c.from_builtin_tensor"(%[[Y]])
// CHECK: [[WBLOB]]: "0x{{........}}{{(8495A6B7)+}}"
module attributes {dq.avx512bw, dq.avx512vnni} {
func.func @int4_blocked(%a: !torch.vtensor<[?,8],f32>) -> !torch.vtensor<[?,64],f32> {
  %0 = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense_resource<w> : tensor<8x64xsi4>} : () -> !torch.vtensor<[8,64],si4>
  %s = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<1x64xf32>} : () -> !torch.vtensor<[1,64],f32>
  %1 = "torch.operator"(%0, %s) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 0 : si64, torch.onnx.block_size = 8 : si64} : (!torch.vtensor<[8,64],si4>, !torch.vtensor<[1,64],f32>) -> !torch.vtensor<[8,64],f32>
  %2 = "torch.operator"(%a, %1) <{name = "onnx.MatMul"}> : (!torch.vtensor<[?,8],f32>, !torch.vtensor<[8,64],f32>) -> !torch.vtensor<[?,64],f32>
  "func.return"(%2) : (!torch.vtensor<[?,64],f32>) -> ()
}
}
{-#
  dialect_resources: { builtin: { w: "0x08000000CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF0000000000000000000000000000000000000000000000000000000000000000111111111111111111111111111111111111111111111111111111111111111122222222222222222222222222222222222222222222222222222222222222223333333333333333333333333333333333333333333333333333333333333333" } }
#-}

// -----

// uint8 with a zero point per column, N = 64: 4 rows of K per 32-bit lane (one vpdpbusd per
// load, no unpacking), and the zero point's bytes (z + 0: no bias for unsigned) read by the kernel.
// CHECK-LABEL: func.func @dq_matmul_x8_u8_k8_n64_b8_z_l16
// CHECK: "stream.binding.subspan"(%{{[^)]+}}) : (!stream.binding, index) -> memref<1x2x256xi8>
// CHECK-NOT: arith.shrui
// CHECK: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK-LABEL: func.func @uint8_zero_point
// CHECK: %[[QX:.*]]:3 = "flow.dispatch"
// CHECK-NEXT: "flow.dispatch"(%{{[^,]+}}, %[[QX]]#0, %[[QX]]#1, %[[QX]]#2, %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}},
// CHECK-SAME: tensor<1x2x256xi8>, tensor<1x1x64xf32>, tensor<1x1x64xi8>
module attributes {dq.avx512bw, dq.avx512vnni} {
func.func @uint8_zero_point(%a: !torch.vtensor<[?,8],f32>) -> !torch.vtensor<[?,64],f32> {
  %0 = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<200> : tensor<8x64xui8>} : () -> !torch.vtensor<[8,64],ui8>
  %s = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<64xf32>} : () -> !torch.vtensor<[64],f32>
  %z = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<5> : tensor<64xui8>} : () -> !torch.vtensor<[64],ui8>
  %1 = "torch.operator"(%0, %s, %z) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 1 : si64} : (!torch.vtensor<[8,64],ui8>, !torch.vtensor<[64],f32>, !torch.vtensor<[64],ui8>) -> !torch.vtensor<[8,64],f32>
  %2 = "torch.operator"(%a, %1) <{name = "onnx.MatMul"}> : (!torch.vtensor<[?,8],f32>, !torch.vtensor<[8,64],f32>) -> !torch.vtensor<[?,64],f32>
  "func.return"(%2) : (!torch.vtensor<[?,64],f32>) -> ()
}
}

// -----

// N = 32 (no multiple of 64 columns): the exact kernel (8 lanes), with a remark saying why.
// REMARK: remark: MatMul given dq's exact kernel, not the int8-activation one: N = 32 is not a multiple of 64 columns
// CHECK-LABEL: func.func @narrow
// CHECK: "flow.dispatch"
// CHECK-SAME: entry_points = [@dq_matmul_i8_k8_n32_b8_l8::@dq_matmul_i8_k8_n32_b8_l8]
// CHECK-NOT: dq_quantize_rows
module attributes {dq.avx512bw, dq.avx512vnni} {
func.func @narrow(%a: !torch.vtensor<[?,8],f32>) -> !torch.vtensor<[?,32],f32> {
  %0 = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<8x32xsi8>} : () -> !torch.vtensor<[8,32],si8>
  %s = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<1x32xf32>} : () -> !torch.vtensor<[1,32],f32>
  %1 = "torch.operator"(%0, %s) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 0 : si64, torch.onnx.block_size = 8 : si64} : (!torch.vtensor<[8,32],si8>, !torch.vtensor<[1,32],f32>) -> !torch.vtensor<[8,32],f32>
  %2 = "torch.operator"(%a, %1) <{name = "onnx.MatMul"}> : (!torch.vtensor<[?,8],f32>, !torch.vtensor<[8,32],f32>) -> !torch.vtensor<[?,32],f32>
  "func.return"(%2) : (!torch.vtensor<[?,32],f32>) -> ()
}
}
