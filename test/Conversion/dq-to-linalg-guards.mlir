// RUN: dequant-opt %s --dq-to-linalg --split-input-file | FileCheck %s
// Dynamic scale and zero point dims are checked against the output dims their maps read
// (cf.assert), so native code called without the Python checks (e.g. from C) never reads out
// of bounds; dims the verifier saw statically are not checked again.

// CHECK-LABEL: func.func @per_axis_dynamic
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[D:.*]] = tensor.dim %arg0, %[[C1]]
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[S:.*]] = tensor.dim %arg1, %[[C0]]
// CHECK: %[[OK:.*]] = arith.cmpi eq, %[[S]], %[[D]] : index
// CHECK: cf.assert %[[OK]], "dq: dim 0 of a scale or zero point does not match the output dim 1 it is read along"
// CHECK: %[[Z:.*]] = tensor.dim %arg2, %[[C0]]
// CHECK: arith.cmpi eq, %[[Z]], %[[D]] : index
// CHECK: cf.assert
// CHECK: linalg.generic
func.func @per_axis_dynamic(%x: tensor<4x?xi8>, %s: tensor<?xf32>, %z: tensor<?xi8>) -> tensor<4x?xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s, %z) {axis = 1 : i64} : (tensor<4x?xi8>, tensor<?xf32>, tensor<?xi8>) -> tensor<4x?xf32>
  return %y : tensor<4x?xf32>
}

// -----

// CHECK-LABEL: func.func @blocked_dynamic
// CHECK-DAG: %[[D:.*]] = tensor.dim %arg0, %{{.*}} : tensor<8x?xi4>
// CHECK-DAG: %[[S:.*]] = tensor.dim %arg1, %{{.*}} : tensor<8x?xf16>
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK: %[[BLOCKS:.*]] = arith.ceildivui %[[D]], %[[C32]] : index
// CHECK: arith.cmpi eq, %[[S]], %[[BLOCKS]] : index
// CHECK: cf.assert
func.func @blocked_dynamic(%x: tensor<8x?xi4>, %s: tensor<8x?xf16>) -> tensor<8x?xf16> {
  %y = "dq.onnx_dequantize_linear"(%x, %s) {axis = 1 : i64, block_size = 32 : i64} : (tensor<8x?xi4>, tensor<8x?xf16>) -> tensor<8x?xf16>
  return %y : tensor<8x?xf16>
}

// -----

// CHECK-LABEL: func.func @static
// CHECK-NOT: cf.assert
// CHECK: linalg.generic
func.func @static(%x: tensor<4x6xi8>, %s: tensor<6xf32>) -> tensor<4x6xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s) : (tensor<4x6xi8>, tensor<6xf32>) -> tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}
