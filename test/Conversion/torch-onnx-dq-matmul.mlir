// RUN: dequant-opt %s --allow-unregistered-dialect --split-input-file --torch-onnx-to-dq --torch-onnx-dq-matmul | FileCheck %s

// torch-onnx-dq-matmul (passes/torch_onnx_dq_matmul.py): an `onnx.MatMul(%a, %w)` whose %w is
// torch_c.from_builtin_tensor of a dq op on 2-D static x [K, N] (used only as the second operand
// of MatMuls), and whose %a is [b..., M, K] of the same element type, becomes a canonical
// dq.dequantize and one linalg.generic contraction over (b..., m, n, k...) on builtin tensors.
// Weights blocked along K with B dividing K are viewed as [K/B, B, N] (two reduction loops ko, ki;
// %a expanded to [..., K/B, B]); a packed constant x is rewritten N-major, [N, K/B, B]. Otherwise
// x stays [K, N] with one reduction loop. Anything else stays an onnx.MatMul.

// Blocked int4 constant weights, K = 8, N = 4, block 2 along K: the dequantize reads the packed
// N-major copy [N, K/B, B] = [4, 4, 2], scale [K/B, N] read at (ko, n) = (d1, d0); the contraction
// runs over (m, n, ko, ki) with a [M, K/B, B] and w [N, K/B, B]. The transposed bytes: x[k][n]
// from the row-major nibbles 0..15, 1,0,3,2,... (see the blob), column n = 0 is
// 0,4,8,12,1,5,9,13 -> 40 C8 51 D9.
// CHECK-DAG: #[[SCALE:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d1, d0)>
// CHECK-DAG: #[[A:map[0-9]*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-DAG: #[[W:map[0-9]*]] = affine_map<(d0, d1, d2, d3) -> (d1, d2, d3)>
// CHECK-DAG: #[[Y:map[0-9]*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
// CHECK-LABEL: func.func @blocked_int4_constant
// CHECK-SAME: (%[[AT:[^:]+]]: !torch.vtensor<[?,8],f32>, %[[ST:[^:]+]]: !torch.vtensor<[4,4],f32>)
// CHECK-NOT: onnx.MatMul
// CHECK-NOT: dq.onnx_dequantize_linear
// CHECK-DAG: %[[S:.*]] = "torch_c.to_builtin_tensor"(%[[ST]]) : (!torch.vtensor<[4,4],f32>) -> tensor<4x4xf32>
// CHECK-DAG: %[[AB:.*]] = "torch_c.to_builtin_tensor"(%[[AT]]) : (!torch.vtensor<[?,8],f32>) -> tensor<?x8xf32>
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[M:.*]] = tensor.dim %[[AB]], %[[C0]] : tensor<?x8xf32>
// CHECK-DAG: %[[XT:.*]] = "dq.unpack"(%[[NK:[^)]+]]) : (tensor<16xi8>) -> tensor<4x4x2xi4>
// CHECK-DAG: %[[NK]] = arith.constant dense_resource<[[NKBLOB:[^>]+]]> : tensor<16xi8>
// CHECK-DAG: %[[WT:.*]] = "dq.dequantize"(%[[XT]], %[[S]]) {scale_map = #[[SCALE]], unpack = "none", zero_point_map = #[[SCALE]], zero_point_mode = "subtract"} : (tensor<4x4x2xi4>, tensor<4x4xf32>) -> tensor<4x4x2xf32>
// CHECK-DAG: %[[AE:.*]] = tensor.expand_shape %[[AB]] {{\[}}[0], [1, 2]] output_shape [%[[M]], 4, 2] : tensor<?x8xf32> into tensor<?x4x2xf32>
// CHECK-DAG: %[[E:.*]] = tensor.empty(%[[M]]) : tensor<?x4xf32>
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E]] : tensor<?x4xf32>) -> tensor<?x4xf32>
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[A]], #[[W]], #[[Y]]], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
// CHECK-SAME: ins(%[[AE]], %[[WT]] : tensor<?x4x2xf32>, tensor<4x4x2xf32>) outs(%[[INIT]] : tensor<?x4xf32>)
// CHECK-NEXT: ^bb0(%[[AV:[^:]+]]: f32, %[[WV:[^:]+]]: f32, %[[ACC:[^:]+]]: f32):
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[AV]], %[[WV]] : f32
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[ACC]], %[[P]] : f32
// CHECK-NEXT: linalg.yield %[[SUM]] : f32
// CHECK-NEXT: } -> tensor<?x4xf32>
// CHECK-NEXT: %[[RT:.*]] = "torch_c.from_builtin_tensor"(%[[R]]) : (tensor<?x4xf32>) -> !torch.vtensor<[?,4],f32>
// CHECK-NEXT: return %[[RT]] : !torch.vtensor<[?,4],f32>
// CHECK: [[NKBLOB]]: "0x{{........}}40C851D951D940C862EA73FB73FB62EA"
func.func @blocked_int4_constant(%a: !torch.vtensor<[?,8],f32>, %s: !torch.vtensor<[4,4],f32>) -> !torch.vtensor<[?,4],f32> {
  %0 = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense_resource<w> : tensor<8x4xsi4>} : () -> !torch.vtensor<[8,4],si4>
  %1 = "torch.operator"(%0, %s) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 0 : si64, torch.onnx.block_size = 2 : si64} : (!torch.vtensor<[8,4],si4>, !torch.vtensor<[4,4],f32>) -> !torch.vtensor<[8,4],f32>
  %2 = "torch.operator"(%a, %1) <{name = "onnx.MatMul"}> : (!torch.vtensor<[?,8],f32>, !torch.vtensor<[8,4],f32>) -> !torch.vtensor<[?,4],f32>
  "func.return"(%2) : (!torch.vtensor<[?,4],f32>) -> ()
}
{-#
  dialect_resources: { builtin: { w: "0x080000001032547698badcfe0123456789abcdef" } }
#-}

// -----

// Blocked uint4 constant weights with a packed uint4 zero point, block 4: the view is
// [N, K/B, B] = [4, 2, 4]; the zero point [K/B, N] is read through the same map as the scale.
// CHECK-DAG: #[[SCALE:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d1, d0)>
// CHECK-DAG: #[[A:map[0-9]*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-DAG: #[[W:map[0-9]*]] = affine_map<(d0, d1, d2, d3) -> (d1, d2, d3)>
// CHECK-LABEL: func.func @blocked_uint4_constant_zero_point
// CHECK-NOT: onnx.MatMul
// CHECK-DAG: %[[ZP:.*]] = "dq.unpack"(%{{.*}}) : (tensor<4xi8>) -> tensor<2x4xui4>
// CHECK-DAG: %[[XT:.*]] = "dq.unpack"(%{{.*}}) : (tensor<16xi8>) -> tensor<4x2x4xui4>
// CHECK-DAG: %[[WT:.*]] = "dq.dequantize"(%[[XT]], %{{.*}}, %[[ZP]]) {scale_map = #[[SCALE]], unpack = "none", zero_point_map = #[[SCALE]], zero_point_mode = "subtract"} : (tensor<4x2x4xui4>, tensor<2x4xf32>, tensor<2x4xui4>) -> tensor<4x2x4xf32>
// CHECK-DAG: %[[AE:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2]] output_shape [1, 2, 4] : tensor<1x8xf32> into tensor<1x2x4xf32>
// CHECK: linalg.generic {indexing_maps = [#[[A]], #[[W]], #{{map[0-9]*}}], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
// CHECK-SAME: ins(%[[AE]], %[[WT]] : tensor<1x2x4xf32>, tensor<4x2x4xf32>) outs(%{{.*}} : tensor<1x4xf32>)
func.func @blocked_uint4_constant_zero_point(%a: !torch.vtensor<[1,8],f32>, %s: !torch.vtensor<[2,4],f32>) -> !torch.vtensor<[1,4],f32> {
  %0 = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense_resource<w> : tensor<8x4xui4>} : () -> !torch.vtensor<[8,4],ui4>
  %z = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<8> : tensor<2x4xui4>} : () -> !torch.vtensor<[2,4],ui4>
  %1 = "torch.operator"(%0, %s, %z) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 0 : si64, torch.onnx.block_size = 4 : si64} : (!torch.vtensor<[8,4],ui4>, !torch.vtensor<[2,4],f32>, !torch.vtensor<[2,4],ui4>) -> !torch.vtensor<[8,4],f32>
  %2 = "torch.operator"(%a, %1) <{name = "onnx.MatMul"}> : (!torch.vtensor<[1,8],f32>, !torch.vtensor<[8,4],f32>) -> !torch.vtensor<[1,4],f32>
  "func.return"(%2) : (!torch.vtensor<[1,4],f32>) -> ()
}
{-#
  dialect_resources: { builtin: { w: "0x080000001032547698badcfe0123456789abcdef" } }
#-}

// -----

// Per-axis weights along N (not blocked): x stays [K, N], scale and zero point read at n; three
// loops (m, n, k), one reduction.
// CHECK-DAG: #[[AXIS:map[0-9]*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[A:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[W:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-DAG: #[[Y:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @per_axis
// CHECK-SAME: (%[[AT:[^:]+]]: !torch.vtensor<[2,8],f32>, %[[XT:[^:]+]]: !torch.vtensor<[8,4],si8>, %[[ST:[^:]+]]: !torch.vtensor<[4],f32>, %[[ZT:[^:]+]]: !torch.vtensor<[4],si8>)
// CHECK-NOT: onnx.MatMul
// CHECK-NOT: dq.onnx_dequantize_linear
// CHECK-DAG: %[[X:.*]] = "torch_c.to_builtin_tensor"(%[[XT]]) : (!torch.vtensor<[8,4],si8>) -> tensor<8x4xi8>
// CHECK-DAG: %[[S:.*]] = "torch_c.to_builtin_tensor"(%[[ST]]) : (!torch.vtensor<[4],f32>) -> tensor<4xf32>
// CHECK-DAG: %[[Z:.*]] = "torch_c.to_builtin_tensor"(%[[ZT]]) : (!torch.vtensor<[4],si8>) -> tensor<4xi8>
// CHECK-DAG: %[[AB:.*]] = "torch_c.to_builtin_tensor"(%[[AT]]) : (!torch.vtensor<[2,8],f32>) -> tensor<2x8xf32>
// CHECK-DAG: %[[WV:.*]] = "dq.dequantize"(%[[X]], %[[S]], %[[Z]]) {scale_map = #[[AXIS]], unpack = "none", zero_point_map = #[[AXIS]], zero_point_mode = "subtract"} : (tensor<8x4xi8>, tensor<4xf32>, tensor<4xi8>) -> tensor<8x4xf32>
// CHECK-DAG: %[[E:.*]] = tensor.empty() : tensor<2x4xf32>
// CHECK-DAG: %[[INIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NOT: tensor.expand_shape
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[A]], #[[W]], #[[Y]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[AB]], %[[WV]] : tensor<2x8xf32>, tensor<8x4xf32>) outs(%[[INIT]] : tensor<2x4xf32>)
// CHECK: arith.mulf
// CHECK-NEXT: arith.addf
// CHECK: "torch_c.from_builtin_tensor"(%[[R]]) : (tensor<2x4xf32>) -> !torch.vtensor<[2,4],f32>
func.func @per_axis(%a: !torch.vtensor<[2,8],f32>, %x: !torch.vtensor<[8,4],si8>, %s: !torch.vtensor<[4],f32>, %z: !torch.vtensor<[4],si8>) -> !torch.vtensor<[2,4],f32> {
  %1 = "torch.operator"(%x, %s, %z) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 1 : si64} : (!torch.vtensor<[8,4],si8>, !torch.vtensor<[4],f32>, !torch.vtensor<[4],si8>) -> !torch.vtensor<[8,4],f32>
  %2 = "torch.operator"(%a, %1) <{name = "onnx.MatMul"}> : (!torch.vtensor<[2,8],f32>, !torch.vtensor<[8,4],f32>) -> !torch.vtensor<[2,4],f32>
  "func.return"(%2) : (!torch.vtensor<[2,4],f32>) -> ()
}

