// RUN: dequant-opt %s --allow-unregistered-dialect --split-input-file --torch-onnx-to-dq --torch-onnx-dq-matmul-iree-cpu 2>%t.remarks | FileCheck %s
// RUN: FileCheck %s --check-prefix=REMARK < %t.remarks

// torch-onnx-dq-matmul-iree-cpu (passes/torch_onnx_dq_matmul_iree_cpu.py): an onnx.MatMul of
// constant 4- or 8-bit weights [K, N] becomes a flow.dispatch of dq's matmul kernel: one
// stream.executable per kernel shape (its export's workgroup count N / 32, its function the
// kernel body on stream bindings x, w, s[, z], y and the row count), the weights, scales and zero
// points repacked as dense_resource constants in the kernel's layout (passes/kernels/f32.py:
// per workgroup of 32 columns, one stream of rows).

// Blocked int4, K = 4, N = 32, block 2, one scale 0.5: w[k][n] = k - 2 for every n (the ONNX
// bytes: two equal nibbles per byte, row k is 16 bytes of EE, FF, 00, 11). The kernel's layout
// [N/32, K/2, 32] biases each value by 8 (u = k + 6) and puts rows 2r and 2r+1 of a column in
// the low and high nibble: row pair 0 is 32 bytes of 0x76 (6 | 7 << 4), row pair 1 32 bytes of
// 0x98. The scales [N/32, K/2 blocks, 32] are all 0.5 (0x3F000000).
// CHECK-LABEL: "stream.executable"() ({
// CHECK: "stream.executable.export"() ({
// CHECK-NEXT: ^bb0(%{{[^:]+}}: index):
// CHECK: "stream.return"
// CHECK: }) {function_ref = @[[K:dq_matmul_i4_k4_n32_b2_l8]], sym_name = "[[K]]", sym_visibility = "public"}
// CHECK: func.func @[[K]](%[[XB:[^:]+]]: !stream.binding, %[[WB:[^:]+]]: !stream.binding, %[[SB:[^:]+]]: !stream.binding, %[[YB:[^:]+]]: !stream.binding, %[[M:[^:]+]]: index)
// CHECK-DAG: "stream.binding.subspan"(%[[XB]], %{{[^,]+}}, %[[M]]) : (!stream.binding, index, index) -> memref<?x4xf32>
// CHECK-DAG: "stream.binding.subspan"(%[[WB]], %{{[^)]+}}) : (!stream.binding, index) -> memref<1x2x32xi8>
// CHECK-DAG: "stream.binding.subspan"(%[[SB]], %{{[^)]+}}) : (!stream.binding, index) -> memref<1x2x32xf32>
// CHECK-DAG: "stream.binding.subspan"(%[[YB]], %{{[^,]+}}, %[[M]]) : (!stream.binding, index, index) -> memref<?x32xf32>
// CHECK-DAG: "stream.dispatch.workgroup.id"() {dimension = 0 : index} : () -> index
// The one-row body (m <= 1) reads each weight as the several-rows body does, (u - z') * s with
// the zero point (here the bias 8) taken off in i32, then one FMA: no f32 sum of x * u from
// which z' * sum x is taken (issue 45), no unsigned conversion.
// CHECK: scf.if
// CHECK-NOT: arith.uitofp
// CHECK: %[[SCALE:.*]] = vector.load %{{.*}} : memref<1x2x32xf32>, vector<8xf32>
// CHECK: %[[BYTES:.*]] = vector.load %{{.*}} : memref<1x2x32xi8>, vector<8xi8>
// CHECK-NEXT: %[[U:.*]] = arith.extui %[[BYTES]] : vector<8xi8> to vector<8xi32>
// CHECK-NEXT: %[[LOW:.*]] = arith.andi %[[U]], %{{.*}} : vector<8xi32>
// CHECK-NEXT: arith.shrui %[[U]], %{{.*}} : vector<8xi32>
// CHECK-NEXT: %[[Q:.*]] = arith.subi %[[LOW]], %{{.*}} : vector<8xi32>
// CHECK-NEXT: %[[QF:.*]] = arith.sitofp %[[Q]] : vector<8xi32> to vector<8xf32>
// CHECK-NEXT: %[[W:.*]] = arith.mulf %[[QF]], %[[SCALE]] : vector<8xf32>
// CHECK-NEXT: vector.fma %{{.*}}, %[[W]], %{{.*}} : vector<8xf32>
// CHECK-NOT: arith.uitofp
// CHECK: } else {
// CHECK: "stream.executable.end"() : () -> ()
// CHECK-NEXT: }) {sym_name = "[[K]]", sym_visibility = "private"} : () -> ()
// CHECK-LABEL: func.func @blocked_int4
// CHECK-SAME: (%[[AT:[^:]+]]: !torch.vtensor<[?,4],f32>)
// CHECK-NOT: onnx.MatMul
// CHECK-NOT: dq.onnx_dequantize_linear
// CHECK-DAG: %[[W:.*]] = arith.constant dense_resource<[[WBLOB:[^>]+]]> : tensor<1x2x32xi8>
// CHECK-DAG: %[[S:.*]] = arith.constant dense_resource<[[SBLOB:[^>]+]]> : tensor<1x2x32xf32>
// CHECK-DAG: %[[A:.*]] = "torch_c.to_builtin_tensor"(%[[AT]]) : (!torch.vtensor<[?,4],f32>) -> tensor<?x4xf32>
// CHECK-DAG: %[[ROWS:.*]] = tensor.dim %[[A]], %{{.*}} : tensor<?x4xf32>
// CHECK: %[[Y:.*]] = "flow.dispatch"(%[[ROWS]], %[[A]], %[[W]], %[[S]], %[[ROWS]], %[[ROWS]], %[[ROWS]]) {entry_points = [@[[K]]::@[[K]]], operandSegmentSizes = array<i32: 1, 4, 1, 1>, tied_operands = [-1 : index]} : (index, tensor<?x4xf32>, tensor<1x2x32xi8>, tensor<1x2x32xf32>, index, index, index) -> tensor<?x32xf32>
// CHECK-NEXT: %[[YT:.*]] = "torch_c.from_builtin_tensor"(%[[Y]]) : (tensor<?x32xf32>) -> !torch.vtensor<[?,32],f32>
// CHECK-NEXT: return %[[YT]]
// CHECK: [[WBLOB]]: "0x{{........}}76767676767676767676767676767676767676767676767676767676767676769898989898989898989898989898989898989898989898989898989898989898"
// CHECK: [[SBLOB]]: "0x{{........}}0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F"
func.func @blocked_int4(%a: !torch.vtensor<[?,4],f32>) -> !torch.vtensor<[?,32],f32> {
  %0 = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense_resource<w> : tensor<4x32xsi4>} : () -> !torch.vtensor<[4,32],si4>
  %s = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<2x32xf32>} : () -> !torch.vtensor<[2,32],f32>
  %1 = "torch.operator"(%0, %s) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 0 : si64, torch.onnx.block_size = 2 : si64} : (!torch.vtensor<[4,32],si4>, !torch.vtensor<[2,32],f32>) -> !torch.vtensor<[4,32],f32>
  %2 = "torch.operator"(%a, %1) <{name = "onnx.MatMul"}> : (!torch.vtensor<[?,4],f32>, !torch.vtensor<[4,32],f32>) -> !torch.vtensor<[?,32],f32>
  "func.return"(%2) : (!torch.vtensor<[?,32],f32>) -> ()
}
{-#
  dialect_resources: { builtin: { w: "0x08000000EEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF0000000000000000000000000000000011111111111111111111111111111111" } }
#-}

// -----

// uint4 with a zero point, one scale per column (one block of K = 4), A = [1, M, K]: A is
// collapsed to rows [M', K] for the dispatch and the product expanded back. Every w is 3 (u = 3:
// bytes 0x33), every zero point 5 (a byte each, no bias), every scale 0.25 (0x3E800000).
// CHECK-LABEL: func.func @uint4_zero_point_batch
// CHECK-DAG: %[[W:.*]] = arith.constant dense_resource<[[WBLOB:[^>]+]]> : tensor<1x2x32xi8>
// CHECK-DAG: %[[S:.*]] = arith.constant dense_resource<[[SBLOB:[^>]+]]> : tensor<1x1x32xf32>
// CHECK-DAG: %[[Z:.*]] = arith.constant dense_resource<[[ZBLOB:[^>]+]]> : tensor<1x1x32xi8>
// CHECK: %[[A:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : tensor<1x?x4xf32> into tensor<?x4xf32>
// CHECK: %[[ROWS:.*]] = tensor.dim %[[A]], %{{.*}} : tensor<?x4xf32>
// CHECK: %[[Y:.*]] = "flow.dispatch"(%[[ROWS]], %[[A]], %[[W]], %[[S]], %[[Z]], %[[ROWS]], %[[ROWS]], %[[ROWS]]) {entry_points = [@dq_matmul_u4_k4_n32_b4_z_l8::@dq_matmul_u4_k4_n32_b4_z_l8]
// CHECK: tensor.expand_shape %[[Y]] {{\[}}[0, 1], [2]] output_shape [1, %{{.*}}, 32] : tensor<?x32xf32> into tensor<1x?x32xf32>
// CHECK: [[WBLOB]]: "0x{{........}}33333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333333"
// CHECK: [[SBLOB]]: "0x{{........}}0000803E0000803E0000803E0000803E0000803E0000803E0000803E0000803E0000803E0000803E0000803E0000803E0000803E0000803E0000803E0000803E0000803E0000803E0000803E0000803E0000803E0000803E0000803E0000803E0000803E0000803E0000803E0000803E0000803E0000803E0000803E0000803E"
// CHECK: [[ZBLOB]]: "0x{{........}}0505050505050505050505050505050505050505050505050505050505050505"
func.func @uint4_zero_point_batch(%a: !torch.vtensor<[1,?,4],f32>) -> !torch.vtensor<[1,?,32],f32> {
  %0 = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<4x32xui4>} : () -> !torch.vtensor<[4,32],ui4>
  %s = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<32xf32>} : () -> !torch.vtensor<[32],f32>
  %z = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<5> : tensor<32xui4>} : () -> !torch.vtensor<[32],ui4>
  %1 = "torch.operator"(%0, %s, %z) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 1 : si64} : (!torch.vtensor<[4,32],ui4>, !torch.vtensor<[32],f32>, !torch.vtensor<[32],ui4>) -> !torch.vtensor<[4,32],f32>
  %2 = "torch.operator"(%a, %1) <{name = "onnx.MatMul"}> : (!torch.vtensor<[1,?,4],f32>, !torch.vtensor<[4,32],f32>) -> !torch.vtensor<[1,?,32],f32>
  "func.return"(%2) : (!torch.vtensor<[1,?,32],f32>) -> ()
}

