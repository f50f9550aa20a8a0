// RUN: dequant-opt %s --dq-to-linalg --dq-checks-to-assert | FileCheck %s

// dq-checks-to-assert (passes/checks_to_assert.py): each run-time check dq-to-linalg reports through
// dequant_report_error becomes a cf.assert with the check's words; the declaration goes.

// CHECK-NOT: dequant_report_error
// CHECK-LABEL: func.func @dynamic_rows
// CHECK: %[[DIM:.*]] = tensor.dim %{{.*}}, %{{.*}} : tensor<?x32xi8>
// CHECK: cf.assert %{{.*}}, "dequantize: dim 0 of the scale does not match output dim 0, which it is read along"
// CHECK-NOT: func.call
// CHECK: linalg.generic
func.func @dynamic_rows(%x: tensor<?x32xi8>, %s: tensor<4x2xf32>) -> tensor<?x32xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s) {axis = 1 : i64, block_size = 16 : i64} : (tensor<?x32xi8>, tensor<4x2xf32>) -> tensor<?x32xf32>
  return %y : tensor<?x32xf32>
}