// -----

// Batched A [3, ?, 8] and blocked int4 weights that are a function argument (not a constant):
// x is expand_shape'd to [K/B, B, N] = [2, 4, 4] (no transposed copy), scale and zero point read
// at (ko, n) = (d0, d2); five loops (b, m, n, ko, ki), A expanded to [3, ?, 2, 4].
// CHECK-DAG: #[[SCALE:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[A:map[0-9]*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
// CHECK-DAG: #[[W:map[0-9]*]] = affine_map<(d0, d1, d2, d3, d4) -> (d3, d4, d2)>
// CHECK-DAG: #[[Y:map[0-9]*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @batched_blocked_arguments
// CHECK-NOT: onnx.MatMul
// CHECK-NOT: dq.unpack
// CHECK-DAG: %[[X:.*]] = "torch_c.to_builtin_tensor"(%{{.*}}) : (!torch.vtensor<[8,4],si4>) -> tensor<8x4xi4>
// CHECK-DAG: %[[AB:.*]] = "torch_c.to_builtin_tensor"(%{{.*}}) : (!torch.vtensor<[3,?,8],f32>) -> tensor<3x?x8xf32>
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[M:.*]] = tensor.dim %[[AB]], %[[C1]] : tensor<3x?x8xf32>
// CHECK-DAG: %[[XE:.*]] = tensor.expand_shape %[[X]] {{\[}}[0, 1], [2]] output_shape [2, 4, 4] : tensor<8x4xi4> into tensor<2x4x4xi4>
// CHECK-DAG: %[[WV:.*]] = "dq.dequantize"(%[[XE]], %{{.*}}, %{{.*}}) {scale_map = #[[SCALE]], unpack = "none", zero_point_map = #[[SCALE]], zero_point_mode = "subtract"} : (tensor<2x4x4xi4>, tensor<2x4xf32>, tensor<2x4xi4>) -> tensor<2x4x4xf32>
// CHECK-DAG: %[[AE:.*]] = tensor.expand_shape %[[AB]] {{\[}}[0], [1], [2, 3]] output_shape [3, %[[M]], 2, 4] : tensor<3x?x8xf32> into tensor<3x?x2x4xf32>
// CHECK-DAG: %[[E:.*]] = tensor.empty(%[[M]]) : tensor<3x?x4xf32>
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[A]], #[[W]], #[[Y]]], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
// CHECK-SAME: ins(%[[AE]], %[[WV]] : tensor<3x?x2x4xf32>, tensor<2x4x4xf32>) outs(%{{.*}} : tensor<3x?x4xf32>)
// CHECK: "torch_c.from_builtin_tensor"(%[[R]]) : (tensor<3x?x4xf32>) -> !torch.vtensor<[3,?,4],f32>
func.func @batched_blocked_arguments(%a: !torch.vtensor<[3,?,8],f32>, %x: !torch.vtensor<[8,4],si4>, %s: !torch.vtensor<[2,4],f32>, %z: !torch.vtensor<[2,4],si4>) -> !torch.vtensor<[3,?,4],f32> {
  %1 = "torch.operator"(%x, %s, %z) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 0 : si64, torch.onnx.block_size = 4 : si64} : (!torch.vtensor<[8,4],si4>, !torch.vtensor<[2,4],f32>, !torch.vtensor<[2,4],si4>) -> !torch.vtensor<[8,4],f32>
  %2 = "torch.operator"(%a, %1) <{name = "onnx.MatMul"}> : (!torch.vtensor<[3,?,8],f32>, !torch.vtensor<[8,4],f32>) -> !torch.vtensor<[3,?,4],f32>
  "func.return"(%2) : (!torch.vtensor<[3,?,4],f32>) -> ()
}