// -----

// What the kernel does not take stays an onnx.MatMul (for torch-onnx-dq-matmul), with a remark:
// N = 16 is no multiple of its 32 columns; weights given as a graph input are no constant.
// REMARK: remark: MatMul not given dq's CPU kernel (fused contraction instead): N = 16 is not a multiple of 32 columns
// REMARK: remark: MatMul not given dq's CPU kernel (fused contraction instead): its weights are not a constant of the model
// CHECK-LABEL: func.func @not_taken
// CHECK-COUNT-2: onnx.MatMul
// CHECK-NOT: flow.dispatch
func.func @not_taken(%a: !torch.vtensor<[?,4],f32>, %w: !torch.vtensor<[4,32],si8>) -> (!torch.vtensor<[?,16],f32>, !torch.vtensor<[?,32],f32>) {
  %0 = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<4x16xsi8>} : () -> !torch.vtensor<[4,16],si8>
  %s = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %1 = "torch.operator"(%0, %s) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[4,16],si8>, !torch.vtensor<[],f32>) -> !torch.vtensor<[4,16],f32>
  %2 = "torch.operator"(%a, %1) <{name = "onnx.MatMul"}> : (!torch.vtensor<[?,4],f32>, !torch.vtensor<[4,16],f32>) -> !torch.vtensor<[?,16],f32>
  %3 = "torch.operator"(%w, %s) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[4,32],si8>, !torch.vtensor<[],f32>) -> !torch.vtensor<[4,32],f32>
  %4 = "torch.operator"(%a, %3) <{name = "onnx.MatMul"}> : (!torch.vtensor<[?,4],f32>, !torch.vtensor<[4,32],f32>) -> !torch.vtensor<[?,32],f32>
  "func.return"(%2, %4) : (!torch.vtensor<[?,16],f32>, !torch.vtensor<[?,32],f32>) -> ()
}

