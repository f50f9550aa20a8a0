// dq ops are IRDL ops: they have the generic syntax only. A parse failure that MLIR reports
// without a diagnostic still fails the tool with an error.
// RUN: not dequant-opt %s 2>&1 | FileCheck %s
// CHECK: error: Unable to parse module assembly

func.func @f(%x: tensor<8xi8>, %s: tensor<f32>) -> tensor<8xf32> {
  %y = dq.onnx_dequantize_linear %x, %s : (tensor<8xi8>, tensor<f32>) -> tensor<8xf32>
  return %y : tensor<8xf32>
}