// -----

// A block that does not divide K (K = 6, block 4): torch-onnx-to-dq splits the partial last
// block off (two dq ops joined by tensor.concat: IREE cannot tile a floordiv read of a partial
// block inside a contraction), so the weights are no dq op and the MatMul stays.
// CHECK-LABEL: func.func @block_not_dividing_k
// CHECK: tensor.concat dim(0) %{{.*}}, %{{.*}} : (tensor<4x4xf32>, tensor<2x4xf32>) -> tensor<6x4xf32>
// CHECK-NOT: linalg.generic
// CHECK: "onnx.MatMul"
func.func @block_not_dividing_k(%a: !torch.vtensor<[2,6],f32>, %x: !torch.vtensor<[6,4],si8>, %s: !torch.vtensor<[2,4],f32>) -> !torch.vtensor<[2,4],f32> {
  %1 = "torch.operator"(%x, %s) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 0 : si64, torch.onnx.block_size = 4 : si64} : (!torch.vtensor<[6,4],si8>, !torch.vtensor<[2,4],f32>) -> !torch.vtensor<[6,4],f32>
  %2 = "torch.operator"(%a, %1) <{name = "onnx.MatMul"}> : (!torch.vtensor<[2,6],f32>, !torch.vtensor<[6,4],f32>) -> !torch.vtensor<[2,4],f32>
  "func.return"(%2) : (!torch.vtensor<[2,4],f32>) -> ()
}