// -----

// A module tagged with AVX-512 (dq-target-features) gets the 16-lane kernel where N is a
// multiple of its 64 columns (N = 64: one workgroup of [1, K/2, 64] bytes, 16 x f32 vectors),
// and the 8-lane one where N is a multiple of 32 only (N = 32).
// CHECK-LABEL: module attributes {dq.avx512bw}
// CHECK-DAG: function_ref = @[[K16:dq_matmul_i8_k4_n64_b4_l16]]
// CHECK-DAG: function_ref = @[[K8:dq_matmul_i8_k4_n32_b4_l8]]
// CHECK-DAG: func.func @[[K16]]({{.*}}
// CHECK-DAG: vector.load %{{.*}} : memref<1x4x64xi8>, vector<16xi8>
// CHECK-DAG: vector.fma %{{.*}} : vector<16xf32>
// CHECK-LABEL: func.func @wide_and_narrow
// CHECK: "flow.dispatch"({{.*}}) {entry_points = [@[[K16]]::@[[K16]]]{{.*}} tensor<1x4x64xi8>
// CHECK: "flow.dispatch"({{.*}}) {entry_points = [@[[K8]]::@[[K8]]]{{.*}} tensor<1x4x32xi8>
module attributes {dq.avx512bw} {
func.func @wide_and_narrow(%a: !torch.vtensor<[?,4],f32>) -> (!torch.vtensor<[?,64],f32>, !torch.vtensor<[?,32],f32>) {
  %0 = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<4x64xsi8>} : () -> !torch.vtensor<[4,64],si8>
  %1 = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<4x32xsi8>} : () -> !torch.vtensor<[4,32],si8>
  %s = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %2 = "torch.operator"(%0, %s) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[4,64],si8>, !torch.vtensor<[],f32>) -> !torch.vtensor<[4,64],f32>
  %3 = "torch.operator"(%a, %2) <{name = "onnx.MatMul"}> : (!torch.vtensor<[?,4],f32>, !torch.vtensor<[4,64],f32>) -> !torch.vtensor<[?,64],f32>
  %4 = "torch.operator"(%1, %s) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[4,32],si8>, !torch.vtensor<[],f32>) -> !torch.vtensor<[4,32],f32>
  %5 = "torch.operator"(%a, %4) <{name = "onnx.MatMul"}> : (!torch.vtensor<[?,4],f32>, !torch.vtensor<[4,32],f32>) -> !torch.vtensor<[?,32],f32>
  "func.return"(%3, %5) : (!torch.vtensor<[?,64],f32>, !torch.vtensor<[?,32],f32>) -> ()
}
}