// -----

// Weights read by two MatMuls (both as the second operand): both are rewritten, each with its
// own dequantize; the dq.onnx_dequantize_linear no one reads any more is erased.
// CHECK-LABEL: func.func @two_matmuls
// CHECK-NOT: onnx.MatMul
// CHECK-NOT: dq.onnx_dequantize_linear
// CHECK: "dq.dequantize"
// CHECK: linalg.generic
// CHECK-SAME: tensor<2x8xf32>, tensor<8x4xf32>
// CHECK: "dq.dequantize"
// CHECK: linalg.generic
// CHECK-SAME: tensor<5x8xf32>, tensor<8x4xf32>
// CHECK-NOT: onnx.MatMul
// CHECK-NOT: dq.onnx_dequantize_linear
// CHECK: return
func.func @two_matmuls(%a: !torch.vtensor<[2,8],f32>, %c: !torch.vtensor<[5,8],f32>, %x: !torch.vtensor<[8,4],si8>, %s: !torch.vtensor<[4],f32>) -> (!torch.vtensor<[2,4],f32>, !torch.vtensor<[5,4],f32>) {
  %1 = "torch.operator"(%x, %s) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 1 : si64} : (!torch.vtensor<[8,4],si8>, !torch.vtensor<[4],f32>) -> !torch.vtensor<[8,4],f32>
  %2 = "torch.operator"(%a, %1) <{name = "onnx.MatMul"}> : (!torch.vtensor<[2,8],f32>, !torch.vtensor<[8,4],f32>) -> !torch.vtensor<[2,4],f32>
  %3 = "torch.operator"(%c, %1) <{name = "onnx.MatMul"}> : (!torch.vtensor<[5,8],f32>, !torch.vtensor<[8,4],f32>) -> !torch.vtensor<[5,4],f32>
  "func.return"(%2, %3) : (!torch.vtensor<[2,4],f32>, !torch.vtensor<[5,4],f32>) -> ()
}

// -----

// Not matched: the dequantized weights are also read by an onnx.Relu.
// CHECK-LABEL: func.func @weights_used_by_another_op
// CHECK-NOT: dq.dequantize
// CHECK-NOT: linalg.generic
// CHECK: %[[Y:.*]] = "dq.onnx_dequantize_linear"
// CHECK: %[[W:.*]] = "torch_c.from_builtin_tensor"(%[[Y]])
// CHECK: "torch.operator"(%{{.*}}, %[[W]]) <{name = "onnx.MatMul"}>
// CHECK: "torch.operator"(%[[W]]) <{name = "onnx.Relu"}>
func.func @weights_used_by_another_op(%a: !torch.vtensor<[2,8],f32>, %x: !torch.vtensor<[8,4],si8>, %s: !torch.vtensor<[4],f32>) -> (!torch.vtensor<[2,4],f32>, !torch.vtensor<[8,4],f32>) {
  %1 = "torch.operator"(%x, %s) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 1 : si64} : (!torch.vtensor<[8,4],si8>, !torch.vtensor<[4],f32>) -> !torch.vtensor<[8,4],f32>
  %2 = "torch.operator"(%a, %1) <{name = "onnx.MatMul"}> : (!torch.vtensor<[2,8],f32>, !torch.vtensor<[8,4],f32>) -> !torch.vtensor<[2,4],f32>
  %3 = "torch.operator"(%1) <{name = "onnx.Relu"}> : (!torch.vtensor<[8,4],f32>) -> !torch.vtensor<[8,4],f32>
  "func.return"(%2, %3) : (!torch.vtensor<[2,4],f32>, !torch.vtensor<[8,4],f32>) -> ()
}

// -----

// Not matched: the dequantized tensor is the MatMul's first operand.
// CHECK-LABEL: func.func @weights_first_operand
// CHECK-NOT: dq.dequantize
// CHECK-NOT: linalg.generic
// CHECK: %[[Y:.*]] = "dq.onnx_dequantize_linear"
// CHECK: %[[W:.*]] = "torch_c.from_builtin_tensor"(%[[Y]])
// CHECK: "torch.operator"(%[[W]], %{{.*}}) <{name = "onnx.MatMul"}>
func.func @weights_first_operand(%b: !torch.vtensor<[4,2],f32>, %x: !torch.vtensor<[8,4],si8>, %s: !torch.vtensor<[4],f32>) -> !torch.vtensor<[8,2],f32> {
  %1 = "torch.operator"(%x, %s) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 1 : si64} : (!torch.vtensor<[8,4],si8>, !torch.vtensor<[4],f32>) -> !torch.vtensor<[8,4],f32>
  %2 = "torch.operator"(%1, %b) <{name = "onnx.MatMul"}> : (!torch.vtensor<[8,4],f32>, !torch.vtensor<[4,2],f32>) -> !torch.vtensor<[8,2],f32>
  "func.return"(%2) : (!torch.vtensor<[8,2],f32>) -> ()
}

// -----

// Not matched: A's K is dynamic.
// CHECK-LABEL: func.func @dynamic_k
// CHECK-NOT: linalg.generic
// CHECK: "dq.onnx_dequantize_linear"
// CHECK: <{name = "onnx.MatMul"}>
func.func @dynamic_k(%a: !torch.vtensor<[2,?],f32>, %x: !torch.vtensor<[8,4],si8>, %s: !torch.vtensor<[4],f32>) -> !torch.vtensor<[2,4],f32> {
  %1 = "torch.operator"(%x, %s) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 1 : si64} : (!torch.vtensor<[8,4],si8>, !torch.vtensor<[4],f32>) -> !torch.vtensor<[8,4],f32>
  %2 = "torch.operator"(%a, %1) <{name = "onnx.MatMul"}> : (!torch.vtensor<[2,?],f32>, !torch.vtensor<[8,4],f32>) -> !torch.vtensor<[2,4],f32>
  "func.return"(%2) : (!torch.vtensor<[2,4],f32>) -> ()
}

// -----

// Not matched: A's element type (f16) is not the dequantized weights' (f32).
// CHECK-LABEL: func.func @a_element_type_differs
// CHECK-NOT: linalg.generic
// CHECK: "dq.onnx_dequantize_linear"
// CHECK: <{name = "onnx.MatMul"}>
func.func @a_element_type_differs(%a: !torch.vtensor<[2,8],f16>, %x: !torch.vtensor<[8,4],si8>, %s: !torch.vtensor<[4],f32>) -> !torch.vtensor<[2,4],f32> {
  %1 = "torch.operator"(%x, %s) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 1 : si64} : (!torch.vtensor<[8,4],si8>, !torch.vtensor<[4],f32>) -> !torch.vtensor<[8,4],f32>
  %2 = "torch.operator"(%a, %1) <{name = "onnx.MatMul"}> : (!torch.vtensor<[2,8],f16>, !torch.vtensor<[8,4],f32>) -> !torch.vtensor<[2,4],f32>
  "func.return"(%2) : (!torch.vtensor<[2,4],f32>) -> ()
}

// -----

// Not matched: the result's element type (si32) is not the weights' (f32); an invalid MatMul is
// left to the compiler's own checks (found by the stage fuzzer: it was an internal error).
// CHECK-LABEL: func.func @result_element_type_differs
// CHECK-NOT: linalg.generic
// CHECK: "dq.onnx_dequantize_linear"
// CHECK: <{name = "onnx.MatMul"}>
func.func @result_element_type_differs(%a: !torch.vtensor<[2,8],f32>, %x: !torch.vtensor<[8,4],si8>, %s: !torch.vtensor<[4],f32>) -> !torch.vtensor<[2,4],si32> {
  %1 = "torch.operator"(%x, %s) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 1 : si64} : (!torch.vtensor<[8,4],si8>, !torch.vtensor<[4],f32>) -> !torch.vtensor<[8,4],f32>
  %2 = "torch.operator"(%a, %1) <{name = "onnx.MatMul"}> : (!torch.vtensor<[2,8],f32>, !torch.vtensor<[8,4],f32>) -> !torch.vtensor<[2,4],si32>
  "func.return"(%2) : (!torch.vtensor<[2,4],si32>) -> ()
}

// -----

// Not matched: A of rank 1 (a vector-matrix MatMul).
// CHECK-LABEL: func.func @a_rank1
// CHECK-NOT: linalg.generic
// CHECK: "dq.onnx_dequantize_linear"
// CHECK: <{name = "onnx.MatMul"}>
func.func @a_rank1(%a: !torch.vtensor<[8],f32>, %x: !torch.vtensor<[8,4],si8>, %s: !torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32> {
  %1 = "torch.operator"(%x, %s) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 1 : si64} : (!torch.vtensor<[8,4],si8>, !torch.vtensor<[4],f32>) -> !torch.vtensor<[8,4],f32>
  %2 = "torch.operator"(%a, %1) <{name = "onnx.MatMul"}> : (!torch.vtensor<[8],f32>, !torch.vtensor<[8,4],f32>) -> !torch.vtensor<[4],f32>
  "func.return"(%2) : (!torch.vtensor<[4],f32>) -> ()
}

// -----

// Not matched: weights with a dynamic dim.
// CHECK-LABEL: func.func @weights_dynamic
// CHECK-NOT: linalg.generic
// CHECK: "dq.onnx_dequantize_linear"
// CHECK: <{name = "onnx.MatMul"}>
func.func @weights_dynamic(%a: !torch.vtensor<[2,8],f32>, %x: !torch.vtensor<[8,?],si8>, %s: !torch.vtensor<[],f32>) -> !torch.vtensor<[2,?],f32> {
  %1 = "torch.operator"(%x, %s) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[8,?],si8>, !torch.vtensor<[],f32>) -> !torch.vtensor<[8,?],f32>
  %2 = "torch.operator"(%a, %1) <{name = "onnx.MatMul"}> : (!torch.vtensor<[2,8],f32>, !torch.vtensor<[8,?],f32>) -> !torch.vtensor<[2,?],f32>
  "func.return"(%2) : (!torch.vtensor<[2,?],f32>) -> ()
}

// -----

// Not matched: a MatMul of plain float tensors.
// CHECK-LABEL: func.func @no_dequantize
// CHECK-NOT: torch_c.
// CHECK-NOT: linalg.generic
// CHECK: <{name = "onnx.MatMul"}>
func.func @no_dequantize(%a: !torch.vtensor<[2,8],f32>, %b: !torch.vtensor<[8,4],f32>) -> !torch.vtensor<[2,4],f32> {
  %2 = "torch.operator"(%a, %b) <{name = "onnx.MatMul"}> : (!torch.vtensor<[2,8],f32>, !torch.vtensor<[8,4],f32>) -> !torch.vtensor<[2,4],f32>
  "func.return"(%2) : (!torch.vtensor<[2,4],f32>) -> ()
}

// -----

// Packed constant weights read by two MatMuls: one transposed copy of the bytes, read by both,
// and no copy of the original bytes left behind.
// CHECK-LABEL: func.func @shared_packed_constant
// CHECK-COUNT-1: arith.constant dense_resource
// CHECK-NOT: arith.constant dense_resource
// CHECK: return
func.func @shared_packed_constant(%a: !torch.vtensor<[2,4],f32>, %c: !torch.vtensor<[3,4],f32>, %s: !torch.vtensor<[2,2],f32>) -> (!torch.vtensor<[2,2],f32>, !torch.vtensor<[3,2],f32>) {
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<[[1, -2], [3, -4], [5, -6], [7, -8]]> : tensor<4x2xsi4>} : () -> !torch.vtensor<[4,2],si4>
  %1 = "torch.operator"(%w, %s) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 0 : si64, torch.onnx.block_size = 2 : si64} : (!torch.vtensor<[4,2],si4>, !torch.vtensor<[2,2],f32>) -> !torch.vtensor<[4,2],f32>
  %2 = "torch.operator"(%a, %1) <{name = "onnx.MatMul"}> : (!torch.vtensor<[2,4],f32>, !torch.vtensor<[4,2],f32>) -> !torch.vtensor<[2,2],f32>
  %3 = "torch.operator"(%c, %1) <{name = "onnx.MatMul"}> : (!torch.vtensor<[3,4],f32>, !torch.vtensor<[4,2],f32>) -> !torch.vtensor<[3,2],f32>
  "func.return"(%2, %3) : (!torch.vtensor<[2,2],f32>, !torch.vtensor<[3,2],f32>) -> ()
}
